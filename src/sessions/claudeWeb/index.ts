// Claude Code on the web as a backend (PROTOCOL.md section 9). What the extension uses; see README.md.
export {
  CLAUDE_WEB_LIFECYCLE,
  ClaudeWebBackend,
  DECISION_REFUSAL_STATUSES,
  DEFAULT_CLOUD_MODEL,
  attachClaudeWebBackend,
  claudeWebFailureOf,
  createClaudeWebBackend,
  listEnvironments,
} from './backend';
export type { ClaudeWebBackendOptions, ClaudeWebBackendResult } from './backend';
export { checkClaudeWebEligibility, checkClaudeWebLogin } from './eligibility';
export type { ClaudeWebAccessOptions, ClaudeWebEligibility, ClaudeWebLogin, EligibilityOptions } from './eligibility';
export { chooseEnvironment, describeEnvironment } from './environment';
export type { Environment } from './environment';
export { CLAUDE_CODE_WEB_URL, CLAUDE_GITHUB_APP_URL, CLAUDE_WEB_FAILURE_REASONS, ClaudeWebError } from './errors';
export type { ClaudeWebFailureReason, ClaudeWebRemedy } from './errors';
export { readClaudeCredentials, credentialsFilePath, claudeConfigDir, keychainService, secureStorageDir, SESSIONS_SCOPE } from './credentials';
export { detectGitRepository, parseRemoteUrl } from './git';
export type { GitRepositoryInfo } from './git';
export { buildLaunchRequest, claudeSessionLink, completeLaunchRequest, outcomeBranch, ultraplanTitle } from './launch';

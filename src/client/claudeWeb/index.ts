// Claude Code on the web as a backend (docs/protocol.md section 9). What the extension uses; see
// README.md. The backend itself (backend.ts) is imported with `await import()` where it is first
// used, so it is a chunk of its own: a value exported here from backend.ts, eligibility.ts,
// credentials.ts or accountApi.ts would put it back into the extension's first load.
export type { ClaudeWebBackend, ClaudeWebBackendOptions, ClaudeWebBackendResult } from './backend';
export type { ClaudeWebAccessOptions, ClaudeWebEligibility, ClaudeWebLogin, EligibilityOptions } from './eligibility';
export { chooseEnvironment, describeEnvironment } from './environment';
export type { Environment } from './environment';
export { CLAUDE_CODE_WEB_URL, CLAUDE_GITHUB_APP_URL, CLAUDE_WEB_FAILURE_REASONS, ClaudeWebError, claudeWebFailureOf } from './errors';
export type { ClaudeWebFailureReason, ClaudeWebRemedy } from './errors';
export type { GitRepositoryInfo } from './git';

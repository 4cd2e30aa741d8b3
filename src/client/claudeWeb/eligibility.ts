// Can this workspace launch a remote ultraplan? The checks run in Claude Code's order, and the
// first that fails names its cause and its fix (docs/protocol.md section 9): the organization's policy
// (once a login can ask for it), the login and the organization, a cloud environment, a git
// repository with a GitHub remote, the GitHub app. Re-attaching to a running session checks only
// the login and the organization.
import { checkRemoteSessionsPolicy, fetchEnvironments, fetchGithubAppInstalled, fetchProfile, type AccountApiOptions } from './accountApi';
import { readClaudeCredentials, type CredentialsOptions, type CredentialsSource } from './credentials';
import { chooseEnvironment, type Environment } from './environment';
import { CLAUDE_GITHUB_APP_URL, ClaudeWebError, RUN_CLAUDE_FIX } from './errors';
import { detectGitRepository, type GitRepositoryInfo, type GitRunner, type SshConfigReader } from './git';
import { readOrganizationFromConfig } from './organization';

export interface ClaudeWebAccessOptions extends CredentialsOptions {
  /** default https://api.anthropic.com */
  baseUrl?: string;
  fetch?: typeof fetch;
  requestTimeoutMs?: number;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

export interface EligibilityOptions extends ClaudeWebAccessOptions {
  workspaceFolder: string;
  /** The setting ultraplan.claudeWeb.environmentId. */
  environmentId?: string;
  git?: GitRunner;
  /** `ssh -G <host>` for resolving host aliases (tests give their own). */
  ssh?: SshConfigReader;
}

/** The login and organization: enough to follow a session. Holds no token. */
export interface ClaudeWebLogin {
  login: { source: CredentialsSource; from: string; subscriptionType: string | undefined; expiresAt: number | undefined };
  organizationUuid: string;
  organizationFrom: 'env' | 'config' | 'profile';
  /** Absent when only the login was checked (re-attach). */
  environment?: Environment;
  environments?: Environment[];
  repository?: GitRepositoryInfo;
  warnings: string[];
}

/** What a launch needs, all checked. Holds no token: the token is read again for every request. */
export interface ClaudeWebEligibility extends ClaudeWebLogin {
  environment: Environment;
  environments: Environment[];
  repository: GitRepositoryInfo;
  /** For people: the login about to expire, changes the remote will not see. */
  warnings: string[];
}

/** The access token now, read afresh (Claude Code may have refreshed it). */
export function tokenReader(options: CredentialsOptions): () => Promise<string> {
  return async () => (await readClaudeCredentials(options)).accessToken;
}

/** The organization: CLAUDE_CODE_ORGANIZATION_UUID, Claude Code's global config, else the profile call. */
export async function resolveOrganization(
  options: ClaudeWebAccessOptions,
  api: AccountApiOptions,
): Promise<{ uuid: string; from: 'env' | 'config' | 'profile' }> {
  const fromEnv = (options.env ?? process.env).CLAUDE_CODE_ORGANIZATION_UUID?.trim();
  if (fromEnv) return { uuid: fromEnv, from: 'env' };
  const fromConfig = await readOrganizationFromConfig(options);
  if (fromConfig) return { uuid: fromConfig, from: 'config' };
  const profile = await fetchProfile(api);
  const uuid = profile?.organization?.uuid;
  if (uuid) return { uuid, from: 'profile' };
  throw new ClaudeWebError(
    'organization_unknown',
    `Could not tell which Claude organization to use: Claude Code's config has none and the profile names none. ${RUN_CLAUDE_FIX}`,
  );
}

function apiOptions(options: ClaudeWebAccessOptions): AccountApiOptions {
  return {
    baseUrl: options.baseUrl ?? 'https://api.anthropic.com',
    getToken: tokenReader(options),
    fetch: options.fetch,
    requestTimeoutMs: options.requestTimeoutMs,
    signal: options.signal,
  };
}

/** What the rest of the extension may know of the login: never the token. */
function loginSummary(credentials: Awaited<ReturnType<typeof readClaudeCredentials>>): ClaudeWebEligibility['login'] {
  return {
    source: credentials.source,
    from: credentials.from,
    subscriptionType: credentials.subscriptionType,
    expiresAt: credentials.expiresAt,
  };
}

/** The login and the organization, nothing else: what re-attaching to a running session needs. */
export async function checkClaudeWebLogin(options: ClaudeWebAccessOptions): Promise<ClaudeWebLogin> {
  const credentials = await readClaudeCredentials(options);
  const organization = await resolveOrganization(options, apiOptions(options));
  (options.log ?? (() => {}))(`claude-web: re-attaching · login from ${credentials.from} · organization from ${organization.from}`);
  return {
    login: loginSummary(credentials),
    organizationUuid: organization.uuid,
    organizationFrom: organization.from,
    warnings: [],
  };
}

/** Policy, login, organization and the environments list: enough for a picker. */
export async function readAccess(options: ClaudeWebAccessOptions): Promise<{
  login: ClaudeWebEligibility['login'];
  expiresSoon: boolean;
  organizationUuid: string;
  organizationFrom: 'env' | 'config' | 'profile';
  environments: Environment[];
  api: AccountApiOptions;
}> {
  // A Claude.ai login first: the policy call needs its token (not_logged_in, credentials_malformed,
  // missing_scope, token_expired).
  const credentials = await readClaudeCredentials(options);
  const api = apiOptions(options);
  // 1. The organization's policy, before any session or account call.
  await checkRemoteSessionsPolicy(api);
  // 2. The organization.
  const organization = await resolveOrganization(options, api);
  api.organizationUuid = organization.uuid;
  // 3. The cloud environments (paged).
  const environments = await fetchEnvironments(api);
  return {
    login: loginSummary(credentials),
    expiresSoon: credentials.expiresSoon,
    organizationUuid: organization.uuid,
    organizationFrom: organization.from,
    environments,
    api,
  };
}

/** Every check in order; throws the first failure as a ClaudeWebError. */
export async function checkClaudeWebEligibility(options: EligibilityOptions): Promise<ClaudeWebEligibility> {
  const log = options.log ?? (() => {});
  const access = await readAccess(options);
  const environment = chooseEnvironment(access.environments, options.environmentId);
  // 4. and 5. A git repository with a GitHub remote.
  const repository = await detectGitRepository(options.workspaceFolder, { git: options.git, ssh: options.ssh });
  // 6. The Claude GitHub app on that repository.
  const installed = await fetchGithubAppInstalled(
    { ...access.api, organizationUuid: access.organizationUuid },
    repository.owner,
    repository.name,
  );
  if (!installed) {
    throw new ClaudeWebError(
      'github_app_not_installed',
      `The Claude GitHub app is not installed on ${repository.owner}/${repository.name} (or cannot see it), so Claude Code on the web cannot work on it. Install it at ${CLAUDE_GITHUB_APP_URL} (or run /install-github-app in \`claude\`), then choose Retry.`,
      { url: CLAUDE_GITHUB_APP_URL },
    );
  }
  const warnings: string[] = [];
  if (access.expiresSoon && access.login.expiresAt !== undefined) {
    const minutes = Math.max(0, Math.round((access.login.expiresAt - (options.now ?? Date.now)()) / 60_000));
    warnings.push(
      `Claude Code's login expires in about ${minutes} min; if Claude.ai refuses it, run \`claude\` once (it refreshes the login) and choose Retry.`,
    );
  }
  warnings.push(...repository.warnings);
  log(
    `claude-web: eligible · login from ${access.login.from} · organization from ${access.organizationFrom} · environment ${environment.environment_id} (${environment.kind}) · ${repository.owner}/${repository.name}@${repository.revision ?? '(default branch)'}`,
  );
  return {
    login: access.login,
    organizationUuid: access.organizationUuid,
    organizationFrom: access.organizationFrom,
    environment,
    environments: access.environments,
    repository,
    warnings,
  };
}

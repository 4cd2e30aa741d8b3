// Can this workspace launch a remote ultraplan? The checks run in Claude Code's order, and the
// first that fails names its cause and its fix (PROTOCOL.md section 9): the Claude.ai login, the
// organization's policy, a cloud environment, a git repository, a GitHub remote, the GitHub app.
import { fetchEnvironments, fetchGithubAppInstalled, fetchProfile, type AccountApiOptions } from './accountApi';
import { readClaudeCredentials, type CredentialsOptions, type CredentialsSource } from './credentials';
import { chooseEnvironment, type Environment } from './environment';
import { CLAUDE_GITHUB_APP_URL, ClaudeWebError, RUN_CLAUDE_FIX } from './errors';
import { detectGitRepository, type GitRepositoryInfo, type GitRunner } from './git';
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
}

/** What a launch needs, all checked. Holds no token: the token is read again for every request. */
export interface ClaudeWebEligibility {
  login: { source: CredentialsSource; from: string; subscriptionType: string | undefined; expiresAt: number | undefined };
  organizationUuid: string;
  organizationFrom: 'config' | 'profile';
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

/** The organization: Claude Code's global config, else the profile call. */
export async function resolveOrganization(options: ClaudeWebAccessOptions, api: AccountApiOptions): Promise<{ uuid: string; from: 'config' | 'profile' }> {
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

/** Login, organization and the environments list: enough for a picker. */
export async function readAccess(options: ClaudeWebAccessOptions): Promise<{
  login: ClaudeWebEligibility['login'];
  expiresSoon: boolean;
  organizationUuid: string;
  organizationFrom: 'config' | 'profile';
  environments: Environment[];
  api: AccountApiOptions;
}> {
  // 1. A Claude.ai login (not_logged_in, credentials_malformed, missing_scope, token_expired).
  const credentials = await readClaudeCredentials(options);
  const api: AccountApiOptions = {
    baseUrl: options.baseUrl ?? 'https://api.anthropic.com',
    getToken: tokenReader(options),
    fetch: options.fetch,
    requestTimeoutMs: options.requestTimeoutMs,
    signal: options.signal,
  };
  const organization = await resolveOrganization(options, api);
  api.organizationUuid = organization.uuid;
  // 2. and 3. The policy refusal surfaces here as a 403 (see accountApi.isPolicyRefusal).
  const environments = await fetchEnvironments(api);
  return {
    login: { source: credentials.source, from: credentials.from, subscriptionType: credentials.subscriptionType, expiresAt: credentials.expiresAt },
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
  const repository = await detectGitRepository(options.workspaceFolder, { git: options.git });
  // 6. The Claude GitHub app on that repository.
  const installed = await fetchGithubAppInstalled({ ...access.api, organizationUuid: access.organizationUuid }, repository.owner, repository.name);
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
    warnings.push(`Claude Code's login expires in about ${minutes} min; if Claude.ai refuses it, run \`claude\` once (it refreshes the login) and choose Retry.`);
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

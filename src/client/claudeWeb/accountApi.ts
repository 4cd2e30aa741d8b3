// The account calls Claude Code makes before it launches a cloud session (docs/protocol.md section 9):
// the organization's policy, the profile (organization), the cloud environments (paged), and the
// GitHub app check with its resync. They are not Sessions API calls, so SessionsClient has no
// method for them; this is the smallest request that answers them, with the headers Claude Code
// sends, and it maps every failure straight to the ClaudeWebError a person needs.
import * as z from 'zod';
import { CLIENT_PLATFORM } from '../../core/codeSessions';
import { ANTHROPIC_VERSION, ErrorBodySchema } from '../../core/protocol';
import { DEFAULT_USER_AGENT } from '../sessionsClient';
import { EnvironmentPageSchema, type Environment } from './environment';
import { ClaudeWebError, RUN_CLAUDE_FIX } from './errors';
import { ProfileSchema, type Profile } from './organization';
import { errorMessage } from '../../core/errors';

export const DEFAULT_CLAUDE_API_URL = 'https://api.anthropic.com';

export interface AccountApiOptions {
  baseUrl: string;
  getToken: () => Promise<string>;
  /** Sent as x-organization-uuid on the environment and GitHub-app calls, as Claude Code does. */
  organizationUuid?: string;
  fetch?: typeof fetch;
  requestTimeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * A 403 whose error names a policy is the organization's refusal rather than a refused login
 * (a session call can still meet one after the policy check passed).
 */
export function isPolicyRefusal(status: number | undefined, errorType: string | undefined, message: string | undefined): boolean {
  if (status !== 403) return false;
  return /polic/i.test(errorType ?? '') || /polic(y|ies)/i.test(message ?? '');
}

export function policyError(detail?: string): ClaudeWebError {
  return new ClaudeWebError(
    'org_policy',
    `Cloud sessions are disabled by your organization's policy${detail ? ` (the service says: ${detail})` : ''}. Contact your organization admin, or choose another backend with "Ultraplan: Choose Backend…".`,
  );
}

export function tokenRefusedError(status: number, detail?: string): ClaudeWebError {
  return new ClaudeWebError(
    'token_refused',
    `Claude.ai refused Claude Code's login (HTTP ${status}${detail ? `: ${detail}` : ''}). It may have expired or been revoked; Ultraplan never refreshes it. ${RUN_CLAUDE_FIX}`,
  );
}

interface CallSpec {
  method?: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** Add x-organization-uuid (environment and GitHub-app calls). */
  organization?: boolean;
}

/** One call; undefined on 404; every other failure as a ClaudeWebError. */
async function callJson<T extends z.ZodType>(
  options: AccountApiOptions,
  spec: CallSpec,
  schema: T,
  what: string,
): Promise<z.infer<T> | undefined> {
  const base = options.baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = {
    authorization: `Bearer ${await options.getToken()}`,
    'content-type': 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
    'anthropic-client-platform': CLIENT_PLATFORM,
    'user-agent': DEFAULT_USER_AGENT,
  };
  if (spec.organization && options.organizationUuid) headers['x-organization-uuid'] = options.organizationUuid;
  const url = new URL(base + spec.path);
  for (const [key, value] of Object.entries(spec.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
  const timeout = AbortSignal.timeout(options.requestTimeoutMs ?? 30_000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: Response;
  let text: string;
  try {
    response = await (options.fetch ?? globalThis.fetch)(url, {
      method: spec.method ?? 'GET',
      headers,
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      signal,
    });
    text = await response.text();
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason ?? err;
    throw new ClaudeWebError(
      'service_unreachable',
      `Could not reach ${base} to check ${what} (${describeNetworkError(err)}). Check the connection, then choose Retry.`,
      { cause: err },
    );
  }
  if (response.status === 404) return undefined;
  if (!response.ok) {
    const error = parseErrorBody(text);
    const detail = error?.message?.replace(/Bearer\s+\S+/gi, 'Bearer [redacted]').slice(0, 300);
    if (isPolicyRefusal(response.status, error?.type, error?.message)) throw policyError(detail);
    if (response.status === 401 || response.status === 403) throw tokenRefusedError(response.status, detail);
    throw new ClaudeWebError(
      'service_unreachable',
      `${base} could not answer ${what} (HTTP ${response.status}${detail ? `: ${detail}` : ''}). Choose Retry in a moment.`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ClaudeWebError('service_unreachable', `${base} answered ${what} with something that is not JSON. Choose Retry in a moment.`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ClaudeWebError(
      'service_unreachable',
      `${base} answered ${what} in an unexpected form${issue && issue.path.length > 0 ? ` (at ${issue.path.join('.')})` : ''}; its API may have changed.`,
    );
  }
  return parsed.data;
}

function parseErrorBody(text: string): { type: string; message: string } | undefined {
  try {
    const parsed = ErrorBodySchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.error : undefined;
  } catch {
    return undefined;
  }
}

function describeNetworkError(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || (err.cause instanceof Error && err.cause.name === 'TimeoutError')))
    return 'no answer in time';
  const cause = err instanceof Error && err.cause && typeof err.cause === 'object' ? err.cause : err;
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : errorMessage(err);
}

export async function fetchProfile(options: AccountApiOptions): Promise<Profile | undefined> {
  return callJson(options, { path: '/api/oauth/profile' }, ProfileSchema, 'your Claude.ai profile');
}

const PolicyLimitsSchema = z.looseObject({
  restrictions: z
    .record(z.string(), z.looseObject({ allowed: z.boolean() }).nullable())
    .nullable()
    .optional(),
});

export const POLICY_UNREADABLE_MESSAGE = "Your organization's policy could not be read, so cloud sessions are unavailable.";

/**
 * The organization's policy, checked before any session call. A restriction that is absent
 * allows; a policy that cannot be read does not (as in Claude Code).
 */
export async function checkRemoteSessionsPolicy(options: AccountApiOptions): Promise<void> {
  let limits: z.infer<typeof PolicyLimitsSchema> | undefined;
  try {
    limits = await callJson(options, { path: '/api/claude_code/policy_limits' }, PolicyLimitsSchema, "your organization's policy");
  } catch (err) {
    if (err instanceof ClaudeWebError && err.reason === 'service_unreachable') {
      throw new ClaudeWebError('service_unreachable', `${POLICY_UNREADABLE_MESSAGE} ${err.message}`, { cause: err });
    }
    throw err;
  }
  if (limits === undefined) {
    throw new ClaudeWebError(
      'service_unreachable',
      `${POLICY_UNREADABLE_MESSAGE} ${options.baseUrl}/api/claude_code/policy_limits answered 404, which usually means a proxy between you and the API does not forward that path. Choose Retry once it does.`,
    );
  }
  if (limits.restrictions?.allow_remote_sessions?.allowed === false) throw policyError();
}

/** Environments come a page at a time; Claude Code reads at most this many pages. */
export const MAX_ENVIRONMENT_PAGES = 10;
export const ENVIRONMENT_PAGE_SIZE = 100;

export async function fetchEnvironments(options: AccountApiOptions): Promise<Environment[]> {
  const all: Environment[] = [];
  let after: string | undefined;
  for (let page = 0; page < MAX_ENVIRONMENT_PAGES; page++) {
    const answer = await callJson(
      options,
      { path: '/v1/environment_providers', query: { limit: String(ENVIRONMENT_PAGE_SIZE), after_id: after }, organization: true },
      EnvironmentPageSchema,
      'your cloud environments',
    );
    if (!answer) break;
    all.push(...answer.environments);
    const last = answer.last_id ?? undefined;
    if (answer.has_more !== true || answer.environments.length === 0 || typeof last !== 'string' || last === after) break;
    after = last;
  }
  return all;
}

const RepoStatusSchema = z.looseObject({
  status: z.looseObject({ app_installed: z.boolean().optional() }).nullable().optional(),
});

const ResyncSchema = z.looseObject({ app_installed: z.boolean().optional(), reason: z.string().nullable().optional() });

/**
 * Whether the Claude GitHub app can work on owner/name. A status the service does not know
 * (`status: null`) is asked again with the resync call; a repository it cannot see counts as not
 * installed.
 */
export async function fetchGithubAppInstalled(
  options: AccountApiOptions & { organizationUuid: string },
  owner: string,
  name: string,
): Promise<boolean> {
  const org = encodeURIComponent(options.organizationUuid);
  const what = `the Claude GitHub app on ${owner}/${name}`;
  const answer = await callJson(
    options,
    { path: `/api/oauth/organizations/${org}/code/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`, organization: true },
    RepoStatusSchema,
    what,
  );
  if (answer === undefined) return false;
  if (answer.status) return answer.status.app_installed === true;
  const resync = await callJson(
    options,
    { method: 'POST', path: `/api/oauth/organizations/${org}/code/repos/resync`, body: { owner, repo: name }, organization: true },
    ResyncSchema,
    what,
  );
  return resync?.app_installed === true;
}

// The three account calls Claude Code makes before it launches a remote session (PROTOCOL.md
// section 9): the profile (organization), the cloud environments, and the GitHub app check. They
// are not Sessions API calls, so SessionsClient has no method for them; this is the smallest GET
// that answers them, and it maps every failure straight to the ClaudeWebError a person needs.
import * as z from 'zod';
import { ANTHROPIC_VERSION, CCR_BETA, ErrorBodySchema } from '../../core/protocol';
import { EnvironmentListSchema, type Environment } from './environment';
import { ClaudeWebError, RUN_CLAUDE_FIX } from './errors';
import { ProfileSchema, type Profile } from './organization';

export const DEFAULT_CLAUDE_API_URL = 'https://api.anthropic.com';

export interface AccountApiOptions {
  baseUrl: string;
  getToken: () => Promise<string>;
  organizationUuid?: string;
  fetch?: typeof fetch;
  requestTimeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Our assumption for "the organization's policy disables remote sessions": the service answers
 * 403 and its error says policy (error.type containing "policy", or a message naming a policy).
 * Any other 403 is a refused login. Both are documented in README.md beside this file.
 */
export function isPolicyRefusal(status: number | undefined, errorType: string | undefined, message: string | undefined): boolean {
  if (status !== 403) return false;
  return /polic/i.test(errorType ?? '') || /polic(y|ies)/i.test(message ?? '');
}

export function policyError(detail?: string): ClaudeWebError {
  return new ClaudeWebError(
    'org_policy',
    `Your organization's policy disables Claude Code remote sessions${detail ? ` (the service says: ${detail})` : ''}. Ask an admin of your Claude organization to allow them, or choose another backend with "Ultraplan: Choose Backend…".`,
  );
}

export function tokenRefusedError(status: number, detail?: string): ClaudeWebError {
  return new ClaudeWebError(
    'token_refused',
    `Claude.ai refused Claude Code's login (HTTP ${status}${detail ? `: ${detail}` : ''}). It may have expired or been revoked; Ultraplan never refreshes it. ${RUN_CLAUDE_FIX}`,
  );
}

/** GET `path`; undefined on 404; every other failure as a ClaudeWebError. */
async function getJson<T extends z.ZodType>(options: AccountApiOptions, path: string, schema: T, what: string): Promise<z.infer<T> | undefined> {
  const base = options.baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = {
    authorization: `Bearer ${await options.getToken()}`,
    'content-type': 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
    'anthropic-beta': CCR_BETA,
  };
  if (options.organizationUuid) headers['x-organization-uuid'] = options.organizationUuid;
  const timeout = AbortSignal.timeout(options.requestTimeoutMs ?? 30_000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: Response;
  let text: string;
  try {
    response = await (options.fetch ?? globalThis.fetch)(base + path, { method: 'GET', headers, signal });
    text = await response.text();
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason ?? err;
    throw new ClaudeWebError('service_unreachable', `Could not reach ${base} to check ${what} (${describeNetworkError(err)}). Check the connection, then choose Retry.`, { cause: err });
  }
  if (response.status === 404) return undefined;
  if (!response.ok) {
    const error = parseErrorBody(text);
    const detail = error?.message?.replace(/Bearer\s+\S+/gi, 'Bearer [redacted]').slice(0, 300);
    if (isPolicyRefusal(response.status, error?.type, error?.message)) throw policyError(detail);
    if (response.status === 401 || response.status === 403) throw tokenRefusedError(response.status, detail);
    throw new ClaudeWebError('service_unreachable', `${base} could not answer ${what} (HTTP ${response.status}${detail ? `: ${detail}` : ''}). Choose Retry in a moment.`);
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
  if (err instanceof Error && (err.name === 'TimeoutError' || err.cause instanceof Error && err.cause.name === 'TimeoutError')) return 'no answer in time';
  const cause = err instanceof Error && err.cause && typeof err.cause === 'object' ? err.cause : err;
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.message : String(err);
}

export async function fetchProfile(options: AccountApiOptions): Promise<Profile | undefined> {
  return getJson(options, '/api/oauth/profile', ProfileSchema, 'your Claude.ai profile');
}

export async function fetchEnvironments(options: AccountApiOptions): Promise<Environment[]> {
  const list = await getJson(options, '/v1/environment_providers', EnvironmentListSchema, 'your cloud environments');
  return list?.environments ?? [];
}

const RepoStatusSchema = z.looseObject({
  status: z.looseObject({ app_installed: z.boolean().optional() }).nullable().optional(),
});

/** Whether the Claude GitHub app can work on owner/name; a repository it cannot see counts as not installed. */
export async function fetchGithubAppInstalled(options: AccountApiOptions & { organizationUuid: string }, owner: string, name: string): Promise<boolean> {
  const path = `/api/oauth/organizations/${encodeURIComponent(options.organizationUuid)}/code/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
  const answer = await getJson(options, path, RepoStatusSchema, `the Claude GitHub app on ${owner}/${name}`);
  return answer?.status?.app_installed === true;
}

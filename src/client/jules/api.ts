// A client of the Jules REST API (v1alpha): one method per call Ultraplan makes, each answer
// parsed with its schema, each failure a SessionsError of the kind the poller switches on. The
// key travels only in the X-Goog-Api-Key header; no log line or error carries it.
import * as z from 'zod';
import { SessionsError, errorMessage, type SessionsErrorKind } from '../../core/errors';
import {
  GoogleErrorSchema,
  JULES_API_BASE_URL,
  JulesActivityPageSchema,
  JulesCreateSessionSchema,
  JulesSendMessageSchema,
  JulesSessionPageSchema,
  JulesSessionSchema,
  type JulesCreateSession,
  type JulesSession,
} from './schemas';

export interface JulesApiOptions {
  /** The key, read afresh for each request (SecretStorage in the extension); undefined: none set. */
  getKey: () => Promise<string | undefined>;
  baseUrl?: string;
  fetch?: typeof fetch;
  /** One line per request: method, path, status. Never the key. */
  log?: (line: string) => void;
  /** Per request (default 30 s). */
  timeoutMs?: number;
}

export const NO_KEY_MESSAGE =
  'No Jules API key is set. Run "Ultraplan: Set Jules API Key…" (create a key at https://jules.google.com/settings#api).';

/** Retry-After as seconds or an HTTP date, in ms; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds, 3_600) * 1_000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.min(at - now, 3_600_000));
}

function kindOf(status: number, rpcStatus: string | undefined, reason: string | undefined): SessionsErrorKind {
  // Google answers a key it does not know with 400 INVALID_ARGUMENT, reason API_KEY_INVALID.
  if (status === 401 || status === 403 || reason === 'API_KEY_INVALID') return 'unauthorized';
  if (status === 404) return 'not_found';
  // FAILED_PRECONDITION: the session is not where the call needs it (no plan awaits approval, say):
  // it was decided elsewhere, so the decision is not retried.
  if (status === 409 || rpcStatus === 'FAILED_PRECONDITION') return 'conflict';
  if (status === 429 || status >= 500) return 'transient';
  return 'bad_request';
}

interface Cached {
  etag: string;
  body: unknown;
}

export class JulesApi {
  readonly baseUrl: string;
  readonly #o: JulesApiOptions;
  readonly #fetch: typeof fetch;
  /** The last answer of each GET that carried an ETag, for If-None-Match. */
  readonly #etags = new Map<string, Cached>();

  constructor(options: JulesApiOptions) {
    this.#o = options;
    this.baseUrl = (options.baseUrl ?? JULES_API_BASE_URL).replace(/\/+$/, '');
    this.#fetch = options.fetch ?? fetch;
  }

  async createSession(body: JulesCreateSession, signal?: AbortSignal): Promise<JulesSession> {
    return this.#call('POST', '/sessions', JulesCreateSessionSchema.parse(body), JulesSessionSchema, signal);
  }

  getSession(sessionId: string, signal?: AbortSignal): Promise<JulesSession> {
    return this.#call('GET', `/sessions/${segment(sessionId)}`, undefined, JulesSessionSchema, signal);
  }

  /** One page of the key's sessions (sessions.list; raw items: each is parsed on its own). */
  listSessions(pageToken: string | undefined, signal?: AbortSignal): Promise<z.infer<typeof JulesSessionPageSchema>> {
    const query = new URLSearchParams({ pageSize: '100' });
    if (pageToken) query.set('pageToken', pageToken);
    return this.#call('GET', `/sessions?${query}`, undefined, JulesSessionPageSchema, signal);
  }

  /** One page of a session's activities (raw items: the follower parses each on its own). */
  listActivities(sessionId: string, pageToken: string | undefined, signal?: AbortSignal): Promise<z.infer<typeof JulesActivityPageSchema>> {
    const query = new URLSearchParams({ pageSize: '100' });
    if (pageToken) query.set('pageToken', pageToken);
    return this.#call('GET', `/sessions/${segment(sessionId)}/activities?${query}`, undefined, JulesActivityPageSchema, signal);
  }

  /** sessions.approvePlan: "The request body must be empty." */
  async approvePlan(sessionId: string, signal?: AbortSignal): Promise<void> {
    await this.#call('POST', `/sessions/${segment(sessionId)}:approvePlan`, undefined, z.looseObject({}), signal);
  }

  async sendMessage(sessionId: string, prompt: string, signal?: AbortSignal): Promise<void> {
    const body = JulesSendMessageSchema.parse({ prompt });
    await this.#call('POST', `/sessions/${segment(sessionId)}:sendMessage`, body, z.looseObject({}), signal);
  }

  async #call<T extends z.ZodType>(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    schema: T,
    signal?: AbortSignal,
  ): Promise<z.infer<T>> {
    const key = await this.#o.getKey();
    if (!key) throw new SessionsError('unauthorized', NO_KEY_MESSAGE);
    const redact = (text: string) => text.split(key).join('[key]');
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = { 'X-Goog-Api-Key': key, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const cached = method === 'GET' ? this.#etags.get(url) : undefined;
    if (cached) headers['If-None-Match'] = cached.etag;
    const timeout = AbortSignal.timeout(this.#o.timeoutMs ?? 30_000);
    const what = `Jules ${method} ${path.split('?')[0]}`;
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(url, {
        method,
        headers,
        // approvePlan's body "must be empty": POST with no body at all.
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      text = await response.text();
    } catch (err) {
      if (signal?.aborted) throw err;
      this.#o.log?.(`${what} failed: ${redact(errorMessage(err))}`);
      const why = timeout.aborted ? 'no answer in time' : redact(errorMessage(err));
      throw new SessionsError(
        'transient',
        `${what}: the connection failed (${why}). Nothing was lost; it will be tried again.`,
        undefined,
        undefined,
        {
          cause: err,
        },
      );
    }
    this.#o.log?.(`${what} ${response.status}`);
    if (response.status === 304 && cached) return schema.parse(cached.body);
    if (!response.ok) {
      const parsed = GoogleErrorSchema.safeParse(safeJson(text));
      const error = parsed.success ? parsed.data.error : undefined;
      const reason = error?.details?.find((d) => d.reason)?.reason;
      const kind = kindOf(response.status, error?.status, reason);
      const detail = redact(error?.message ?? (text.slice(0, 200) || response.statusText)).replace(/\.+$/, '');
      const hint =
        kind === 'unauthorized'
          ? ' Check the key with "Ultraplan: Set Jules API Key…".'
          : kind === 'transient'
            ? ' It will be tried again.'
            : '';
      throw new SessionsError(
        kind,
        `${what}: ${response.status}${error?.status ? ` ${error.status}` : ''}: ${detail}.${hint}`,
        response.status,
        retryAfterMs(response.headers.get('retry-after')),
      );
    }
    const json = text.trim() === '' ? {} : safeJson(text);
    const result = schema.safeParse(json);
    if (json === undefined || !result.success) {
      throw new SessionsError(
        // A cut-off or garbled answer to a read is worth another try; nothing was changed by it.
        method === 'GET' ? 'transient' : 'bad_response',
        `${what}: the answer is not what the Jules API reference describes (${json === undefined ? 'not JSON' : z.prettifyError(result.error!).slice(0, 300)}).`,
        response.status,
      );
    }
    const etag = response.headers.get('etag');
    if (method === 'GET' && etag) this.#etags.set(url, { etag, body: json });
    return result.data;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A session id as one path segment (ids are digits; anything else is escaped, never a path). */
function segment(id: string): string {
  return encodeURIComponent(id.replace(/^sessions\//, ''));
}

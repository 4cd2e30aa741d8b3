// The HTTP exchange under SessionsClient: the headers Claude Code sends, the bound on each request,
// JSON answers checked with zod, and every failure turned into a SessionsError whose kind the
// poller switches on, in words for people that never hold a token.
import * as z from 'zod';
import { CLIENT_PLATFORM } from '../core/codeSessions';
import { ANTHROPIC_VERSION, ErrorBodySchema } from '../core/protocol';
import { SessionsError, errorMessage } from '../core/errors';
import { TOKEN_EXPIRED_REASON, expiredTokenMessage } from '../core/serverToken';

/** Parses a Retry-After header (delta seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  signal?: AbortSignal;
  /** For messages: what the call was about ("session abc"). */
  subject?: string;
  /** Headers this call adds (the organization on create, the beta on the older create). */
  headers?: Record<string, string>;
}

const MIN_REDACTED_TOKEN_CHARS = 8;
const MAX_REMEMBERED_TOKENS = 4;

export interface SessionsHttpOptions {
  /** Without a trailing slash. */
  baseUrl: string;
  /** Called before every request; null: no Authorization header. */
  getToken: () => Promise<string | null>;
  requestTimeoutMs: number;
  userAgent: string;
  fetch: typeof fetch;
}

export class SessionsHttp {
  readonly baseUrl: string;
  readonly requestTimeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly userAgent: string;
  /** The tokens this client sent lately, so an answer that echoes one is redacted before we show it. */
  private readonly sentTokens: string[] = [];

  constructor(private readonly options: SessionsHttpOptions) {
    this.baseUrl = options.baseUrl;
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.fetchImpl = options.fetch;
    this.userAgent = options.userAgent;
  }

  /** The JSON answer to `spec` ({} for an empty body), within the request bound. */
  async json(spec: RequestSpec): Promise<unknown> {
    const timeout = AbortSignal.timeout(this.requestTimeoutMs);
    const signal = spec.signal ? AbortSignal.any([spec.signal, timeout]) : timeout;
    const response = await this.send(spec, signal, spec.signal);
    if (!response.ok) throw await this.errorFor(response, spec);
    let text: string;
    try {
      text = await response.text();
    } catch (err) {
      throw this.networkError(err, spec, spec.signal);
    }
    if (text.trim() === '') return {};
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw this.badResponse(`malformed JSON (${text.length} bytes starting "${preview(this.redact(text))}")`, response.status);
    }
  }

  /** The response to `spec`, its headers in; a failure to reach the server is a SessionsError. */
  async send(spec: RequestSpec, signal: AbortSignal, callerSignal: AbortSignal | undefined): Promise<Response> {
    callerSignal?.throwIfAborted();
    const url = new URL(this.baseUrl + spec.path);
    for (const [key, value] of Object.entries(spec.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
    const headers = await this.headers(spec.headers ?? {});
    try {
      return await this.fetchImpl(url, {
        method: spec.method,
        headers,
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal,
      });
    } catch (err) {
      throw this.networkError(err, spec, callerSignal);
    }
  }

  private async headers(extra: Record<string, string>): Promise<Record<string, string>> {
    let token: string | null;
    try {
      token = await this.options.getToken();
    } catch (err) {
      if (err instanceof SessionsError) throw err;
      throw new SessionsError('unauthorized', `Could not read the token for ${this.baseUrl}: ${errorMessage(err)}`, undefined, undefined, {
        cause: err,
      });
    }
    if (token !== null) this.rememberSentToken(token);
    // The headers Claude Code sends on every call; a call adds its own (organization, beta).
    return {
      ...extra,
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      'content-type': 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
      'anthropic-client-platform': CLIENT_PLATFORM,
      'user-agent': this.userAgent,
    };
  }

  private networkError(err: unknown, spec: RequestSpec, callerSignal: AbortSignal | undefined): unknown {
    // The caller's own abort is not a failure of the server: hand it back as it came.
    if (callerSignal?.aborted) return callerSignal.reason ?? err;
    const what = `${spec.method} ${spec.path}`;
    if (isTimeout(err)) {
      return new SessionsError(
        'transient',
        `The session server at ${this.baseUrl} did not answer ${what} within ${formatMs(this.requestTimeoutMs)}.`,
        undefined,
        undefined,
        { cause: err },
      );
    }
    return new SessionsError(
      'transient',
      `Could not reach the session server at ${this.baseUrl} (${networkCause(err)}) for ${what}.`,
      undefined,
      undefined,
      { cause: err },
    );
  }

  /** The SessionsError a non-2xx answer stands for. */
  async errorFor(response: Response, spec: RequestSpec): Promise<SessionsError> {
    const status = response.status;
    const server = await this.serverError(response);
    const serverSays = server?.message;
    const detail = serverSays ? `: ${serverSays}` : '';
    const subject = spec.subject ?? spec.path;
    if (status === 403 && server?.reason) {
      // Not the token: the request's shape (Host, Origin or Content-Type: a proxy or a name the
      // server was not started with), or an approval that cannot count toward a quorum; the server says which.
      const refused = new SessionsError(
        'unauthorized',
        `The session server at ${this.baseUrl} refused the request (HTTP 403${detail}).`,
        status,
      );
      SERVER_REASONS.set(refused, server.reason);
      return refused;
    }
    if (status === 401 && server?.reason === TOKEN_EXPIRED_REASON) {
      return new SessionsError('unauthorized', expiredTokenMessage(new URL(this.baseUrl).origin, null) + ` (HTTP 401${detail})`, status);
    }
    if (status === 401 || status === 403) {
      return new SessionsError(
        'unauthorized',
        `The session server at ${this.baseUrl} refused the token (HTTP ${status}${detail}). Check the token or sign in again.`,
        status,
      );
    }
    if (status === 404)
      return new SessionsError('not_found', `${capitalize(subject)} was not found at ${this.baseUrl} (HTTP 404${detail}).`, status);
    if (status === 409)
      return new SessionsError(
        'conflict',
        `${capitalize(subject)} refused the change as conflicting (HTTP 409${detail}); an archived session accepts no more changes.`,
        status,
      );
    if (status === 429 || status >= 500) {
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      const wait = retryAfterMs === undefined ? '' : ` It asks to retry after ${formatMs(retryAfterMs)}.`;
      // A 429 names the limit reached (the server's message in the detail): busy for now, or a
      // per-user share that only archiving frees.
      const what = status === 429 ? `refused ${spec.method} ${spec.path} under a limit` : `had an error on ${spec.method} ${spec.path}`;
      return new SessionsError(
        'transient',
        `The session server at ${this.baseUrl} ${what} (HTTP ${status}${detail}).${wait}`,
        status,
        retryAfterMs,
      );
    }
    if (status >= 400) {
      const refused = new SessionsError(
        'bad_request',
        `The session server at ${this.baseUrl} refused ${spec.method} ${spec.path} (HTTP ${status}${detail}).`,
        status,
      );
      if (server?.reason) SERVER_REASONS.set(refused, server.reason);
      return refused;
    }
    // 1xx/3xx reaching us means a redirect we did not follow or a broken proxy.
    return this.badResponse(`HTTP ${status} for ${spec.method} ${spec.path}`, status);
  }

  /** The server's own error message and reason, if the body is the protocol's error shape. */
  private async serverError(response: Response): Promise<{ message: string; reason: string | undefined } | undefined> {
    let text: string;
    try {
      text = await response.text();
    } catch {
      return undefined;
    }
    try {
      const json: unknown = JSON.parse(text);
      // The service may answer only `{error:{reason}}` (sessions_v1_retired): the reason alone counts.
      const reason = ErrorReasonSchema.safeParse(json).data?.error.reason;
      const parsed = ErrorBodySchema.safeParse(json);
      const message = parsed.success ? this.redact(parsed.data.error.message).slice(0, 300) : reason;
      if (message !== undefined) return { message, reason };
    } catch {
      // Not JSON: a proxy's HTML page or similar; its text would not help a person.
    }
    return undefined;
  }

  private rememberSentToken(token: string): void {
    // Short strings would redact ordinary words; a real token is long.
    if (token.length < MIN_REDACTED_TOKEN_CHARS || this.sentTokens.includes(token)) return;
    this.sentTokens.push(token);
    if (this.sentTokens.length > MAX_REMEMBERED_TOKENS) this.sentTokens.shift();
  }

  private redact(text: string): string {
    // A server should never echo the token, but a message we show must not carry one, whether
    // as a header it repeats or as the bare value.
    let redacted = text.replace(/Bearer\s+\S+/gi, 'Bearer [redacted]');
    for (const token of this.sentTokens) redacted = redacted.split(token).join('[redacted]');
    return redacted;
  }

  check<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw this.badResponse(`an answer that is not a valid ${what} (${issue?.message ?? 'invalid'}${where})`);
  }

  badResponse(what: string, status?: number): SessionsError {
    return new SessionsError('bad_response', `The session server at ${this.baseUrl} sent ${what}.`, status);
  }
}

/** `error.reason` of a refusal (e.g. `sessions_v1_retired`), kept beside the error we throw. */
const ErrorReasonSchema = z.looseObject({ error: z.looseObject({ reason: z.string() }) });

const SERVER_REASONS = new WeakMap<SessionsError, string>();

export function serverErrorReason(err: unknown): string | undefined {
  return err instanceof SessionsError ? SERVER_REASONS.get(err) : undefined;
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && (err.name === 'TimeoutError' || (err.cause instanceof Error && err.cause.name === 'TimeoutError'));
}

function networkCause(err: unknown): string {
  // undici wraps the socket error: TypeError("fetch failed") with cause {code: "ECONNRESET"}.
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  if (cause && typeof cause === 'object') {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return errorMessage(cause);
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

function preview(text: string): string {
  return text.slice(0, 40).replace(/\s+/g, ' ');
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// The one HTTP client for the Sessions API (PROTOCOL.md section 1), used for both our own server
// and Claude Code on the web. Every answer is checked with zod and every failure becomes a
// SessionsError whose kind the poller switches on; messages are for people and never hold a token.
import * as z from 'zod';
import {
  ANTHROPIC_VERSION,
  AnyEventSchema,
  CCR_BETA,
  ErrorBodySchema,
  EventPageSchema,
  SKIPPED_EVENT_TYPES,
  SessionListSchema,
  SessionResourceSchema,
  type AnyEvent,
  type CreateSessionRequest,
  type EventPage,
  type SessionResource,
  type SessionStatus,
} from '../core/protocol';
import { SessionsError } from '../core/errors';
import type { EventRead, SessionTransport } from '../core/transport';

/** At most this many pages in one read (PROTOCOL.md section 1); the rest waits for the next poll. */
export const MAX_EVENT_PAGES_PER_READ = 50;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export interface SessionsClientOptions {
  /** e.g. http://127.0.0.1:8787 or https://api.anthropic.com (a path prefix is kept). */
  baseUrl: string;
  /** Called before every request, so a token refreshed meanwhile is picked up. */
  getToken: () => Promise<string>;
  /** Added to every request (x-organization-uuid for Claude Code on the web). */
  extraHeaders?: () => Promise<Record<string, string>> | Record<string, string>;
  /** Bound on each request, from sending to the last byte of the answer. */
  requestTimeoutMs?: number;
  fetch?: typeof fetch;
  /** Diagnostic lines (never a token). */
  log?: (line: string) => void;
}

export type SessionList = z.infer<typeof SessionListSchema>;

/** What one multi-page read brought, beyond what the poller needs. */
export interface EventsReadResult extends EventRead {
  /** Pages fetched. */
  pages: number;
  /** True when the page cap stopped the read before the server's last page. */
  hasMore: boolean;
  /** Items left out because their type is skipped (env_manager_log, control_response). */
  skipped: number;
  /** Items left out because they are not objects with a string `type`. */
  invalid: number;
}

export interface ReadEventsOptions {
  signal?: AbortSignal;
  /** Page size; only tests need it (the server's default is 100). */
  limit?: number;
  maxPages?: number;
}

/** Splits raw page items into kept events and counts of the skipped and the invalid. */
export function sortEventItems(items: readonly unknown[]): { events: unknown[]; skipped: number; invalid: number } {
  const events: unknown[] = [];
  let skipped = 0;
  let invalid = 0;
  for (const item of items) {
    const parsed = AnyEventSchema.safeParse(item);
    if (!parsed.success) invalid++;
    else if (SKIPPED_EVENT_TYPES.has(parsed.data.type)) skipped++;
    else events.push(item);
  }
  return { events, skipped, invalid };
}

/** Parses a Retry-After header (delta seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  signal?: AbortSignal;
  /** For messages: what the call was about ("session abc"). */
  subject?: string;
}

const MIN_REDACTED_TOKEN_CHARS = 8;
const MAX_REMEMBERED_TOKENS = 4;

export class SessionsClient implements SessionTransport {
  readonly baseUrl: string;
  readonly requestTimeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly log: (line: string) => void;
  /** The tokens this client sent lately, so an answer that echoes one is redacted before we show it. */
  private readonly sentTokens: string[] = [];

  constructor(private readonly options: SessionsClientOptions) {
    const parsed = new URL(options.baseUrl);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new SessionsError('bad_request', `The session server address must start with http:// or https:// (got ${parsed.protocol}).`);
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.log = options.log ?? (() => {});
  }

  // ---------------------------------------------------------------------------------------------
  // Section 1 calls

  async createSession(request: CreateSessionRequest, signal?: AbortSignal): Promise<SessionResource> {
    const body = await this.requestJson({ method: 'POST', path: '/v1/sessions', body: request, signal, subject: 'a new session' });
    return this.check(SessionResourceSchema, body, 'session resource');
  }

  async getSession(sessionId: string, signal?: AbortSignal): Promise<SessionResource> {
    const body = await this.requestJson({ method: 'GET', path: sessionPath(sessionId), signal, subject: `session ${sessionId}` });
    return this.check(SessionResourceSchema, body, 'session resource');
  }

  async listSessions(signal?: AbortSignal): Promise<SessionList> {
    const body = await this.requestJson({ method: 'GET', path: '/v1/sessions', signal, subject: 'the session list' });
    return this.check(SessionListSchema, body, 'session list');
  }

  /** One page of events after `afterId` (null: from the start), unfiltered. */
  async readEventsPage(sessionId: string, afterId: string | null, options: { signal?: AbortSignal; limit?: number } = {}): Promise<EventPage> {
    const body = await this.requestJson({
      method: 'GET',
      path: `${sessionPath(sessionId)}/events`,
      query: { after_id: afterId ?? undefined, limit: options.limit === undefined ? undefined : String(options.limit) },
      signal: options.signal,
      subject: `session ${sessionId}`,
    });
    return this.check(EventPageSchema, body, 'event page');
  }

  /**
   * Pages through events after `afterId` until `has_more` is false or the page cap is hit.
   * Skipped types and invalid items are left out (and counted); the cursor still moves past them.
   */
  async readEventsPages(sessionId: string, afterId: string | null, options: ReadEventsOptions = {}): Promise<EventsReadResult> {
    const maxPages = options.maxPages ?? MAX_EVENT_PAGES_PER_READ;
    const events: unknown[] = [];
    let cursor = afterId;
    let pages = 0;
    let skipped = 0;
    let invalid = 0;
    let hasMore = true;
    while (hasMore && pages < maxPages) {
      const page = await this.readEventsPage(sessionId, cursor, { signal: options.signal, limit: options.limit });
      pages++;
      const sorted = sortEventItems(page.data);
      events.push(...sorted.events);
      skipped += sorted.skipped;
      invalid += sorted.invalid;
      hasMore = page.has_more;
      const lastId = page.last_id ?? null;
      if (page.data.length > 0 && lastId === null) {
        throw this.badResponse(`an event page with ${page.data.length} items but no last_id`);
      }
      // A server that says "more" without moving the cursor would keep us here forever.
      if (hasMore && (lastId === null || lastId === cursor)) {
        throw this.badResponse('an event page that says has_more but does not advance last_id');
      }
      if (lastId !== null) cursor = lastId;
    }
    if (invalid > 0) this.log(`session ${sessionId}: left out ${invalid} event item(s) that are not objects with a string type`);
    return { events, lastId: cursor, pages, hasMore, skipped, invalid };
  }

  /** SessionTransport: the poller's read. */
  readEvents(sessionId: string, afterId: string | null, signal?: AbortSignal): Promise<EventsReadResult> {
    return this.readEventsPages(sessionId, afterId, { signal });
  }

  /** SessionTransport: the session's status, read from the session resource. */
  async getStatus(sessionId: string, signal?: AbortSignal): Promise<SessionStatus | string> {
    return (await this.getSession(sessionId, signal)).session_status;
  }

  /** Sends events as `{events:[…]}` (not wrapped in `{type:"event"}`). */
  async sendEvents(sessionId: string, events: AnyEvent[], signal?: AbortSignal): Promise<void> {
    if (events.length === 0) return;
    await this.requestJson({ method: 'POST', path: `${sessionPath(sessionId)}/events`, body: { events }, signal, subject: `session ${sessionId}` });
  }

  /** Archives a session; already archived (409) counts as done. */
  async archive(sessionId: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.requestJson({ method: 'POST', path: `${sessionPath(sessionId)}/archive`, body: {}, signal, subject: `session ${sessionId}` });
    } catch (err) {
      if (err instanceof SessionsError && err.kind === 'conflict') return;
      throw err;
    }
  }

  /**
   * Opens GET …/events/stream (PROTOCOL.md section 6) and returns the response once its headers
   * are in. The request timeout covers only the wait for headers: the body is meant to stay open,
   * bounded by `signal`. Non-2xx answers throw the same SessionsError kinds as every other call.
   */
  async openEventStream(sessionId: string, afterId: string | null, signal: AbortSignal): Promise<Response> {
    const headersTimeout = new AbortController();
    const timer = setTimeout(() => headersTimeout.abort(new DOMException('headers timeout', 'TimeoutError')), this.requestTimeoutMs);
    const spec: RequestSpec = {
      method: 'GET',
      path: `${sessionPath(sessionId)}/events/stream`,
      query: { after_id: afterId ?? undefined },
      subject: `session ${sessionId}`,
    };
    const extra: Record<string, string> = { accept: 'text/event-stream' };
    if (afterId !== null) extra['last-event-id'] = afterId;
    try {
      const response = await this.send(spec, AbortSignal.any([signal, headersTimeout.signal]), signal, extra);
      if (!response.ok) throw await this.errorFor(response, spec);
      const type = response.headers.get('content-type') ?? '';
      if (!type.toLowerCase().startsWith('text/event-stream')) {
        await response.body?.cancel().catch(() => {});
        throw this.badResponse(`a stream answer of type "${type || 'none'}" instead of text/event-stream`);
      }
      return response;
    } finally {
      clearTimeout(timer);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Plumbing

  private async requestJson(spec: RequestSpec): Promise<unknown> {
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

  private async send(spec: RequestSpec, signal: AbortSignal, callerSignal: AbortSignal | undefined, extra: Record<string, string> = {}): Promise<Response> {
    callerSignal?.throwIfAborted();
    const url = new URL(this.baseUrl + spec.path);
    for (const [key, value] of Object.entries(spec.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
    const headers = await this.headers(extra);
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
    let token: string;
    try {
      token = await this.options.getToken();
    } catch (err) {
      if (err instanceof SessionsError) throw err;
      throw new SessionsError('unauthorized', `Could not read the token for ${this.baseUrl}: ${err instanceof Error ? err.message : String(err)}`, undefined, undefined, { cause: err });
    }
    this.rememberSentToken(token);
    const fromCaller = this.options.extraHeaders ? await this.options.extraHeaders() : {};
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(fromCaller)) {
      // The caller adds headers; it never replaces the protocol's own.
      if (!PROTOCOL_HEADERS.has(key.toLowerCase())) headers[key.toLowerCase()] = value;
    }
    return {
      ...headers,
      ...extra,
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
      'anthropic-beta': CCR_BETA,
    };
  }

  private networkError(err: unknown, spec: RequestSpec, callerSignal: AbortSignal | undefined): unknown {
    // The caller's own abort is not a failure of the server: hand it back as it came.
    if (callerSignal?.aborted) return callerSignal.reason ?? err;
    const what = `${spec.method} ${spec.path}`;
    if (isTimeout(err)) {
      return new SessionsError('transient', `The session server at ${this.baseUrl} did not answer ${what} within ${formatMs(this.requestTimeoutMs)}.`, undefined, undefined, { cause: err });
    }
    return new SessionsError('transient', `Could not reach the session server at ${this.baseUrl} (${networkCause(err)}) for ${what}.`, undefined, undefined, { cause: err });
  }

  private async errorFor(response: Response, spec: RequestSpec): Promise<SessionsError> {
    const status = response.status;
    const serverSays = await this.serverMessage(response);
    const detail = serverSays ? `: ${serverSays}` : '';
    const subject = spec.subject ?? spec.path;
    if (status === 401 || status === 403) {
      return new SessionsError('unauthorized', `The session server at ${this.baseUrl} refused the token (HTTP ${status}${detail}). Check the token or sign in again.`, status);
    }
    if (status === 404) return new SessionsError('not_found', `${capitalize(subject)} was not found at ${this.baseUrl} (HTTP 404${detail}).`, status);
    if (status === 409) return new SessionsError('conflict', `${capitalize(subject)} is archived and accepts no more changes (HTTP 409${detail}).`, status);
    if (status === 429 || status >= 500) {
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      const wait = retryAfterMs === undefined ? '' : ` It asks to retry after ${formatMs(retryAfterMs)}.`;
      const what = status === 429 ? 'is busy' : 'had an error';
      return new SessionsError('transient', `The session server at ${this.baseUrl} ${what} on ${spec.method} ${spec.path} (HTTP ${status}${detail}).${wait}`, status, retryAfterMs);
    }
    if (status >= 400) return new SessionsError('bad_request', `The session server at ${this.baseUrl} refused ${spec.method} ${spec.path} (HTTP ${status}${detail}).`, status);
    // 1xx/3xx reaching us means a redirect we did not follow or a broken proxy.
    return this.badResponse(`HTTP ${status} for ${spec.method} ${spec.path}`, status);
  }

  /** The server's own error message, if the body is the protocol's error shape. */
  private async serverMessage(response: Response): Promise<string | undefined> {
    let text: string;
    try {
      text = await response.text();
    } catch {
      return undefined;
    }
    try {
      const parsed = ErrorBodySchema.safeParse(JSON.parse(text));
      if (parsed.success) return this.redact(parsed.data.error.message).slice(0, 300);
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

  private check<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw this.badResponse(`an answer that is not a valid ${what} (${issue?.message ?? 'invalid'}${where})`);
  }

  private badResponse(what: string, status?: number): SessionsError {
    return new SessionsError('bad_response', `The session server at ${this.baseUrl} sent ${what}.`, status);
  }
}

const PROTOCOL_HEADERS = new Set(['authorization', 'content-type', 'anthropic-version', 'anthropic-beta']);

function sessionPath(sessionId: string): string {
  return `/v1/sessions/${encodeURIComponent(sessionId)}`;
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
  return cause instanceof Error ? cause.message : String(cause);
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

// The one HTTP client for the Sessions API, for our own server and for Claude Code on the web: the
// current wire, `/v1/code/sessions` (docs/protocol.md section 9), with the headers Claude Code sends.
// Every answer is checked with zod and every failure becomes a SessionsError whose kind the poller
// switches on; messages are for people and never hold a token.
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import {
  CLIENT_PLATFORM,
  readEventItem,
  sortEventItems,
  CodeEventPageSchema,
  CodeSessionEnvelopeSchema,
  CodeSessionListSchema,
  LIST_PAGE_SIZE,
  MAX_LISTED_SESSIONS,
  MAX_LIST_PAGES,
  CodeSessionSchema,
  ListedCodeSessionSchema,
  USER_AGENT_PRODUCT,
  codeSessionStatus,
  toCodeCreateRequest,
  toCodeSessionId,
  toSessionResource,
  toV1CreateRequest,
  withUuid,
  type CodeEventPage,
} from '../core/codeSessions';
import {
  ANTHROPIC_VERSION,
  CCR_BETA,
  ErrorBodySchema,
  SessionResourceSchema,
  type AnyEvent,
  type CreateSessionRequest,
  type SessionResource,
  type SessionStatus,
} from '../core/protocol';
import { SessionsError } from '../core/errors';
import { SESSION_ID_PATTERN } from '../core/attachTarget';
import { REQUEST_REFUSED_REASON } from './requestGuard';
import type { EventRead, SessionTransport } from '../core/transport';
import { version as PRODUCT_VERSION } from '../../package.json';

/** At most this many pages in one read (docs/protocol.md section 9); the rest waits for the next poll. */
export const MAX_EVENT_PAGES_PER_READ = 50;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Waits before repeating an archive answered 409, as Claude Code does; then it is a failure. */
export const ARCHIVE_CONFLICT_RETRY_MS: readonly number[] = [250, 750];
export const DEFAULT_USER_AGENT = `${USER_AGENT_PRODUCT}/${PRODUCT_VERSION}`;

export interface ListSessionsOptions {
  signal?: AbortSignal;
  /** Page size sent as `limit` (default LIST_PAGE_SIZE). */
  limit?: number;
  maxPages?: number;
  /** Stop once this many sessions are read (default MAX_LISTED_SESSIONS). */
  maxSessions?: number;
}

export interface SessionsClientOptions {
  /** e.g. http://127.0.0.1:8787 or https://api.anthropic.com (a path prefix is kept). */
  baseUrl: string;
  /**
   * Called before every request, so a token refreshed meanwhile is picked up. null: no
   * Authorization header (reading a server that runs without a token, for a read-only attach).
   */
  getToken: () => Promise<string | null>;
  /**
   * Claude Code on the web: the organization, sent as x-organization-uuid on the session create
   * only (as Claude Code does); the create is tried on the older `/v1/sessions` first when
   * `createOnV1First` is set, and repeated once on `/v1/code/sessions` after `sessions_v1_retired`.
   */
  organizationUuid?: string;
  createOnV1First?: boolean;
  /** Bound on each request, from sending to the last byte of the answer. */
  requestTimeoutMs?: number;
  /** The archive 409 retry waits; tests shorten them. */
  archiveRetryMs?: readonly number[];
  /** Default `ultraplan-vscode/<version>`. */
  userAgent?: string;
  fetch?: typeof fetch;
  /** Diagnostic lines (never a token). */
  log?: (line: string) => void;
  /** Tests fix the uuids given to the events we send. */
  newUuid?: () => string;
}

/** What one multi-page read brought, beyond what the poller needs. */
export interface EventsReadResult extends EventRead {
  /** Pages fetched. */
  pages: number;
  /** True when the page cap stopped the read before the server's last page. */
  hasMore: boolean;
  /** Items left out because their type is skipped (env_manager_log, control_response). */
  skipped: number;
  /** Items left out because they are not `{sequence_num, payload}` with an object payload with a string `type`. */
  invalid: number;
}

export interface ReadEventsOptions {
  signal?: AbortSignal;
  /** Page size; only tests against our own server use it (Claude Code never sends one). */
  limit?: number;
  maxPages?: number;
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
  /** Headers this call adds (the organization on create, the beta on the older create). */
  headers?: Record<string, string>;
}

const MIN_REDACTED_TOKEN_CHARS = 8;
const MAX_REMEMBERED_TOKENS = 4;

export class SessionsClient implements SessionTransport {
  readonly baseUrl: string;
  readonly requestTimeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly log: (line: string) => void;
  private readonly newUuid: () => string;
  private readonly userAgent: string;
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
    this.newUuid = options.newUuid ?? randomUUID;
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  }

  // ---------------------------------------------------------------------------------------------
  // Section 9 calls

  /**
   * Creates a session. The body is the current one (`events:[{payload}]`, `config`); with
   * createOnV1First the older `/v1/sessions` is asked first, as Claude Code still does.
   */
  async createSession(request: CreateSessionRequest, signal?: AbortSignal): Promise<SessionResource> {
    const body = toCodeCreateRequest(request, this.newUuid);
    const organization: Record<string, string> = this.options.organizationUuid
      ? { 'x-organization-uuid': this.options.organizationUuid }
      : {};
    if (this.options.createOnV1First) {
      try {
        const answer = await this.requestJson({
          method: 'POST',
          path: '/v1/sessions',
          body: toV1CreateRequest(body),
          signal,
          subject: 'a new session',
          headers: { ...organization, 'anthropic-beta': CCR_BETA },
        });
        return this.check(SessionResourceSchema, answer, 'session resource');
      } catch (err) {
        if (serverErrorReason(err) !== 'sessions_v1_retired') throw err;
        this.log('POST /v1/sessions answered sessions_v1_retired; repeating the create on /v1/code/sessions');
      }
    }
    const answer = await this.requestJson({
      method: 'POST',
      path: '/v1/code/sessions',
      body,
      signal,
      subject: 'a new session',
      headers: organization,
    });
    return toSessionResource(this.check(CodeSessionEnvelopeSchema, answer, 'session envelope').session);
  }

  async getSession(sessionId: string, signal?: AbortSignal): Promise<SessionResource> {
    const body = await this.requestJson({ method: 'GET', path: sessionPath(sessionId), signal, subject: `session ${sessionId}` });
    return toSessionResource(this.check(CodeSessionEnvelopeSchema, body, 'session envelope').session);
  }

  /**
   * The sessions the server lists, newest first: `GET /v1/code/sessions?limit=` paged with
   * `&cursor=<next_cursor>` (as Claude Code lists them), bounded in pages and sessions. An item that
   * is not a session, or whose id is outside the id alphabet, is left out and counted in the log.
   */
  async listSessions(options: ListSessionsOptions = {}): Promise<SessionResource[]> {
    const maxPages = options.maxPages ?? MAX_LIST_PAGES;
    const maxSessions = options.maxSessions ?? MAX_LISTED_SESSIONS;
    const sessions: SessionResource[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    let invalid = 0;
    for (let page = 0; page < maxPages && sessions.length < maxSessions; page++) {
      const body = await this.requestJson({
        method: 'GET',
        path: '/v1/code/sessions',
        query: { limit: String(options.limit ?? LIST_PAGE_SIZE), cursor },
        signal: options.signal,
        subject: 'the session list',
      });
      const list = this.check(CodeSessionListSchema, body, 'session list');
      for (const raw of list.data) {
        const item = ListedCodeSessionSchema.safeParse(raw);
        if (!item.success || !SESSION_ID_PATTERN.test(item.data.id)) {
          invalid++;
          continue;
        }
        const resource = toSessionResource(item.data);
        if (seen.has(resource.id)) continue;
        seen.add(resource.id);
        if (sessions.length < maxSessions) sessions.push(resource);
      }
      const next = list.next_cursor ?? '';
      if (next === '' || next === cursor) break;
      cursor = next;
    }
    if (invalid > 0) this.log(`session list: left out ${invalid} item(s) that are not sessions with a valid id`);
    return sessions;
  }

  /** One page of events after the cursor (null: from the start), unfiltered. */
  async readEventsPage(
    sessionId: string,
    cursor: string | null,
    options: { signal?: AbortSignal; limit?: number } = {},
  ): Promise<CodeEventPage> {
    const body = await this.requestJson({
      method: 'GET',
      path: `${sessionPath(sessionId)}/events`,
      query: { sort_order: 'asc', cursor: cursor ?? undefined, limit: options.limit === undefined ? undefined : String(options.limit) },
      signal: options.signal,
      subject: `session ${sessionId}`,
    });
    return this.check(CodeEventPageSchema, body, 'event page');
  }

  /**
   * Pages through events after `cursor` until `next_cursor` is empty or the page cap is hit. The
   * cursor is the last item's sequence number; skipped types and invalid items are left out (and
   * counted) while the cursor still moves past them.
   */
  async readEventsPages(sessionId: string, cursor: string | null, options: ReadEventsOptions = {}): Promise<EventsReadResult> {
    const maxPages = options.maxPages ?? MAX_EVENT_PAGES_PER_READ;
    const payloads: unknown[] = [];
    let position = cursor;
    let pages = 0;
    let invalid = 0;
    let hasMore = true;
    while (hasMore && pages < maxPages) {
      const requested = position;
      const page = await this.readEventsPage(sessionId, requested, { signal: options.signal, limit: options.limit });
      pages++;
      for (const raw of page.data) {
        const item = readEventItem(raw);
        if (!item) {
          invalid++;
          continue;
        }
        position = item.sequence;
        payloads.push(item.payload);
      }
      const next = page.next_cursor ?? '';
      hasMore = next !== '';
      // A server that says "more" without moving the cursor would keep us here forever.
      if (hasMore && next === requested)
        throw this.badResponse('an event page whose next_cursor does not move past the cursor it was asked for');
      if (hasMore) position = next;
    }
    const sorted = sortEventItems(payloads);
    invalid += sorted.invalid;
    if (invalid > 0)
      this.log(`session ${sessionId}: left out ${invalid} event item(s) that are not {sequence_num, payload} with a typed payload`);
    return { events: sorted.events, lastId: position, pages, hasMore, skipped: sorted.skipped, invalid };
  }

  /** SessionTransport: the poller's read. */
  readEvents(sessionId: string, cursor: string | null, signal?: AbortSignal): Promise<EventsReadResult> {
    return this.readEventsPages(sessionId, cursor, { signal });
  }

  /** SessionTransport: `archived`, else the worker's status. */
  async getStatus(sessionId: string, signal?: AbortSignal): Promise<SessionStatus | string> {
    const body = await this.requestJson({ method: 'GET', path: sessionPath(sessionId), signal, subject: `session ${sessionId}` });
    return codeSessionStatus(this.check(z.looseObject({ session: CodeSessionSchema }), body, 'session envelope').session);
  }

  /** Sends events as `{events:[{payload:{uuid, …}}]}`, each with a fresh uuid. */
  async sendEvents(sessionId: string, events: AnyEvent[], signal?: AbortSignal): Promise<void> {
    if (events.length === 0) return;
    const body = { events: events.map((event) => ({ payload: withUuid(event, this.newUuid) })) };
    await this.requestJson({ method: 'POST', path: `${sessionPath(sessionId)}/events`, body, signal, subject: `session ${sessionId}` });
  }

  /** Archives a session; a 409 is repeated after 250 ms and 750 ms, then it is a failure. */
  async archive(sessionId: string, signal?: AbortSignal): Promise<void> {
    const waits = this.options.archiveRetryMs ?? ARCHIVE_CONFLICT_RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.requestJson({
          method: 'POST',
          path: `${sessionPath(sessionId)}/archive`,
          body: {},
          signal,
          subject: `session ${sessionId}`,
        });
        return;
      } catch (err) {
        const wait = waits[attempt];
        if (!(err instanceof SessionsError) || err.kind !== 'conflict' || wait === undefined) throw err;
        this.log(`session ${sessionId}: archive answered 409; trying again in ${wait} ms`);
        await sleep(wait, signal);
      }
    }
  }

  /**
   * Opens GET …/events/stream (SSE, resumed with `from_sequence_num`) and returns the response
   * once its headers are in. The request timeout covers only the wait for headers: the body is
   * meant to stay open, bounded by `signal`. Non-2xx answers throw the same SessionsError kinds
   * as every other call.
   */
  async openEventStream(sessionId: string, cursor: string | null, signal: AbortSignal): Promise<Response> {
    const headersTimeout = new AbortController();
    const timer = setTimeout(() => headersTimeout.abort(new DOMException('headers timeout', 'TimeoutError')), this.requestTimeoutMs);
    const extra: Record<string, string> = { accept: 'text/event-stream' };
    if (cursor !== null) extra['last-event-id'] = cursor;
    const spec: RequestSpec = {
      method: 'GET',
      path: `${sessionPath(sessionId)}/events/stream`,
      query: { from_sequence_num: cursor ?? undefined },
      subject: `session ${sessionId}`,
      headers: extra,
    };
    try {
      const response = await this.send(spec, AbortSignal.any([signal, headersTimeout.signal]), signal);
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

  private async send(spec: RequestSpec, signal: AbortSignal, callerSignal: AbortSignal | undefined): Promise<Response> {
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
      throw new SessionsError(
        'unauthorized',
        `Could not read the token for ${this.baseUrl}: ${err instanceof Error ? err.message : String(err)}`,
        undefined,
        undefined,
        { cause: err },
      );
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

  private async errorFor(response: Response, spec: RequestSpec): Promise<SessionsError> {
    const status = response.status;
    const server = await this.serverError(response);
    const serverSays = server?.message;
    const detail = serverSays ? `: ${serverSays}` : '';
    const subject = spec.subject ?? spec.path;
    if (status === 403 && server?.reason === REQUEST_REFUSED_REASON) {
      // Host, Origin or Content-Type: a proxy or a name the server was not started with, not the token.
      return new SessionsError('unauthorized', `The session server at ${this.baseUrl} refused the request (HTTP 403${detail}).`, status);
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
      const what = status === 429 ? 'is busy' : 'had an error';
      return new SessionsError(
        'transient',
        `The session server at ${this.baseUrl} ${what} on ${spec.method} ${spec.path} (HTTP ${status}${detail}).${wait}`,
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

/** `error.reason` of a refusal (e.g. `sessions_v1_retired`), kept beside the error we throw. */
const ErrorReasonSchema = z.looseObject({ error: z.looseObject({ reason: z.string() }) });

const SERVER_REASONS = new WeakMap<SessionsError, string>();

export function serverErrorReason(err: unknown): string | undefined {
  return err instanceof SessionsError ? SERVER_REASONS.get(err) : undefined;
}

function sessionPath(sessionId: string): string {
  return `/v1/code/sessions/${encodeURIComponent(toCodeSessionId(sessionId))}`;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
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

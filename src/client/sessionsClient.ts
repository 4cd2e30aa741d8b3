// The one HTTP client for the Sessions API, for our own server and for Claude Code on the web: the
// current wire, `/v1/code/sessions` (docs/protocol.md section 9). The calls are here; the exchange
// under them (headers, bounds, zod checks, failures as SessionsError) is sessionsHttp.ts.
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import {
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
  readEventItem,
  sortEventItems,
} from '../core/codeSessions';
import {
  CCR_BETA,
  SessionResourceSchema,
  type AnyEvent,
  type CreateSessionRequest,
  type SessionResource,
  type SessionStatus,
} from '../core/protocol';
import { SessionsError } from '../core/errors';
import { ApprovalStateSchema } from '../core/planApprovals';
import type { EventsSent } from '../core/sessionBackend';
import { SESSION_ID_PATTERN } from '../core/attachTarget';
import { SessionsHttp, serverErrorReason, type RequestSpec } from './sessionsHttp';
import type { EventRead, SessionTransport } from '../core/transport';
import { version as PRODUCT_VERSION } from '../../package.json';

/** At most this many pages in one read (docs/protocol.md section 9); the rest waits for the next poll. */
export const MAX_EVENT_PAGES_PER_READ = 50;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Waits before repeating an archive answered 409, as Claude Code does; then it is a failure. */
export const ARCHIVE_CONFLICT_RETRY_MS: readonly number[] = [250, 750];
export { parseRetryAfter, serverErrorReason } from './sessionsHttp';

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

export class SessionsClient implements SessionTransport {
  readonly baseUrl: string;
  readonly requestTimeoutMs: number;
  /** The exchange, for the calls of this client kept in modules of their own (changesSinceApproval.ts). */
  readonly http: SessionsHttp;
  private readonly log: (line: string) => void;
  private readonly newUuid: () => string;

  constructor(private readonly options: SessionsClientOptions) {
    const parsed = new URL(options.baseUrl);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new SessionsError('bad_request', `The session server address must start with http:// or https:// (got ${parsed.protocol}).`);
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.log = options.log ?? (() => {});
    this.newUuid = options.newUuid ?? randomUUID;
    this.http = new SessionsHttp({
      baseUrl: this.baseUrl,
      getToken: options.getToken,
      requestTimeoutMs: this.requestTimeoutMs,
      userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
      fetch: options.fetch ?? globalThis.fetch,
    });
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
        const answer = await this.http.json({
          method: 'POST',
          path: '/v1/sessions',
          body: toV1CreateRequest(body),
          signal,
          subject: 'a new session',
          headers: { ...organization, 'anthropic-beta': CCR_BETA },
        });
        return this.http.check(SessionResourceSchema, answer, 'session resource');
      } catch (err) {
        if (serverErrorReason(err) !== 'sessions_v1_retired') throw err;
        this.log('POST /v1/sessions answered sessions_v1_retired; repeating the create on /v1/code/sessions');
      }
    }
    const answer = await this.http.json({
      method: 'POST',
      path: '/v1/code/sessions',
      body,
      signal,
      subject: 'a new session',
      headers: organization,
    });
    return toSessionResource(this.http.check(CodeSessionEnvelopeSchema, answer, 'session envelope').session);
  }

  async getSession(sessionId: string, signal?: AbortSignal): Promise<SessionResource> {
    const body = await this.http.json({ method: 'GET', path: sessionPath(sessionId), signal, subject: `session ${sessionId}` });
    return toSessionResource(this.http.check(CodeSessionEnvelopeSchema, body, 'session envelope').session);
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
      const body = await this.http.json({
        method: 'GET',
        path: '/v1/code/sessions',
        query: { limit: String(options.limit ?? LIST_PAGE_SIZE), cursor },
        signal: options.signal,
        subject: 'the session list',
      });
      const list = this.http.check(CodeSessionListSchema, body, 'session list');
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
    const body = await this.http.json({
      method: 'GET',
      path: `${sessionPath(sessionId)}/events`,
      query: { sort_order: 'asc', cursor: cursor ?? undefined, limit: options.limit === undefined ? undefined : String(options.limit) },
      signal: options.signal,
      subject: `session ${sessionId}`,
    });
    return this.http.check(CodeEventPageSchema, body, 'event page');
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
        throw this.http.badResponse('an event page whose next_cursor does not move past the cursor it was asked for');
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
    const body = await this.http.json({ method: 'GET', path: sessionPath(sessionId), signal, subject: `session ${sessionId}` });
    return codeSessionStatus(this.http.check(z.looseObject({ session: CodeSessionSchema }), body, 'session envelope').session);
  }

  /** Sends events as `{events:[{payload:{uuid, …}}]}`, each with a fresh uuid. */
  async sendEvents(sessionId: string, events: AnyEvent[], signal?: AbortSignal): Promise<EventsSent> {
    if (events.length === 0) return {};
    const body = { events: events.map((event) => ({ payload: withUuid(event, this.newUuid) })) };
    const answer = await this.http.json({
      method: 'POST',
      path: `${sessionPath(sessionId)}/events`,
      body,
      signal,
      subject: `session ${sessionId}`,
    });
    // A team server with a quorum answers an approval short of it with its state (HTTP 202).
    if (answer === null || typeof answer !== 'object' || !('approval' in answer)) return {};
    return { approval: this.http.check(ApprovalStateSchema, answer.approval, 'approval state') };
  }

  /** Archives a session; a 409 is repeated after 250 ms and 750 ms, then it is a failure. */
  async archive(sessionId: string, signal?: AbortSignal): Promise<void> {
    const waits = this.options.archiveRetryMs ?? ARCHIVE_CONFLICT_RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.http.json({
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
      const response = await this.http.send(spec, AbortSignal.any([signal, headersTimeout.signal]), signal);
      if (!response.ok) throw await this.http.errorFor(response, spec);
      const type = response.headers.get('content-type') ?? '';
      if (!type.toLowerCase().startsWith('text/event-stream')) {
        await response.body?.cancel().catch(() => {});
        throw this.http.badResponse(`a stream answer of type "${type || 'none'}" instead of text/event-stream`);
      }
      return response;
    } finally {
      clearTimeout(timer);
    }
  }
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

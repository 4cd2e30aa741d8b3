// The current Sessions wire on our own server, `/v1/code/sessions` (docs/protocol.md section 9), so the
// extension speaks one wire to our server and to Claude Code on the web: the session in a
// `{session}` envelope with `status` and `worker_status`, events as `{sequence_num, payload}` read
// with `sort_order=asc&cursor=`, events sent wrapped as `{payload}`, the live stream as
// `client_event` frames. The older `/v1/sessions` routes in server.ts stay for older clients.
import type * as http from 'node:http';
import * as z from 'zod';
import {
  CodeCreateRequestSchema,
  CodeSendRequestSchema,
  STREAM_EVENT_FRAME,
  toLinkSessionId,
  toV1CreateRequest,
  toCodeSessionId,
} from '../../core/codeSessions';
import { SessionsError } from '../../core/errors';
import type { CreateSessionRequest, SessionResource } from '../../core/protocol';
import { formatEventId, newestFirst, type SessionHost, type StoredEvent } from '../host';

/** What the route handlers need from the server that owns the socket and its limits. */
/** One open event stream: frames are written until it ends. */
export interface EventStreamWriter {
  write(frame: string): void;
  end(): void;
  readonly ended: boolean;
}

export interface CodeRouteContext {
  host: SessionHost;
  /** Creates a session with the agent the server gives it. */
  createSession(request: CreateSessionRequest): Promise<SessionResource>;
  readJson(req: http.IncomingMessage, optional?: boolean): Promise<unknown>;
  send(res: http.ServerResponse, status: number, body: unknown): void;
  /** The server's event stream, within its caps, with keep-alives and the slow-reader bound. */
  openEventStream(res: http.ServerResponse, id: string, onEnd: () => void, headers?: Record<string, string>): EventStreamWriter;
}

const MAX_PAGE = 1000;
/** Sessions in one list page: the service's own bound (Claude Code asks for `limit=100`). */
export const MAX_LIST_PAGE = 100;
export const DEFAULT_LIST_PAGE = 50;

/** Handles `/v1/code/sessions…`; `parts` are the decoded path segments after `/v1/code/sessions`. */
export async function handleCodeRoute(
  ctx: CodeRouteContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  method: string,
  url: URL,
  parts: string[],
): Promise<void> {
  const [rawId, ...rest] = parts;
  const tail = rest.join('/');
  if (rawId === undefined) {
    if (method === 'GET') return ctx.send(res, 200, listPage(ctx.host, url.searchParams));
    if (method !== 'POST') throw notAllowed('GET, POST');
    const body = CodeCreateRequestSchema.safeParse(await ctx.readJson(req));
    if (!body.success) throw schemaError('invalid session request', body.error);
    const created = await ctx.createSession(toV1CreateRequest(body.data));
    return ctx.send(res, 200, envelope(created));
  }
  const id = toLinkSessionId(rawId);
  if (tail === '') {
    if (method !== 'GET') throw notAllowed('GET');
    return ctx.send(res, 200, envelope(ctx.host.getSession(id)));
  }
  if (tail === 'events') {
    if (method === 'GET') return ctx.send(res, 200, readPage(ctx.host, id, url.searchParams));
    if (method === 'POST') {
      const body = CodeSendRequestSchema.safeParse(await ctx.readJson(req));
      if (!body.success) throw schemaError('invalid events request', body.error);
      const stored = await ctx.host.appendEvents(
        id,
        body.data.events.map((e) => e.payload),
      );
      return ctx.send(res, 200, { results: stored.map((e) => ({ sequence_num: sequenceOf(e), duplicate: false })) });
    }
    throw notAllowed('GET, POST');
  }
  if (tail === 'events/stream') {
    if (method !== 'GET') throw notAllowed('GET');
    return stream(ctx, req, res, id, url);
  }
  if (tail === 'archive') {
    if (method !== 'POST') throw notAllowed('POST');
    await ctx.readJson(req, true);
    // Archiving twice is done, not a conflict: a 409 on this route means "try again" (as the service).
    if (ctx.host.getSession(id).session_status !== 'archived') await ctx.host.archive(id);
    return ctx.send(res, 200, envelope(ctx.host.getSession(id)));
  }
  throw new SessionsError('not_found', `no such route: ${url.pathname}`, 404);
}

/** The session as the current wire has it. */
export function envelope(session: SessionResource): { session: Record<string, unknown> } {
  const archived = session.session_status === 'archived';
  return {
    session: {
      id: toCodeSessionId(session.id),
      title: session.title,
      status: archived ? 'archived' : 'active',
      worker_status: archived ? 'idle' : session.session_status,
      environment_id: session.environment_id ?? null,
      created_at: session.created_at,
      updated_at: session.updated_at,
      config: session.session_context ?? null,
    },
  };
}

export function sequenceOf(event: StoredEvent): number {
  const match = /^e_(\d+)$/.exec(event.id);
  return match ? Number(match[1]) : 0;
}

function item(event: StoredEvent): { sequence_num: number; payload: Record<string, unknown> } {
  const { id: _id, ...payload } = event;
  return { sequence_num: sequenceOf(event), payload };
}

/**
 * One page of the session list, newest first (by creation, then id), as the service answers it:
 * `{data:[session…], next_cursor}`, the cursor being the last listed id (either id form).
 */
function listPage(host: SessionHost, query: URLSearchParams): { data: unknown[]; next_cursor: string | null } {
  const limitText = query.get('limit');
  const given = limitText !== null && limitText !== '';
  const limit = given ? Number(limitText) : DEFAULT_LIST_PAGE;
  if (given && (!/^\d{1,4}$/.test(limitText) || limit < 1 || limit > MAX_LIST_PAGE)) {
    throw new SessionsError(
      'bad_request',
      `limit must be an integer from 1 to ${MAX_LIST_PAGE}, got ${JSON.stringify((limitText ?? '').slice(0, 20))}`,
      400,
    );
  }
  const all = newestFirst(host.listSessions());
  const cursor = query.get('cursor');
  let start = 0;
  if (cursor !== null && cursor !== '') {
    const at = all.findIndex((s) => s.id === toLinkSessionId(cursor));
    if (at < 0)
      throw new SessionsError(
        'bad_request',
        `cursor must be a next_cursor this server gave; ${JSON.stringify(cursor.slice(0, 60))} is not`,
        400,
      );
    start = at + 1;
  }
  const page = all.slice(start, start + limit);
  const more = start + page.length < all.length;
  const last = page[page.length - 1];
  return { data: page.map((s) => envelope(s).session), next_cursor: more && last ? toCodeSessionId(last.id) : null };
}

function parseSequence(value: string | null, name: string): number | null {
  if (value === null || value === '') return null;
  if (!/^\d{1,15}$/.test(value))
    throw new SessionsError('bad_request', `${name} must be a sequence number, got ${JSON.stringify(value.slice(0, 40))}`, 400);
  return Number(value);
}

function readPage(host: SessionHost, id: string, query: URLSearchParams): { data: unknown[]; next_cursor: string | null } {
  const order = query.get('sort_order');
  if (order !== null && order !== 'asc')
    throw new SessionsError('bad_request', `sort_order must be "asc", got ${JSON.stringify(order.slice(0, 20))}`, 400);
  const cursor = parseSequence(query.get('cursor'), 'cursor');
  const limitText = query.get('limit');
  const limit = limitText === null || limitText === '' ? undefined : Number(limitText);
  if (limit !== undefined && (!/^\d+$/.test(limitText ?? '') || limit < 1 || limit > MAX_PAGE)) {
    throw new SessionsError(
      'bad_request',
      `limit must be an integer from 1 to ${MAX_PAGE}, got ${JSON.stringify((limitText ?? '').slice(0, 20))}`,
      400,
    );
  }
  const page = host.readEvents(id, cursor === null ? null : formatEventId(cursor), limit);
  const last = page.data[page.data.length - 1];
  return { data: page.data.map(item), next_cursor: page.has_more && last ? String(sequenceOf(last)) : null };
}

/**
 * The live stream: the backlog after `from_sequence_num` (or Last-Event-ID), then each new event,
 * as `client_event` frames whose id is the sequence number; a comment line keeps it open. The
 * session's status is not on the stream (as on the service): clients read it with GET.
 */
function stream(ctx: CodeRouteContext, req: http.IncomingMessage, res: http.ServerResponse, id: string, url: URL): void {
  const lastEventId = req.headers['last-event-id'];
  const from = parseSequence(
    url.searchParams.get('from_sequence_num') ?? (typeof lastEventId === 'string' ? lastEventId : null),
    'from_sequence_num',
  );
  ctx.host.getSession(id); // 404 before any stream header is written
  let cursor: string | null = from === null ? null : formatEventId(from);
  let unsubscribe = (): void => {};
  const stream = ctx.openEventStream(res, id, () => unsubscribe(), { date: new Date().toUTCString() });
  // Headers go out now, not with the first event: the client counts the stream as open from them.
  res.flushHeaders();
  const writeEvent = (event: StoredEvent): void => {
    if (cursor !== null && event.id <= cursor) return;
    cursor = event.id;
    const frame = item(event);
    stream.write(
      `event: ${STREAM_EVENT_FRAME}\nid: ${frame.sequence_num}\ndata: ${JSON.stringify({ ...frame, event_type: frame.payload.type })}\n\n`,
    );
  };
  // Backlog and subscription in one synchronous run, so no event commits between them.
  for (let guard = 0; guard < 1_000_000; guard++) {
    const page = ctx.host.readEvents(id, cursor, MAX_PAGE);
    for (const event of page.data) writeEvent(event);
    if (!page.has_more || stream.ended) break;
  }
  if (stream.ended) return;
  if (ctx.host.getSession(id).session_status === 'archived') return stream.end();
  unsubscribe = ctx.host.subscribe(id, (notice) => {
    if (notice.event) writeEvent(notice.event);
    if (notice.status === 'archived') stream.end();
  });
}

function notAllowed(allow: string): SessionsError {
  return new SessionsError('bad_request', `method not allowed here; allowed: ${allow}`, 405);
}

function schemaError(what: string, error: z.ZodError): SessionsError {
  return new SessionsError('bad_request', `${what}: ${z.prettifyError(error).replace(/\s*\n\s*/g, '; ')}`, 400);
}

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
import { formatEventId, type StoredEvent } from '../host/sessionHost';
import type { ServerStore } from '../store/serverStore';
import { approvalAnswer } from './approvalAnswer';
import { followSession, type EventStreamWriter } from '../workers/sessionFollower';

/** What the route handlers need from the server that owns the socket and its limits. */
export interface CodeRouteContext {
  store: ServerStore;
  log: (line: string) => void;
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
    if (method === 'GET') return ctx.send(res, 200, await listPage(ctx.store, url.searchParams));
    if (method !== 'POST') throw notAllowed('GET, POST');
    const body = CodeCreateRequestSchema.safeParse(await ctx.readJson(req));
    if (!body.success) throw schemaError('invalid session request', body.error);
    const created = await ctx.createSession(toV1CreateRequest(body.data));
    return ctx.send(res, 200, envelope(created));
  }
  const id = toLinkSessionId(rawId);
  if (tail === '') {
    if (method !== 'GET') throw notAllowed('GET');
    return ctx.send(res, 200, envelope(await ctx.store.getSession(id)));
  }
  if (tail === 'events') {
    if (method === 'GET') return ctx.send(res, 200, await readPage(ctx.store, id, url.searchParams));
    if (method === 'POST') {
      const body = CodeSendRequestSchema.safeParse(await ctx.readJson(req));
      if (!body.success) throw schemaError('invalid events request', body.error);
      const stored = await ctx.store.appendEvents(
        id,
        body.data.events.map((e) => e.payload),
      );
      const results = stored.map((a) => ({ sequence_num: sequenceOf(a.event), duplicate: a.duplicate }));
      const approval = approvalAnswer(stored);
      return ctx.send(res, approval?.status ?? 200, { results, ...(approval ? { approval: approval.body } : {}) });
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
    if ((await ctx.store.getSession(id)).session_status !== 'archived') {
      await ctx.store.archive(id).catch((err: unknown) => {
        // Archived meanwhile by another request (or replica): still done.
        if (!(err instanceof SessionsError && err.status === 409)) throw err;
      });
    }
    return ctx.send(res, 200, envelope(await ctx.store.getSession(id)));
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
      ...(session.owner ? { owner: session.owner } : {}),
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
async function listPage(store: ServerStore, query: URLSearchParams): Promise<{ data: unknown[]; next_cursor: string | null }> {
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
  const cursor = query.get('cursor');
  const page = await store.listSessions(limit, cursor === null || cursor === '' ? null : toLinkSessionId(cursor));
  return {
    data: page.data.map((s) => envelope(s).session),
    next_cursor: page.nextCursor === null ? null : toCodeSessionId(page.nextCursor),
  };
}

function parseSequence(value: string | null, name: string): number | null {
  if (value === null || value === '') return null;
  if (!/^\d{1,15}$/.test(value))
    throw new SessionsError('bad_request', `${name} must be a sequence number, got ${JSON.stringify(value.slice(0, 40))}`, 400);
  return Number(value);
}

async function readPage(store: ServerStore, id: string, query: URLSearchParams): Promise<{ data: unknown[]; next_cursor: string | null }> {
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
  const page = await store.readEvents(id, cursor === null ? null : formatEventId(cursor), limit);
  const last = page.data[page.data.length - 1];
  return { data: page.data.map(item), next_cursor: page.has_more && last ? String(sequenceOf(last)) : null };
}

/**
 * The live stream: the backlog after `from_sequence_num` (or Last-Event-ID), then each new event,
 * as `client_event` frames whose id is the sequence number; a comment line keeps it open. The
 * session's status is not on the stream (as on the service): clients read it with GET.
 */
async function stream(ctx: CodeRouteContext, req: http.IncomingMessage, res: http.ServerResponse, id: string, url: URL): Promise<void> {
  const lastEventId = req.headers['last-event-id'];
  const from = parseSequence(
    url.searchParams.get('from_sequence_num') ?? (typeof lastEventId === 'string' ? lastEventId : null),
    'from_sequence_num',
  );
  await ctx.store.getSession(id); // 404 before any stream header is written
  let stop = (): void => {};
  const stream = ctx.openEventStream(res, id, () => stop(), { date: new Date().toUTCString() });
  // Headers go out now, not with the first event: the client counts the stream as open from them.
  res.flushHeaders();
  stop = followSession(
    ctx.store,
    id,
    from === null ? null : formatEventId(from),
    stream,
    {
      event: (event) => {
        const frame = item(event);
        stream.write(
          `event: ${STREAM_EVENT_FRAME}\nid: ${frame.sequence_num}\ndata: ${JSON.stringify({ ...frame, event_type: frame.payload.type })}\n\n`,
        );
      },
      status: (status) => {
        if (status === 'archived') stream.end();
      },
    },
    ctx.log,
  );
}

function notAllowed(allow: string): SessionsError {
  return new SessionsError('bad_request', `method not allowed here; allowed: ${allow}`, 405);
}

function schemaError(what: string, error: z.ZodError): SessionsError {
  return new SessionsError('bad_request', `${what}: ${z.prettifyError(error).replace(/\s*\n\s*/g, '; ')}`, 400);
}

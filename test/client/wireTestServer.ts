// A minimal server of the current Sessions wire (`/v1/code/sessions`, docs/protocol.md section 9) for
// the client's unit tests: real HTTP on 127.0.0.1, events appended by the test. It exists so the client's edges (headers, ids,
// SSE framing, a server without a stream) can be driven exactly; the integration tests run the
// real dist/server.mjs instead.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WireSession {
  id: string;
  title: string;
  status: string;
  events: Array<Record<string, unknown> & { id: string }>;
}

export interface WireTestServer {
  url: string;
  token: string;
  sessions: Map<string, WireSession>;
  /** Headers of every request, in order. */
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }>;
  addSession(id: string, status?: string): WireSession;
  append(sessionId: string, ...events: Array<Record<string, unknown>>): string[];
  setStatus(sessionId: string, status: string): void;
  /** Open SSE connections. */
  readonly openStreams: number;
  /** Answers a POST of events itself (nothing is appended) when it returns an answer. */
  answerEvents?: (session: WireSession, payloads: Array<Record<string, unknown>>) => { status: number; body: unknown } | undefined;
  close(): Promise<void>;
}

export interface WireTestServerOptions {
  token?: string;
  /** false: the stream route answers 404, like a server without streaming. */
  stream?: boolean;
  /** Status of the stream route when it is off (404 or 405). */
  streamOffStatus?: number;
}

const resource = (s: WireSession) => ({
  session: {
    id: s.id,
    title: s.title,
    status: s.status === 'archived' ? 'archived' : 'active',
    worker_status: s.status === 'archived' ? 'idle' : s.status,
    environment_id: null,
    created_at: '2025-01-01T00:00:00Z',
    updated_at: '2025-01-01T00:00:00Z',
    config: {},
  },
});

/** `{sequence_num, payload}`: the stored id is the sequence number. */
const item = (e: Record<string, unknown> & { id: string }) => {
  const { id, ...payload } = e;
  return { sequence_num: Number(id), payload };
};

export async function startWireTestServer(options: WireTestServerOptions = {}): Promise<WireTestServer> {
  const token = options.token ?? 'test-token-123';
  const sessions = new Map<string, WireSession>();
  const requests: WireTestServer['requests'] = [];
  const listeners = new Map<string, Set<(frame: string) => void>>();
  let seq = 0;
  let openStreams = 0;
  const hooks: Pick<WireTestServer, 'answerEvents'> = {};

  const send = (res: http.ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const error = (res: http.ServerResponse, status: number, type: string, message: string): void =>
    send(res, status, { type: 'error', error: { type, message } });
  const broadcast = (sessionId: string, frame: string): void => {
    for (const listener of listeners.get(sessionId) ?? []) listener(frame);
  };
  const eventFrame = (e: Record<string, unknown> & { id: string }): string =>
    `event: client_event\nid: ${e.id}\ndata: ${JSON.stringify(item(e))}\n\n`;

  const api: Omit<WireTestServer, 'url' | 'close' | 'openStreams'> = {
    token,
    sessions,
    requests,
    addSession(id, status = 'running') {
      const session: WireSession = { id, title: `ultraplan: ${id}`, status, events: [] };
      sessions.set(id, session);
      return session;
    },
    append(sessionId, ...events) {
      const session = sessions.get(sessionId);
      if (!session) throw new Error(`no session ${sessionId}`);
      return events.map((event) => {
        const stored = { ...event, id: String(++seq) };
        session.events.push(stored);
        broadcast(sessionId, eventFrame(stored));
        return stored.id;
      });
    },
    setStatus(sessionId, status) {
      const session = sessions.get(sessionId);
      if (!session) throw new Error(`no session ${sessionId}`);
      session.status = status;
    },
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body });
      if (req.headers.authorization !== `Bearer ${token}`) return error(res, 401, 'authentication_error', 'invalid token');
      const url = new URL(req.url ?? '/', 'http://x');
      const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      if (parts[0] !== 'v1' || parts[1] !== 'code' || parts[2] !== 'sessions') return error(res, 404, 'not_found', 'no such route');
      parts.splice(1, 1);
      if (parts.length === 2 && req.method === 'POST') {
        const parsed = JSON.parse(body) as { title: string; events: Array<{ payload: Record<string, unknown> }> };
        const session = api.addSession(`cse_${++seq}`);
        session.title = parsed.title;
        api.append(session.id, ...parsed.events.map((e) => e.payload));
        return send(res, 201, resource(session));
      }
      const session = sessions.get(parts[2] ?? '');
      if (!session) return error(res, 404, 'not_found', `session ${parts[2]} not found`);
      if (parts.length === 3 && req.method === 'GET') return send(res, 200, resource(session));
      if (parts[3] === 'archive' && req.method === 'POST') {
        if (session.status === 'archived') return error(res, 409, 'conflict', 'already archived');
        api.setStatus(session.id, 'archived');
        return send(res, 200, resource(session));
      }
      if (parts[3] === 'events' && parts.length === 4 && req.method === 'GET') {
        const after = url.searchParams.get('cursor');
        const limit = Number(url.searchParams.get('limit') ?? '100');
        const rest = session.events.filter((e) => after === null || Number(e.id) > Number(after));
        const data = rest.slice(0, limit);
        return send(res, 200, { data: data.map(item), next_cursor: rest.length > limit ? (data.at(-1)?.id ?? null) : null });
      }
      if (parts[3] === 'events' && parts.length === 4 && req.method === 'POST') {
        if (session.status === 'archived') return error(res, 409, 'conflict', 'session is archived');
        const parsed = JSON.parse(body) as { events: Array<{ payload: Record<string, unknown> }> };
        const answer = hooks.answerEvents?.(
          session,
          parsed.events.map((e) => e.payload),
        );
        if (answer) return send(res, answer.status, answer.body);
        const ids = api.append(session.id, ...parsed.events.map((e) => e.payload));
        return send(res, 200, { results: ids.map((id) => ({ sequence_num: Number(id), duplicate: false })) });
      }
      if (parts[3] === 'events' && parts[4] === 'stream' && req.method === 'GET') {
        if (options.stream === false) return error(res, options.streamOffStatus ?? 404, 'not_found', 'no stream here');
        const after = url.searchParams.get('from_sequence_num') ?? (req.headers['last-event-id'] as string | undefined) ?? null;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
        res.write(': open\n\n');
        for (const e of session.events) if (after === null || Number(e.id) > Number(after)) res.write(eventFrame(e));
        const listener = (frame: string): void => void res.write(frame);
        let set = listeners.get(session.id);
        if (!set) listeners.set(session.id, (set = new Set()));
        set.add(listener);
        openStreams++;
        res.on('close', () => {
          openStreams--;
          set?.delete(listener);
        });
        return;
      }
      return error(res, 404, 'not_found', 'no such route');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    ...api,
    url: `http://127.0.0.1:${port}`,
    get openStreams() {
      return openStreams;
    },
    get answerEvents() {
      return hooks.answerEvents;
    },
    set answerEvents(answer) {
      hooks.answerEvents = answer;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

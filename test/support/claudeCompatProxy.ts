// A strict Claude-compatibility server for tests of the claude-web backend without the internet. It
// stands where api.anthropic.com would and accepts exactly what Claude Code 2.1.332's own client
// sends (docs/protocol.md section 9, read from the client): the current `/v1/code/sessions` wire with
// `cse_` ids, wrapped payloads that each carry a uuid, `sort_order=asc&cursor=` reads, the headers
// on every call (`anthropic-client-platform`, a product User-Agent), the organization header only
// on the create and the account calls, the beta header only on the older create. Anything today's
// client never sends is refused with a 400 naming it; every read on `/v1/sessions/{id}…` is refused
// as retired. It serves the policy, the profile, the paged environments and the GitHub-app check
// (with resync) itself, and forwards the session calls to a real ultraplan-server, which serves
// the same wire. Switches make it answer as the service can: policy off, the older create
// retired, 409s on archive, no live stream, a refused decision.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { ANTHROPIC_VERSION, CCR_BETA } from '../../src/core/protocol';
import { errorMessage } from '../../src/core/errors';

export interface CompatEnvironment {
  kind: string;
  environment_id: string;
  name: string;
  created_at?: string;
  state?: string;
}

export type RepoAppStatus = 'installed' | 'not_installed' | 'unknown';

export interface ClaudeCompatSettings {
  /** Tokens the "service" accepts; any other (an expired one) gets 401. */
  validTokens: Set<string>;
  organizationUuid: string;
  /** What /api/oauth/profile names as the organization; null: none. Default organizationUuid. */
  profileOrganizationUuid?: string | null;
  environments: CompatEnvironment[];
  /** Environments per page of GET /v1/environment_providers (the client pages with after_id). */
  environmentPageSize: number;
  /**
   * owner/name -> the GitHub app's status; `unknown` answers `status: null` until the client asks
   * for a resync, which answers `resyncTo` (and remembers it). Unknown repositories get 404.
   */
  repos: Record<string, { app: RepoAppStatus; resyncTo?: 'installed' | 'not_installed' }>;
  /** policy_limits: restrictions.allow_remote_sessions.allowed. */
  remoteSessionsAllowed: boolean;
  /** POST /v1/sessions: answer 400 sessions_v1_retired (as the service now does) or create. */
  v1Create: 'retired' | 'accept';
  /** How many archive calls in a row answer 409 before one is forwarded. */
  archiveConflicts: number;
  /** The live stream: forwarded, or absent (404). */
  stream: 'serve' | 'absent';
  /** Answer a POST events holding a control_response with this status instead of forwarding. */
  refuseDecisions: number | false;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** The bearer token sent (tests compare it; never printed). */
  token: string | undefined;
  body: unknown;
  status: number;
}

export interface ClaudeCompatProxy {
  url: string;
  settings: ClaudeCompatSettings;
  requests: RecordedRequest[];
  /** Every payload uuid sent on events and creates, in order (tests check they are fresh). */
  uuids: string[];
  close(): Promise<void>;
}

export interface ClaudeCompatOptions extends Partial<Omit<ClaudeCompatSettings, 'validTokens' | 'organizationUuid'>> {
  upstreamUrl: string;
  upstreamToken: string | null;
  validTokens: Iterable<string>;
  organizationUuid: string;
}

const DEFAULT_ENVIRONMENTS: CompatEnvironment[] = [
  { kind: 'bridge', environment_id: 'env_bridge_laptop', name: 'my laptop', created_at: '2026-01-01T00:00:00Z', state: 'active' },
  { kind: 'byoc', environment_id: 'env_byoc_build', name: 'build box', created_at: '2026-01-01T12:00:00Z', state: 'active' },
  { kind: 'anthropic_cloud', environment_id: 'env_cloud_default', name: 'Default', created_at: '2026-01-02T00:00:00Z', state: 'active' },
];

/** The account calls Claude Code sends the organization on (beside the session create). */
const ORGANIZATION_PATHS = [/^\/v1\/environment_providers$/, /^\/api\/oauth\/organizations\//];

function errorBody(type: string, message: string, reason?: string): string {
  return JSON.stringify({ type: 'error', error: { type, message, ...(reason ? { reason } : {}) } });
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(body);
  }
}

function bad(message: string): Refusal {
  return new Refusal(400, errorBody('invalid_request_error', message));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export async function startClaudeCompatProxy(options: ClaudeCompatOptions): Promise<ClaudeCompatProxy> {
  const settings: ClaudeCompatSettings = {
    validTokens: new Set(options.validTokens),
    organizationUuid: options.organizationUuid,
    profileOrganizationUuid: options.profileOrganizationUuid,
    environments: options.environments ?? DEFAULT_ENVIRONMENTS,
    environmentPageSize: options.environmentPageSize ?? 2,
    repos: options.repos ?? {},
    remoteSessionsAllowed: options.remoteSessionsAllowed ?? true,
    v1Create: options.v1Create ?? 'retired',
    archiveConflicts: options.archiveConflicts ?? 0,
    stream: options.stream ?? 'serve',
    refuseDecisions: options.refuseDecisions ?? false,
  };
  const upstream = options.upstreamUrl.replace(/\/+$/, '');
  const requests: RecordedRequest[] = [];
  const uuids: string[] = [];
  const seenUuids = new Set<string>();
  const sockets = new Set<Socket>();

  const bearer = (req: IncomingMessage): string | undefined => /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];

  /** The headers every call carries, and the two that only some calls carry. */
  function checkHeaders(req: IncomingMessage, method: string, path: string): void {
    const token = bearer(req);
    if (!token || !settings.validTokens.has(token))
      throw new Refusal(401, errorBody('authentication_error', 'Invalid bearer token: expired or unknown.'));
    if (req.headers['anthropic-version'] !== ANTHROPIC_VERSION) throw bad(`missing header anthropic-version (${ANTHROPIC_VERSION})`);
    if (!req.headers['anthropic-client-platform']) throw bad('missing header anthropic-client-platform');
    const agent = req.headers['user-agent'] ?? '';
    if (!/^[a-z][\w.-]*\/\d+\.\d+\.\d+/i.test(agent) || /^(node|undici)\b/i.test(agent))
      throw bad('missing header user-agent naming the product and its version');
    if (method === 'POST' && !/^application\/json/i.test(req.headers['content-type'] ?? ''))
      throw bad('missing header content-type: application/json');
    const oldCreate = method === 'POST' && path === '/v1/sessions';
    const beta = req.headers['anthropic-beta'];
    if (oldCreate && beta !== CCR_BETA) throw bad(`missing header anthropic-beta (${CCR_BETA})`);
    if (!oldCreate && beta !== undefined) throw bad('unexpected header anthropic-beta: sent only on the older session create');
    const wantsOrganization =
      (method === 'POST' && (path === '/v1/sessions' || path === '/v1/code/sessions')) || ORGANIZATION_PATHS.some((p) => p.test(path));
    const org = req.headers['x-organization-uuid'];
    if (wantsOrganization && !org) throw bad('missing header x-organization-uuid');
    if (!wantsOrganization && org !== undefined) throw bad(`unexpected header x-organization-uuid on ${method} ${path}`);
    if (org !== undefined && org !== settings.organizationUuid)
      throw new Refusal(403, errorBody('permission_error', 'Not a member of this organization.'));
  }

  function checkQuery(url: URL, allowed: string[]): void {
    for (const key of url.searchParams.keys()) if (!allowed.includes(key)) throw bad(`unexpected query parameter ${key}`);
  }

  /** A payload as the client sends it: an object with a type and a uuid never sent before. */
  function checkPayload(payload: unknown, at: string): void {
    if (!isRecord(payload)) throw bad(`missing field ${at}`);
    if (typeof payload.type !== 'string') throw bad(`missing field ${at}.type`);
    if (typeof payload.uuid !== 'string' || payload.uuid === '') throw bad(`missing field ${at}.uuid`);
    if (payload.type === 'user') {
      // A person's message as Claude Code sends it (docs/protocol.md section 9, "Create events"):
      // {type:"user", parent_tool_use_id:null, message:{role:"user", content}}, the content a
      // string or a list of blocks.
      if (payload.parent_tool_use_id !== null) throw bad(`missing field ${at}.parent_tool_use_id (null)`);
      const message = payload.message;
      if (!isRecord(message) || message.role !== 'user') throw bad(`missing field ${at}.message.role ("user")`);
      const content = message.content;
      if (!(typeof content === 'string' && content !== '') && !(Array.isArray(content) && content.length > 0 && content.every(isRecord))) {
        throw bad(`missing field ${at}.message.content (text or content blocks)`);
      }
    }
    if (payload.type === 'control_response') {
      const decision = isRecord(payload.response) && isRecord(payload.response.response) ? payload.response.response : undefined;
      if (decision?.behavior === 'allow' && !(isRecord(decision.updatedInput) && typeof decision.updatedInput.plan === 'string')) {
        throw bad(`missing field ${at}.response.response.updatedInput.plan (a cloud session refuses an approval without the plan)`);
      }
    }
  }

  function checkCreate(body: unknown, wire: 'v1' | 'code'): void {
    if (!isRecord(body)) throw bad('missing body');
    if (typeof body.title !== 'string' || body.title === '') throw bad('missing field title');
    if (typeof body.environment_id !== 'string') throw bad('missing field environment_id');
    if (!settings.environments.some((e) => e.environment_id === body.environment_id))
      throw bad('environment_id must name one of your environments');
    if (!Array.isArray(body.events) || body.events.length === 0) throw bad('missing field events');
    const context = wire === 'code' ? body.config : body.session_context;
    const contextName = wire === 'code' ? 'config' : 'session_context';
    if (wire === 'code' && body.session_context !== undefined)
      throw bad('unexpected field session_context (the current create sends config)');
    if (!isRecord(context)) throw bad(`missing field ${contextName}`);
    if (typeof context.model !== 'string' || context.model === '') throw bad(`missing field ${contextName}.model`);
    if (!Array.isArray(context.sources) || !context.sources.some((s) => isRecord(s) && s.type === 'git_repository'))
      throw bad(`missing field ${contextName}.sources (a git_repository)`);
    body.events.forEach((event, index) => {
      if (wire === 'code') {
        if (!isRecord(event) || event.type !== undefined) throw bad(`events[${index}] must be {payload} (no type)`);
        checkPayload(event.payload, `events[${index}].payload`);
      } else if (!isRecord(event) || event.type !== 'event' || !isRecord(event.data)) {
        throw bad(`events[${index}] must be {type:"event", data}`);
      }
    });
  }

  function rememberUuids(events: unknown[]): { fresh: boolean } {
    let fresh = true;
    for (const event of events) {
      const uuid = isRecord(event) && isRecord(event.payload) ? event.payload.uuid : undefined;
      if (typeof uuid !== 'string') continue;
      uuids.push(uuid);
      if (seenUuids.has(uuid)) fresh = false;
      seenUuids.add(uuid);
    }
    return { fresh };
  }

  async function forward(
    req: IncomingMessage,
    res: ServerResponse,
    record: RecordedRequest,
    path: string,
    search: string,
    body: string | undefined,
  ): Promise<void> {
    const response = await fetch(upstream + path + search, {
      method: req.method,
      headers: {
        'content-type': 'application/json',
        ...(options.upstreamToken ? { authorization: `Bearer ${options.upstreamToken}` } : {}),
        ...(req.headers['last-event-id'] ? { 'last-event-id': String(req.headers['last-event-id']) } : {}),
      },
      body: body === undefined || body === '' ? undefined : body,
    });
    record.status = response.status;
    const type = response.headers.get('content-type') ?? 'application/json';
    if (type.startsWith('text/event-stream') && response.body) {
      res.writeHead(response.status, {
        'content-type': type,
        'cache-control': 'no-cache',
        date: response.headers.get('date') ?? new Date().toUTCString(),
      });
      res.flushHeaders();
      const stream = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
      res.on('close', () => stream.destroy());
      stream.on('error', () => res.destroy());
      stream.pipe(res);
      return;
    }
    const text = await response.text();
    res.writeHead(response.status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  async function route(
    req: IncomingMessage,
    res: ServerResponse,
    record: RecordedRequest,
    url: URL,
    text: string,
    body: unknown,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const send = (status: number, answer: unknown): void => {
      const out = typeof answer === 'string' ? answer : JSON.stringify(answer);
      record.status = status;
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    };
    checkHeaders(req, method, path);

    if (method === 'GET' && path === '/api/claude_code/policy_limits') {
      checkQuery(url, []);
      return send(200, { restrictions: { allow_remote_sessions: { allowed: settings.remoteSessionsAllowed } } });
    }
    if (method === 'GET' && path === '/api/oauth/profile') {
      checkQuery(url, []);
      const org = settings.profileOrganizationUuid === undefined ? settings.organizationUuid : settings.profileOrganizationUuid;
      return send(200, {
        account: { uuid: 'acct-1', email: 'ada@example.com' },
        organization: org === null ? null : { uuid: org, name: 'Example Org' },
      });
    }
    if (method === 'GET' && path === '/v1/environment_providers') {
      checkQuery(url, ['limit', 'after_id']);
      if (url.searchParams.get('limit') !== '100') throw bad('missing query parameter limit=100');
      const after = url.searchParams.get('after_id');
      const start = after === null ? 0 : settings.environments.findIndex((e) => e.environment_id === after) + 1;
      const page = settings.environments.slice(start, start + settings.environmentPageSize);
      const more = start + page.length < settings.environments.length;
      return send(200, { environments: page, has_more: more, last_id: page[page.length - 1]?.environment_id ?? null });
    }
    const orgRoute = /^\/api\/oauth\/organizations\/([^/]+)\/code\/repos\/(.+)$/.exec(path);
    if (orgRoute) {
      if (decodeURIComponent(orgRoute[1]!) !== settings.organizationUuid)
        return send(403, errorBody('permission_error', 'Not a member of this organization.'));
      if (method === 'POST' && orgRoute[2] === 'resync') {
        if (!isRecord(body) || typeof body.owner !== 'string' || typeof body.repo !== 'string') throw bad('missing field owner or repo');
        const repo = settings.repos[`${body.owner}/${body.repo}`];
        if (!repo) return send(200, { app_installed: false, reason: 'installation_not_found' });
        if (repo.app === 'unknown') repo.app = repo.resyncTo ?? 'not_installed';
        return send(200, {
          app_installed: repo.app === 'installed',
          ...(repo.app === 'installed' ? {} : { reason: 'installation_not_found' }),
        });
      }
      const parts = orgRoute[2]!.split('/').map(decodeURIComponent);
      if (method !== 'GET' || parts.length !== 2) return send(404, errorBody('not_found_error', `No route ${method} ${path}.`));
      const repo = settings.repos[`${parts[0]}/${parts[1]}`];
      if (!repo) return send(404, errorBody('not_found_error', 'Repository not found.'));
      const status = repo.app === 'unknown' ? null : { app_installed: repo.app === 'installed' };
      return send(200, { repo: { name: parts[1], owner: { login: parts[0] }, default_branch: 'main' }, status });
    }

    // The older wire: only the create is still answered; every other call is retired.
    if (path === '/v1/sessions' && method === 'POST') {
      checkCreate(body, 'v1');
      if (settings.v1Create === 'retired') return send(400, JSON.stringify({ error: { reason: 'sessions_v1_retired' } }));
      if (!settings.remoteSessionsAllowed)
        return send(403, errorBody('permission_error', "Remote sessions are disabled by your organization's policy."));
      return forward(req, res, record, '/v1/sessions', '', text);
    }
    if (path.startsWith('/v1/sessions')) {
      return send(400, errorBody('invalid_request_error', `${method} ${path} is retired; use /v1/code/sessions`, 'sessions_v1_retired'));
    }

    if (path === '/v1/code/sessions' && method === 'GET') {
      // The list as Claude Code reads it: bare (its teleport picker) or with `limit` (100 by default),
      // `statuses`, and `cursor` from the previous page's next_cursor; no organization header
      // (checked above).
      checkQuery(url, ['limit', 'cursor', 'statuses']);
      const limit = url.searchParams.get('limit');
      if (limit !== null && (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > 100)) throw bad('limit must be from 1 to 100');
      return forward(req, res, record, path, url.search, undefined);
    }
    if (path === '/v1/code/sessions') {
      if (method !== 'POST') throw bad(`unexpected ${method} ${path}`);
      checkQuery(url, []);
      checkCreate(body, 'code');
      rememberUuids((body as { events: unknown[] }).events);
      if (!settings.remoteSessionsAllowed)
        return send(403, errorBody('permission_error', "Remote sessions are disabled by your organization's policy."));
      return forward(req, res, record, path, '', text);
    }
    const session = /^\/v1\/code\/sessions\/([^/]+)(\/.*)?$/.exec(path);
    if (!session) return send(404, errorBody('not_found_error', `No route ${method} ${path}.`));
    if (!session[1]!.startsWith('cse_')) throw bad(`session id ${session[1]} must be the cse_ form on /v1/code/sessions`);
    const tail = session[2] ?? '';
    if (tail === '' && method === 'GET') {
      checkQuery(url, []);
      return forward(req, res, record, path, '', undefined);
    }
    if (tail === '/events' && method === 'GET') {
      checkQuery(url, ['sort_order', 'cursor']);
      if (url.searchParams.get('sort_order') !== 'asc') throw bad('missing query parameter sort_order=asc');
      return forward(req, res, record, path, url.search, undefined);
    }
    if (tail === '/events' && method === 'POST') {
      checkQuery(url, []);
      if (!isRecord(body) || !Array.isArray(body.events) || body.events.length === 0) throw bad('missing field events');
      body.events.forEach((event, index) => {
        if (!isRecord(event) || Object.keys(event).some((k) => k !== 'payload')) throw bad(`events[${index}] must be {payload} only`);
        checkPayload(event.payload, `events[${index}].payload`);
      });
      if (!rememberUuids(body.events).fresh) {
        // The service answers a uuid it has seen as a duplicate and stores nothing.
        return send(200, { results: body.events.map(() => ({ sequence_num: 0, duplicate: true })) });
      }
      if (
        settings.refuseDecisions !== false &&
        body.events.some((e) => isRecord(e) && isRecord(e.payload) && e.payload.type === 'control_response')
      ) {
        return send(settings.refuseDecisions, errorBody('invalid_request_error', 'This session does not take that control_response.'));
      }
      return forward(req, res, record, path, '', text);
    }
    if (tail === '/events/stream' && method === 'GET') {
      checkQuery(url, ['from_sequence_num']);
      if (settings.stream === 'absent') return send(404, errorBody('not_found_error', 'No such route.'));
      return forward(req, res, record, path, url.search, undefined);
    }
    if (tail === '/archive' && method === 'POST') {
      checkQuery(url, []);
      if (!isRecord(body) || Object.keys(body).length > 0) throw bad('the archive body is {}');
      if (settings.archiveConflicts > 0) {
        settings.archiveConflicts--;
        return send(409, errorBody('conflict_error', 'The session is busy; try again.'));
      }
      return forward(req, res, record, path, '', text);
    }
    return send(404, errorBody('not_found_error', `No route ${method} ${path}.`));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries(
        Object.entries(req.headers)
          .filter(([k]) => k !== 'authorization')
          .map(([k, v]) => [k, String(v)]),
      ),
      token: bearer(req),
      body,
      status: 0,
    };
    requests.push(record);
    try {
      await route(req, res, record, url, text, body);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      record.status = err.status;
      res.writeHead(err.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(err.body) });
      res.end(err.body);
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(errorBody('api_error', `proxy: ${errorMessage(err)}`));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // The session WebSocket is gone from the client: an upgrade is refused like any unknown route.
  server.on('upgrade', (_req, socket) => socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n'));

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    settings,
    requests,
    uuids,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// A strict Claude-compatibility front for our real session server, for tests of the claude-web
// backend without the internet. It stands where api.anthropic.com would and speaks what Claude
// Code on the web speaks (PROTOCOL.md sections 1 and 9): it demands the CCR headers and the
// organization on /v1/sessions*, answers 401 to a token it does not know (an expired one), serves
// the profile, the environment list and the GitHub-app check itself, refuses our SSE stream (the
// service has none), and forwards the Sessions API to the real server with the server's token.
// Switches: the organization policy refusal, control_responses refused over HTTP, and the
// session WebSocket (/v1/sessions/ws/{id}/subscribe), which takes decisions and forwards them.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { ANTHROPIC_VERSION, CCR_BETA } from '../../src/core/protocol';

export interface CompatEnvironment {
  kind: string;
  environment_id: string;
  name: string;
  created_at?: string;
  state?: string;
}

export interface ClaudeCompatSettings {
  /** Tokens the "service" accepts; any other (an expired one) gets 401. */
  validTokens: Set<string>;
  organizationUuid: string;
  /** What /api/oauth/profile names as the organization; null: none. Default organizationUuid. */
  profileOrganizationUuid?: string | null;
  environments: CompatEnvironment[];
  /** owner/name -> whether the Claude GitHub app is installed; unknown repositories get 404. */
  repos: Record<string, { appInstalled: boolean }>;
  /** The organization's policy disables remote sessions: 403 on environments and session creation. */
  policyDisablesRemoteSessions: boolean;
  /** Answer POST events holding a control_response with this status instead of forwarding. */
  refuseControlResponseOverHttp: number | false;
  /** The session WebSocket: accept it, or answer its upgrade with 404. */
  webSocket: 'accept' | 'refuse';
  /** Echo each control_response taken over the WebSocket back as a frame (as the service streams events). */
  echoOverWebSocket: boolean;
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
  /** Frames received on session WebSockets, parsed. */
  socketFrames: Array<{ sessionId: string; frame: unknown }>;
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
  { kind: 'anthropic_cloud', environment_id: 'env_cloud_default', name: 'Default', created_at: '2026-01-02T00:00:00Z', state: 'active' },
];

function errorBody(type: string, message: string): string {
  return JSON.stringify({ type: 'error', error: { type, message } });
}

export async function startClaudeCompatProxy(options: ClaudeCompatOptions): Promise<ClaudeCompatProxy> {
  const settings: ClaudeCompatSettings = {
    validTokens: new Set(options.validTokens),
    organizationUuid: options.organizationUuid,
    profileOrganizationUuid: options.profileOrganizationUuid,
    environments: options.environments ?? DEFAULT_ENVIRONMENTS,
    repos: options.repos ?? {},
    policyDisablesRemoteSessions: options.policyDisablesRemoteSessions ?? false,
    refuseControlResponseOverHttp: options.refuseControlResponseOverHttp ?? false,
    webSocket: options.webSocket ?? 'accept',
    echoOverWebSocket: options.echoOverWebSocket ?? true,
  };
  const upstream = options.upstreamUrl.replace(/\/+$/, '');
  const requests: RecordedRequest[] = [];
  const socketFrames: ClaudeCompatProxy['socketFrames'] = [];
  const sockets = new Set<Socket>();

  const upstreamHeaders = (): Record<string, string> => ({
    'content-type': 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
    'anthropic-beta': CCR_BETA,
    ...(options.upstreamToken ? { authorization: `Bearer ${options.upstreamToken}` } : {}),
  });

  const bearer = (req: IncomingMessage): string | undefined => /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];

  /** The checks the service makes; an error answer, or undefined when the request may go on. */
  function refusal(req: IncomingMessage, path: string, organizationFromQuery?: string): { status: number; body: string } | undefined {
    const token = bearer(req);
    if (!token || !settings.validTokens.has(token)) {
      return { status: 401, body: errorBody('authentication_error', 'Invalid bearer token: expired or unknown.') };
    }
    if (path.startsWith('/v1/')) {
      if (req.headers['anthropic-version'] !== ANTHROPIC_VERSION) {
        return { status: 400, body: errorBody('invalid_request_error', `anthropic-version: ${ANTHROPIC_VERSION} is required.`) };
      }
      const betas = String(req.headers['anthropic-beta'] ?? '').split(',').map((b) => b.trim());
      if (!betas.includes(CCR_BETA)) {
        return { status: 400, body: errorBody('invalid_request_error', `anthropic-beta: ${CCR_BETA} is required.`) };
      }
    }
    if (path.startsWith('/v1/sessions')) {
      const org = organizationFromQuery ?? req.headers['x-organization-uuid'];
      if (!org) return { status: 400, body: errorBody('invalid_request_error', 'x-organization-uuid is required.') };
      if (org !== settings.organizationUuid) return { status: 403, body: errorBody('permission_error', 'Not a member of this organization.') };
    }
    return undefined;
  }

  async function readBody(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  async function forward(method: string, pathAndQuery: string, body: string | undefined): Promise<{ status: number; body: string; contentType: string }> {
    const response = await fetch(upstream + pathAndQuery, { method, headers: upstreamHeaders(), body: body === undefined || body === '' ? undefined : body });
    return { status: response.status, body: await response.text(), contentType: response.headers.get('content-type') ?? 'application/json' };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const text = await readBody(req);
    let parsedBody: unknown;
    try {
      parsedBody = text ? JSON.parse(text) : undefined;
    } catch {
      parsedBody = text;
    }
    const record: RecordedRequest = {
      method,
      path,
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'authorization').map(([k, v]) => [k, String(v)])),
      token: bearer(req),
      body: parsedBody,
      status: 0,
    };
    requests.push(record);
    const send = (status: number, body: string, contentType = 'application/json') => {
      record.status = status;
      res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };

    const refused = refusal(req, path);
    if (refused) return send(refused.status, refused.body);
    const policy = () => send(403, errorBody('permission_error', "Remote sessions are disabled by your organization's policy."));

    if (method === 'GET' && path === '/api/oauth/profile') {
      const org = settings.profileOrganizationUuid === undefined ? settings.organizationUuid : settings.profileOrganizationUuid;
      return send(200, JSON.stringify({ account: { uuid: 'acct-1', email: 'ada@example.com' }, organization: org === null ? null : { uuid: org, name: 'Example Org' } }));
    }
    if (method === 'GET' && path === '/v1/environment_providers') {
      if (settings.policyDisablesRemoteSessions) return policy();
      return send(200, JSON.stringify({ environments: settings.environments }));
    }
    const repo = /^\/api\/oauth\/organizations\/([^/]+)\/code\/repos\/([^/]+)\/([^/]+)$/.exec(path);
    if (method === 'GET' && repo) {
      if (decodeURIComponent(repo[1]!) !== settings.organizationUuid) return send(403, errorBody('permission_error', 'Not a member of this organization.'));
      const key = `${decodeURIComponent(repo[2]!)}/${decodeURIComponent(repo[3]!)}`;
      const known = settings.repos[key];
      if (!known) return send(404, errorBody('not_found_error', 'Repository not found.'));
      return send(200, JSON.stringify({ repo: { name: repo[3], owner: { login: repo[2] }, default_branch: 'main' }, status: { app_installed: known.appInstalled } }));
    }
    if (!path.startsWith('/v1/sessions')) return send(404, errorBody('not_found_error', `No route ${method} ${path}.`));
    if (/^\/v1\/sessions\/[^/]+\/events\/stream$/.test(path)) return send(404, errorBody('not_found_error', 'No such route.'));

    if (method === 'POST' && path === '/v1/sessions') {
      if (settings.policyDisablesRemoteSessions) return policy();
      const body = parsedBody as { environment_id?: unknown; session_context?: { sources?: Array<{ type?: unknown }> } } | undefined;
      if (!settings.environments.some((e) => e.environment_id === body?.environment_id)) {
        return send(400, errorBody('invalid_request_error', 'environment_id must name one of your environments.'));
      }
      if (!body?.session_context?.sources?.some((s) => s.type === 'git_repository')) {
        return send(400, errorBody('invalid_request_error', 'session_context.sources needs a git_repository.'));
      }
    }
    const events = /^\/v1\/sessions\/[^/]+\/events$/.test(path) && method === 'POST' ? (parsedBody as { events?: Array<{ type?: unknown }> } | undefined)?.events : undefined;
    if (settings.refuseControlResponseOverHttp !== false && events?.some((e) => e.type === 'control_response')) {
      return send(settings.refuseControlResponseOverHttp, errorBody('invalid_request_error', 'control_response is not accepted on this route.'));
    }
    const answer = await forward(method, path + url.search, text);
    return send(answer.status, answer.body, answer.contentType);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(errorBody('api_error', `proxy: ${err instanceof Error ? err.message : String(err)}`));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const match = /^\/v1\/sessions\/ws\/([^/]+)\/subscribe$/.exec(url.pathname);
    const reject = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    };
    if (!match || settings.webSocket === 'refuse') return reject(404, 'Not Found');
    const refused = refusal(req, url.pathname, url.searchParams.get('organization_uuid') ?? undefined);
    if (refused) return reject(refused.status, refused.status === 401 ? 'Unauthorized' : 'Refused');
    const sessionId = decodeURIComponent(match[1]!);
    wss.handleUpgrade(req, socket, head, (ws) => onSocket(ws, sessionId));
  });

  function onSocket(ws: WebSocket, sessionId: string): void {
    ws.on('message', (data) => {
      let frame: unknown;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        ws.close(4400, 'frames are JSON');
        return;
      }
      socketFrames.push({ sessionId, frame });
      if ((frame as { type?: unknown }).type !== 'control_response') return;
      forward('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/events`, JSON.stringify({ events: [frame] }))
        .then((answer) => {
          if (answer.status >= 300) ws.close(4000 + Math.min(answer.status, 999), `upstream refused: HTTP ${answer.status}`);
          else if (settings.echoOverWebSocket) ws.send(JSON.stringify(frame));
        })
        .catch(() => ws.close(1011, 'upstream unreachable'));
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    settings,
    requests,
    socketFrames,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

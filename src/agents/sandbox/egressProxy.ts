// The one way out of a sandbox: an HTTP proxy on a Unix socket that is bound into the sandbox
// (whose network namespace has nothing but loopback). It tunnels CONNECT and forwards plain
// absolute-form HTTP, only to destinations the session's policy allows, and dials the very
// address it checked (no second lookup a rebinding DNS answer could change).
import { lookup } from 'node:dns/promises';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, isIP, type Socket } from 'node:net';
import { addressDenial, decideTarget, splitHostPort, type EgressPolicy } from './hostPolicy';
import type { HeldKey } from './spec';

/** A destination reached, or refused, with why. Kept for the session's log and for tests. */
export interface EgressDecision {
  method: string;
  host: string;
  port: number;
  allowed: boolean;
  /** The address dialed, when allowed. */
  address?: string;
  /** A held key was put in place of its stand-in (never the key itself). */
  keyAdded?: boolean;
  reason?: string;
}

export interface EgressProxy {
  readonly socketPath: string;
  readonly decisions: readonly EgressDecision[];
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 10_000;
/** Bounds the memory a hostile agent can make us keep about it. */
const MAX_DECISIONS = 1000;
const HOP_BY_HOP = new Set(['proxy-authorization', 'proxy-connection', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade']);

type Resolution = { ok: true; address: string } | { ok: false; status: number; reason: string };

async function resolveTarget(policy: EgressPolicy, host: string, port: number): Promise<Resolution> {
  const verdict = decideTarget(policy, host, port);
  if (!verdict.allowed) return { ok: false, status: 403, reason: verdict.reason };
  if (verdict.literal) return { ok: true, address: host };
  let addresses: Array<{ address: string }>;
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch (error) {
    return { ok: false, status: 502, reason: `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  const denials: string[] = [];
  for (const { address } of addresses) {
    const denial = addressDenial(address, policy.allowPrivateNetwork);
    if (!denial) return { ok: true, address };
    denials.push(denial);
  }
  return { ok: false, status: 403, reason: `${host} resolves only to refused addresses (${[...new Set(denials)].join(', ')})` };
}

/** `text` with every held key's stand-in replaced by its secret. */
function withKeys(text: string, keys: readonly HeldKey[]): string {
  let out = text;
  for (const key of keys) out = out.split(key.standIn).join(key.secret);
  return out;
}

export async function startEgressProxy(socketPath: string, policy: EgressPolicy, heldKeys: readonly HeldKey[] = []): Promise<EgressProxy> {
  const decisions: EgressDecision[] = [];
  const sockets = new Set<Socket>();
  const record = (decision: EgressDecision): void => {
    if (decisions.length < MAX_DECISIONS) decisions.push(decision);
  };
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  const server: Server = createServer((req, res) => void forwardPlain(req, res));
  server.on('connection', track);
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => void tunnel(req, client, head));
  server.on('clientError', (_error, socket) => socket.destroy());

  async function tunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    let target: { host: string; port: number | undefined };
    try {
      target = splitHostPort(req.url ?? '');
    } catch {
      target = { host: '', port: undefined };
    }
    const port = target.port ?? 0;
    const resolved = await resolveTarget(policy, target.host, port);
    if (!resolved.ok) {
      record({ method: 'CONNECT', host: target.host, port, allowed: false, reason: resolved.reason });
      const body = `${resolved.reason}\n`;
      client.end(
        `HTTP/1.1 ${resolved.status} ${resolved.status === 403 ? 'Forbidden' : 'Bad Gateway'}\r\n` +
          `X-Proxy-Error: blocked-by-sandbox\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    record({ method: 'CONNECT', host: target.host, port, allowed: true, address: resolved.address });
    const upstream = connect({ host: resolved.address, port, timeout: CONNECT_TIMEOUT_MS });
    track(upstream);
    upstream.once('connect', () => {
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    const fail = (): void => {
      if (!client.destroyed && upstream.connecting) client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
      upstream.destroy();
      client.destroy();
    };
    upstream.once('timeout', fail);
    upstream.once('error', fail);
    client.once('close', () => upstream.destroy());
  }

  async function forwardPlain(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refuse = (status: number, reason: string): void => {
      res.writeHead(status, { 'content-type': 'text/plain', 'x-proxy-error': 'blocked-by-sandbox' });
      res.end(`${reason}\n`);
    };
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      refuse(400, 'a proxy request needs an absolute http:// URL');
      return;
    }
    if (url.protocol !== 'http:') {
      refuse(400, `only http:// is forwarded as is (use CONNECT for ${url.protocol})`);
      return;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const asked = url.port ? Number(url.port) : 80;
    // The agent's model API, addressed in plain http so its held key can be added here: the keys
    // of that host and port only; the request goes on to the real port, over TLS when it is https.
    const keys = heldKeys.filter((key) => key.host === host && key.port === asked);
    const port = keys[0]?.upstreamPort ?? asked;
    const tls = keys[0]?.tls ?? false;
    const resolved = await resolveTarget(policy, host, port);
    if (!resolved.ok) {
      record({ method: req.method ?? 'GET', host, port, allowed: false, reason: resolved.reason });
      refuse(resolved.status, resolved.reason);
      return;
    }
    record({
      method: req.method ?? 'GET',
      host,
      port,
      allowed: true,
      address: resolved.address,
      ...(keys.length ? { keyAdded: true } : {}),
    });
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name)) continue;
      headers[name] = Array.isArray(value) ? value.map((v) => withKeys(v, keys)) : withKeys(value, keys);
    }
    headers.host = port === (tls ? 443 : 80) ? url.hostname : `${url.hostname}:${port}`;
    const send = tls ? httpsRequest : httpRequest;
    const upstream = send(
      {
        host: resolved.address,
        family: isIP(resolved.address),
        port,
        method: req.method,
        path: withKeys(`${url.pathname}${url.search}`, keys),
        headers,
        timeout: CONNECT_TIMEOUT_MS,
        // The certificate is checked against the name the agent asked for, not the address dialed.
        ...(tls ? { servername: isIP(host) ? undefined : host } : {}),
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.once('socket', (socket) => {
      track(socket);
      socket.once('connect', () => upstream.setTimeout(0));
    });
    upstream.once('timeout', () => upstream.destroy(new Error('upstream timed out')));
    upstream.once('error', () => {
      if (!res.headersSent) refuse(502, `${host}:${port} could not be reached`);
      else res.destroy();
    });
    req.pipe(upstream);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });

  return {
    socketPath,
    decisions,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

// A small HTTP proxy on 127.0.0.1 in front of a real session server, with faults programmed per
// request. Faults live here, never in the server: the server under test stays the product's own.
// It also logs every request, so tests and benches can count what a client really sent.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  /** Answer this status without forwarding (the server never sees the request). */
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Destroy the client's connection without an answer (ECONNRESET / "socket hang up"). */
  | { kind: 'reset' }
  /** Hold the request this long before forwarding it (not forwarded if the client gave up). */
  | { kind: 'delay'; ms: number }
  /** Forward, then replace the answer's body with truncated JSON (status 200). */
  | { kind: 'malformed_json' }
  /** Forward, then add these items (default: a mixed bag of non-events) to the page's `data`. */
  | { kind: 'garbage_events'; items?: unknown[] }
  /** Forward an SSE stream, then cut the connection after this many event frames (`id:` frames). */
  | { kind: 'drop_stream_after'; events: number };

export interface FaultRule {
  /** Only requests with this method (default: any). */
  method?: string;
  /** Only paths (without query) matching: a RegExp, or a string the path ends with. */
  path?: RegExp | string;
  /** How many matching requests get the fault (default 1; Infinity for all). */
  times?: number;
  fault: Fault;
}

export interface ProxiedRequest {
  method: string;
  path: string;
  query: string;
  /** The status the client got; 0 when the connection was reset or cut before an answer. */
  status: number;
  fault?: Fault['kind'];
  startedAt: number;
  /** Time to the answer's headers (for streams) or to its end. */
  durationMs: number;
}

export const DEFAULT_GARBAGE_ITEMS: unknown[] = [42, null, 'not an event', [], { type: 7 }, { no_type: true }];

export interface FaultProxy {
  /** The proxy's base URL, e.g. http://127.0.0.1:40123. */
  readonly url: string;
  addFault(rule: FaultRule): void;
  /** Points the proxy at another server (e.g. the same data dir restarted on a new port). */
  setTarget(target: string): void;
  clearFaults(): void;
  /** Every request seen, in arrival order. */
  readonly requests: readonly ProxiedRequest[];
  /** Requests whose path matches (a RegExp, or a string the path ends with). */
  countRequests(path?: RegExp | string, method?: string): number;
  resetLog(): void;
  /** Open SSE streams right now. */
  readonly openStreams: number;
  close(): Promise<void>;
}

interface ActiveRule extends FaultRule {
  remaining: number;
}

function pathMatches(pattern: RegExp | string | undefined, path: string): boolean {
  if (pattern === undefined) return true;
  return typeof pattern === 'string' ? path.endsWith(pattern) : pattern.test(path);
}

/** Starts a proxy to `target` (a base URL such as the server's) on 127.0.0.1:0. */
export async function startFaultProxy(options: { target: string }): Promise<FaultProxy> {
  let target = new URL(options.target);
  const rules: ActiveRule[] = [];
  const requests: ProxiedRequest[] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2048 });
  let openStreams = 0;

  const takeFault = (method: string, path: string): Fault | undefined => {
    for (const rule of rules) {
      if (rule.remaining <= 0) continue;
      if (rule.method !== undefined && rule.method.toUpperCase() !== method) continue;
      if (!pathMatches(rule.path, path)) continue;
      rule.remaining--;
      return rule.fault;
    }
    return undefined;
  };

  const server = http.createServer((req, res) => {
    const method = req.method ?? 'GET';
    const [path = '/', query = ''] = (req.url ?? '/').split('?', 2);
    const fault = takeFault(method, path);
    const entry: ProxiedRequest = { method, path, query, status: 0, fault: fault?.kind, startedAt: Date.now(), durationMs: 0 };
    requests.push(entry);
    const finish = (status: number): void => {
      entry.status = status;
      entry.durationMs = Date.now() - entry.startedAt;
    };

    if (fault?.kind === 'reset') {
      req.socket.destroy();
      finish(0);
      return;
    }
    if (fault?.kind === 'status') {
      req.resume();
      const body = JSON.stringify(
        fault.body ?? { type: 'error', error: { type: 'injected_fault', message: `fault proxy answered ${fault.status}` } },
      );
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      res.end(body);
      finish(fault.status);
      return;
    }

    // Read the client's body first so a delayed request can still be forwarded whole.
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const forward = (): void => {
        if (res.destroyed || req.socket.destroyed) {
          finish(0);
          return;
        }
        const headers = { ...req.headers, host: target.host };
        const upstream = http.request({ host: target.hostname, port: target.port, method, path: req.url, headers, agent }, (upRes) =>
          relay(upRes),
        );
        upstream.on('error', () => {
          if (!res.headersSent) {
            res.writeHead(502, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ type: 'error', error: { type: 'bad_gateway', message: 'fault proxy: upstream unreachable' } }));
            finish(502);
          } else {
            res.destroy();
          }
        });
        // The client gave up: do not leave the upstream request (or stream) open.
        res.on('close', () => upstream.destroy());
        upstream.end(Buffer.concat(chunks));
      };

      const relay = (upRes: http.IncomingMessage): void => {
        const status = upRes.statusCode ?? 502;
        const isStream = (upRes.headers['content-type'] ?? '').startsWith('text/event-stream');
        if (fault?.kind === 'malformed_json' || fault?.kind === 'garbage_events') {
          const body: Buffer[] = [];
          upRes.on('data', (c: Buffer) => body.push(c));
          upRes.on('end', () => {
            let text = Buffer.concat(body).toString('utf8');
            if (fault.kind === 'malformed_json') {
              text = '{"data":[{"type":"assistant","message":';
              res.writeHead(200, { 'content-type': 'application/json' });
              res.end(text);
              finish(200);
              return;
            }
            try {
              const page = JSON.parse(text) as { data?: unknown };
              if (Array.isArray(page.data)) {
                // Garbage first and last, so a reader cannot get away with looking at one end.
                const items = fault.items ?? DEFAULT_GARBAGE_ITEMS;
                page.data = [...items, ...page.data, ...items];
                text = JSON.stringify(page);
              }
            } catch {
              // Not a page: pass it on unchanged.
            }
            res.writeHead(status, { 'content-type': 'application/json' });
            res.end(text);
            finish(status);
          });
          return;
        }
        res.writeHead(status, upRes.headers);
        if (!isStream) {
          upRes.pipe(res);
          upRes.on('end', () => finish(status));
          return;
        }
        finish(status);
        openStreams++;
        res.on('close', () => openStreams--);
        res.flushHeaders();
        const dropAfter = fault?.kind === 'drop_stream_after' ? fault.events : Infinity;
        let pending = '';
        let eventsSent = 0;
        upRes.setEncoding('utf8');
        upRes.on('data', (chunk: string) => {
          if (dropAfter === Infinity) {
            res.write(chunk);
            return;
          }
          // Forward whole frames only, so the cut falls exactly after the K-th event frame.
          pending += chunk;
          let end: number;
          while ((end = pending.indexOf('\n\n')) >= 0) {
            const frame = pending.slice(0, end + 2);
            pending = pending.slice(end + 2);
            if (/^id:/m.test(frame)) eventsSent++;
            if (eventsSent >= dropAfter) {
              upRes.destroy();
              // Cut the connection once the K-th frame is flushed (no chunked terminator: an abrupt drop).
              res.write(frame, () => res.socket?.destroy());
              upRes.removeAllListeners('data');
              return;
            }
            res.write(frame);
          }
        });
        upRes.on('end', () => res.end());
        upRes.on('error', () => res.destroy());
      };

      if (fault?.kind === 'delay') setTimeout(forward, fault.ms);
      else forward();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    setTarget(next) {
      target = new URL(next);
    },
    addFault(rule) {
      rules.push({ ...rule, remaining: rule.times ?? 1 });
    },
    clearFaults() {
      rules.length = 0;
    },
    get requests() {
      return requests;
    },
    countRequests(path, method) {
      return requests.filter((r) => pathMatches(path, r.path) && (method === undefined || r.method === method.toUpperCase())).length;
    },
    resetLog() {
      requests.length = 0;
    },
    get openStreams() {
      return openStreams;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

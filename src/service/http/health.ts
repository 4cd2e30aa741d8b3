// The probes a process manager (Kubernetes' kubelet, a load balancer) asks: `/healthz`, is the
// process serving at all (liveness: restart it if not), and `/readyz`, can it do its work now
// (readiness: its store answers a cheap query in time and holds the schema this build needs; send
// it no traffic while it cannot). Both are answered before the request guard and without a
// token: a probe sends neither a token nor our Host name. So they say ok or not and nothing else;
// why a check failed goes to the log, once per change, never into the answer.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJson } from './jsonResponse';
import { errorMessage } from '../../core/errors';

export const LIVENESS_PATH = '/healthz';
export const READINESS_PATH = '/readyz';
/** Longer than this and the store counts as unreachable (a probe's own timeout is a few seconds). */
export const READINESS_TIMEOUT_MS = 2_000;

/** Resolves when the process can do its work within `timeoutMs`; rejects with why not (for the log only). */
export type ReadinessCheck = (timeoutMs: number) => Promise<void>;

export class ProbeResponder {
  private lastReady: boolean | undefined;

  constructor(
    private readonly ready: ReadinessCheck,
    private readonly log: (line: string) => void,
    private readonly timeoutMs = READINESS_TIMEOUT_MS,
  ) {}

  /** Answers `req` when it asks a probe path, and says so; false leaves it to the caller. */
  answer(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    const pathname = (req.url ?? '').split('?')[0];
    if (pathname !== LIVENESS_PATH && pathname !== READINESS_PATH) return false;
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      sendJson(res, 405, { status: 'method_not_allowed' }, { allow: 'GET, HEAD' });
    } else if (pathname === LIVENESS_PATH) {
      sendJson(res, 200, { status: 'ok' });
    } else {
      void this.isReady().then((ok) => sendJson(res, ok ? 200 : 503, { status: ok ? 'ok' : 'unavailable' }));
    }
    return true;
  }

  private async isReady(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    let why = '';
    try {
      await Promise.race([this.ready(this.timeoutMs), late]);
    } catch (err) {
      why = errorMessage(err);
    } finally {
      clearTimeout(timer);
    }
    const ok = why === '';
    if (ok !== this.lastReady) this.log(ok ? 'readiness: ready' : `readiness: not ready (${why})`);
    this.lastReady = ok;
    return ok;
  }
}

/**
 * An HTTP listener that answers only the probes, for a process that serves nothing else (a
 * worker). A probe checks the worker process itself: its event loop answers, its own pool reaches
 * the database. An exec probe would start a second Node process every period and check neither.
 */
export class ProbeListener {
  private readonly server: http.Server;

  constructor(responder: ProbeResponder) {
    this.server = http.createServer((req, res) => {
      if (!responder.answer(req, res)) sendJson(res, 404, { status: 'not_found' });
    });
    this.server.requestTimeout = 10_000;
    this.server.headersTimeout = 10_000;
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ port, host }, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

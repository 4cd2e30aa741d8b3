// The self-hosted server's HTTP face: the Sessions API (docs/protocol.md section 1) and the event
// stream (section 6) over a ServerStore (the journal, or PostgreSQL), on node:http. No framework: six routes, and every
// byte that enters is bounded and checked here or by the host's zod schemas.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SessionsError, type SessionsErrorKind, errorStack } from '../../core/errors';
import { CreateSessionRequestSchema, SendEventsRequestSchema, type CreateSessionRequest } from '../../core/protocol';
import type { SessionResource } from '../../core/protocol';
import type { StoredEvent } from '../host/sessionHost';
import type { ServerStore } from '../store/serverStore';
import { QuotaError } from '../store/quotas';
import { AuthenticationError, SharedTokenAuthenticator, type Principal, type RequestAuthenticator } from '../identity/authenticator';
import { HttpError, readJsonBody } from './requestBody';
import { ScopedStore } from '../identity/scopedStore';
import { followSession, type EventStreamWriter } from '../workers/sessionFollower';
import { AUTH_METADATA_PATH } from '../../core/authMetadata';
import { checkGitSource } from '../../core/gitSource';
import { REQUEST_REFUSED_REASON } from '../../core/protocol';
import { allowedHostNames, guardRequest, REVIEW_PAGE_PREFIX } from './requestGuard';
import { REVIEW_LINKS_PATH, ReviewPageRoutes, type ReviewPageOptions } from './reviewPage/reviewPageRoutes';
import { reviewPageRoutesFor } from './reviewPage/reviewPageSetup';
import { changesRoute } from './changesRoute';
import { handleCodeRoute, type CodeRouteContext } from './serverCodeRoutes';
import { refuseAgentLaunch, type ServiceFace } from './serviceRoutes';
import { toLinkSessionId } from '../../core/codeSessions';
import { ProbeResponder } from './health';
import { approvalAnswer } from './approvalAnswer';
import { ApprovalRefusedError } from '../../core/planApprovals';
import { sendJson } from './jsonResponse';
import * as z from 'zod';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_KEEP_ALIVE_MS = 15_000;
/** Time to receive a whole request (headers and body); an event stream is not a request body. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** A stream whose client reads slower than this much buffered output is ended; it resumes by id. */
const MAX_STREAM_BUFFER_BYTES = 8 * 1024 * 1024;
export const DEFAULT_MAX_STREAMS = 256;
export const DEFAULT_MAX_STREAMS_PER_SESSION = 16;

export interface SessionsServerOptions {
  store: ServerStore;
  /** The bearer token every request must carry; null only for --insecure-no-auth on loopback. */
  token: string | null;
  /** Who may ask (the OIDC issuer's users): replaces the shared-token check when given. */
  authenticator?: RequestAuthenticator;
  keepAliveMs?: number;
  maxBodyBytes?: number;
  /** Time to receive a whole request; a silent new connection is closed within it too. */
  requestTimeoutMs?: number;
  /** Host names a request may carry besides the bound address and localhost (a proxy's name). */
  allowedHosts?: readonly string[];
  /** Event streams open at once, in total and on one session. */
  maxStreams?: number;
  maxStreamsPerSession?: number;
  /** The local session service: each session's agent from its request, and `/v1/service`. */
  service?: ServiceFace;
  /** The review page (/review/<id>): where its files are, its browser sessions. */
  reviewPage?: ReviewPageOptions;
  /**
   * The origin people's browsers reach this server at (--public-url, publicUrl.ts): links and the
   * issuer's redirect use it, the review page is let in from it alone, and its name is an allowed Host.
   */
  publicUrl?: string;
  log?: (line: string) => void;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'method_not_allowed_error',
  409: 'conflict_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'unavailable_error',
};

const KIND_STATUS: Record<SessionsErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  not_found: 404,
  conflict: 409,
  transient: 503,
  bad_response: 500,
};

export class SessionsServer {
  readonly httpServer: http.Server;
  private readonly store: ServerStore;
  private readonly authenticator: RequestAuthenticator;
  private readonly keepAliveMs: number;
  private readonly maxBodyBytes: number;
  private readonly log: (line: string) => void;
  private readonly streams = new Set<() => void>();
  private readonly streamsPerSession = new Map<string, number>();
  private readonly maxStreams: number;
  private readonly maxStreamsPerSession: number;
  private readonly extraHosts: readonly string[];
  private readonly publicUrl: string | undefined;
  /** Set by listen(): the names a Host header may carry. Empty (nothing passes) before it. */
  private allowedHosts: ReadonlySet<string> = new Set();
  private closing = false;
  private readonly service: ServiceFace | undefined;
  /** The current wire (`/v1/code/sessions`), served beside the older routes. */
  private readonly codeRoutes: CodeRouteContext;
  private readonly probes: ProbeResponder;
  readonly reviewPage: ReviewPageRoutes;

  constructor(options: SessionsServerOptions) {
    this.store = options.store;
    this.authenticator = options.authenticator ?? new SharedTokenAuthenticator(options.token);
    this.keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.log = options.log ?? (() => {});
    this.publicUrl = options.publicUrl;
    this.extraHosts = [...(options.allowedHosts ?? []), ...(this.publicUrl ? [new URL(this.publicUrl).hostname] : [])];
    this.maxStreams = options.maxStreams ?? DEFAULT_MAX_STREAMS;
    this.maxStreamsPerSession = options.maxStreamsPerSession ?? DEFAULT_MAX_STREAMS_PER_SESSION;
    this.service = options.service;
    this.reviewPage = reviewPageRoutesFor(this.authenticator, options.store, this.publicUrl, options.reviewPage);
    this.probes = new ProbeResponder(
      async (timeoutMs) => (this.closing ? Promise.reject(new Error('shutting down')) : this.store.checkReady(timeoutMs)),
      this.log,
    );
    this.codeRoutes = {
      store: this.store,
      log: this.log,
      createSession: (request) => this.createSession(this.store, request),
      readJson: (req, optional) => readJsonBody(req, this.maxBodyBytes, optional),
      send: (res, status, body) => this.send(res, status, body),
      openEventStream: (res, id, onEnd, headers) => this.openEventStream(res, id, onEnd, headers),
    };
    const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    // How often node checks the request timeout set below (its default, 30 s, would dwarf a short bound).
    const connectionsCheckingInterval = Math.max(50, Math.min(30_000, Math.floor(requestTimeoutMs / 4)));
    this.httpServer = http.createServer({ connectionsCheckingInterval }, (req, res) => {
      this.handle(req, res);
    });
    // A body trickled a byte at a time would otherwise hold its socket forever (before or after
    // the 401). requestTimeout bounds receiving the request only, so a long event stream (a GET
    // with no body) is not cut by it.
    this.httpServer.requestTimeout = requestTimeoutMs;
    this.httpServer.headersTimeout = Math.min(30_000, requestTimeoutMs);
  }

  /** Listens; resolves with the bound port (port 0 picks a free one). */
  async listen(port: number, hostname: string): Promise<{ port: number }> {
    this.allowedHosts = allowedHostNames(hostname, this.extraHosts);
    await this.listenOn({ port, host: hostname });
    return { port: (this.httpServer.address() as AddressInfo).port };
  }

  /** Listens on a Unix socket or a Windows named pipe (the local service); clients say `localhost`. */
  listenSocket(socketPath: string): Promise<void> {
    this.allowedHosts = allowedHostNames('localhost', this.extraHosts);
    return this.listenOn({ path: socketPath });
  }

  private listenOn(options: { port: number; host: string } | { path: string }): Promise<void> {
    return new Promise((resolve, reject) => {
      this.httpServer.once('error', reject);
      this.httpServer.listen(options, () => {
        this.httpServer.off('error', reject);
        resolve();
      });
    });
  }

  /** Stops accepting, ends open streams and waits for requests in flight to finish. */
  async close(graceMs = 10_000): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.httpServer.close(() => resolve()));
    for (const end of [...this.streams]) end();
    this.httpServer.closeIdleConnections();
    const force = setTimeout(() => this.httpServer.closeAllConnections(), graceMs);
    force.unref();
    await closed;
    clearTimeout(force);
  }

  // -------------------------------------------------------------------------------------------

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    // Probes (health.ts) are not logged per request: they come every few seconds, forever.
    if (this.probes.answer(req, res)) return;
    const started = process.hrtime.bigint();
    const method = req.method ?? 'GET';
    let pathname = '/';
    try {
      pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    } catch {
      /* answered as 404 below */
    }
    res.on('close', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // One line per request. Never headers: they carry the token.
      this.log(`${new Date().toISOString()} ${method} ${pathname} ${res.statusCode} ${ms.toFixed(1)}ms`);
    });
    this.route(req, res, method).catch((err: unknown) => this.fail(res, err));
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse, method: string): Promise<void> {
    if (this.closing) throw new HttpError(503, 'the server is shutting down; retry shortly', { connection: 'close' });
    const url = new URL(req.url ?? '/', 'http://localhost');
    const verdict = guardRequest(req, this.allowedHosts, url.pathname, this.publicUrl);
    if (verdict.kind === 'refused') throw new HttpError(verdict.refusal.status, verdict.refusal.message, {}, REQUEST_REFUSED_REASON);
    const canSee = async (principal: Principal, id: string) => void (await new ScopedStore(this.store, principal, this.log).getSession(id));
    if (url.pathname.startsWith(REVIEW_PAGE_PREFIX)) return this.reviewPage.handle(req, res, method, url, canSee);
    // Read before signing in, so it needs no token; it holds nothing secret (docs/team.md).
    if (url.pathname === AUTH_METADATA_PATH) {
      if (method !== 'GET') throw methodNotAllowed('GET');
      const metadata = this.authenticator.signInMetadata?.() ?? null;
      if (!metadata) throw new HttpError(404, 'this server offers no sign-in: set a token with "Ultraplan: Set Server Token…"');
      return this.send(res, 200, metadata);
    }
    // Every route below sees the store as this principal may: its own sessions and those shared with it.
    // The review page is its cookie (and CSRF token), never a bearer token; a program never a cookie.
    const principal =
      verdict.kind === 'page' ? await this.reviewPage.authenticate(req, method, url.pathname) : await this.authenticate(req);
    if (url.pathname === REVIEW_LINKS_PATH) {
      if (method !== 'POST') throw methodNotAllowed('POST');
      return this.send(res, 200, await this.reviewPage.mintLink(principal, await readJsonBody(req, this.maxBodyBytes), canSee));
    }
    const store = new ScopedStore(this.store, principal, this.log);
    const routes: CodeRouteContext = { ...this.codeRoutes, store, createSession: (request) => this.createSession(store, request) };
    const parts = url.pathname.split('/').filter(Boolean).map(decodeSegment);
    if (parts[0] === 'v1' && parts[1] === 'service' && this.service) return this.service.handle(req, res, method, parts.slice(2), routes);
    if (parts[0] === 'v1' && parts[1] === 'ultraplan' && parts[2] === 'sessions' && parts[3] !== undefined && parts[4] === 'changes') {
      if (parts.length > 5) throw notFound(url.pathname);
      return this.send(res, 200, await changesRoute(store, method, toLinkSessionId(parts[3])));
    }
    if (parts[0] === 'v1' && parts[1] === 'code' && parts[2] === 'sessions' && parts.length <= 6) {
      return handleCodeRoute(routes, req, res, method, url, parts.slice(3));
    }
    if (parts[0] !== 'v1' || parts[1] !== 'sessions' || parts.length > 5) throw notFound(url.pathname);
    // `cse_X` names the same session as `session_X` on either wire.
    const id = parts[2] === undefined ? undefined : toLinkSessionId(parts[2]);
    const tail = parts.slice(3).join('/');

    if (id === undefined) {
      if (method === 'GET') return this.send(res, 200, await this.listBody(store));
      if (method === 'POST') {
        const body = CreateSessionRequestSchema.safeParse(await routes.readJson(req));
        if (!body.success) throw schemaError('invalid session request', body.error);
        return this.send(res, 200, await this.createSession(store, body.data));
      }
      throw methodNotAllowed('GET, POST');
    }
    if (tail === '') {
      if (method === 'GET') return this.send(res, 200, await store.getSession(id));
      throw methodNotAllowed('GET');
    }
    if (tail === 'events') {
      if (method === 'GET') {
        const afterId = url.searchParams.get('after_id') || null;
        return this.send(res, 200, await store.readEvents(id, afterId, parseLimit(url.searchParams.get('limit'))));
      }
      if (method === 'POST') {
        const body = SendEventsRequestSchema.safeParse(await routes.readJson(req));
        if (!body.success) throw schemaError('invalid events request', body.error);
        const stored = await store.appendEvents(id, body.data.events);
        const approval = approvalAnswer(stored);
        return this.send(res, approval?.status ?? 200, {
          data: stored.map((appended) => appended.event),
          ...(approval ? { approval: approval.body } : {}),
        });
      }
      throw methodNotAllowed('GET, POST');
    }
    if (tail === 'events/stream') {
      if (method === 'GET') return this.stream(store, req, res, id, url);
      throw methodNotAllowed('GET');
    }
    if (tail === 'archive') {
      if (method === 'POST') {
        await routes.readJson(req, true);
        await store.archive(id);
        return this.send(res, 200, await store.getSession(id));
      }
      throw methodNotAllowed('POST');
    }
    throw notFound(url.pathname);
  }

  private createSession(store: ServerStore, request: CreateSessionRequest): Promise<SessionResource> {
    refuseCredentialsInSources(request);
    return store.createSession(request, this.service ? this.service.agentFor(request) : refuseAgentLaunch(request));
  }

  private async authenticate(req: http.IncomingMessage): Promise<Principal> {
    try {
      return await this.authenticator.authenticate(req);
    } catch (err) {
      // RFC 6750 section 3: a refused bearer token is answered with its challenge.
      const challenge = { 'www-authenticate': 'Bearer error="invalid_token"' };
      if (err instanceof AuthenticationError) throw new HttpError(401, err.message, challenge, err.reason);
      throw err;
    }
  }

  private async listBody(store: ServerStore) {
    // The older route lists every session it may see, oldest first, in one answer.
    const data = (await store.listSessions(store.limits.maxSessions, null)).data.reverse();
    return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null };
  }

  private send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    sendJson(res, status, body, headers);
  }

  private fail(res: http.ServerResponse, err: unknown): void {
    let status = 500;
    let message = 'internal server error';
    let headers: Record<string, string> = {};
    let reason: string | undefined;
    let quota: { limit: string; value: number } | undefined;
    if (err instanceof HttpError) {
      status = err.status;
      message = err.message;
      headers = err.headers;
      reason = err.reason;
    } else if (err instanceof SessionsError) {
      status = err.status ?? KIND_STATUS[err.kind];
      message = err.message;
      if (err.retryAfterMs !== undefined) headers = { 'retry-after': String(Math.ceil(err.retryAfterMs / 1000)) };
      // Which limit refused, and its value, for a client to say so without parsing the message.
      if (err instanceof QuotaError) quota = { limit: err.limit, value: err.value };
      if (err instanceof ApprovalRefusedError) reason = err.reason;
    } else {
      this.log(`internal error: ${errorStack(err)}`);
    }
    // 413: the rest of the body is not read. 401, 403, 415: a peer we refuse gets no kept-alive
    // socket to trickle a body into.
    if (status === 413 || status === 401 || status === 403 || status === 415) headers = { ...headers, connection: 'close' };
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const error = { type: ERROR_TYPES[status] ?? 'api_error', message, ...(reason ? { reason } : {}), ...quota };
    this.send(res, status, { type: 'error', error }, headers);
  }

  // -------------------------------------------------------------------------------------------
  // Event stream (docs/protocol.md section 6)

  private async stream(store: ServerStore, req: http.IncomingMessage, res: http.ServerResponse, id: string, url: URL): Promise<void> {
    const lastEventId = req.headers['last-event-id'];
    const cursor: string | null = url.searchParams.get('after_id') || (typeof lastEventId === 'string' && lastEventId) || null;
    await store.getSession(id); // 404 before any stream header is written
    let stop = () => {};
    const stream = this.openEventStream(res, id, () => stop());
    stop = followSession(
      store,
      id,
      cursor,
      stream,
      {
        event: (event: StoredEvent) => stream.write(`id: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`),
        status: (status) => {
          stream.write(`event: status\ndata: ${JSON.stringify({ session_status: status })}\n\n`);
          if (status === 'archived') stream.end();
        },
      },
      this.log,
    );
  }

  /**
   * Starts a Server-Sent Events answer for session `id`, within the caps (429 beyond them, before
   * any header is written), with keep-alive comments. `onEnd` runs once when the stream ends: by
   * end(), the client leaving, shutdown, or the client reading too slowly.
   */
  openEventStream(res: http.ServerResponse, id: string, onEnd: () => void, headers: Record<string, string> = {}): EventStreamWriter {
    const onSession = this.streamsPerSession.get(id) ?? 0;
    if (this.streams.size >= this.maxStreams) {
      throw new HttpError(
        429,
        `the server holds its limit of ${this.maxStreams} event streams; poll the session's events instead, or retry later`,
        { 'retry-after': '5' },
      );
    }
    if (onSession >= this.maxStreamsPerSession) {
      throw new HttpError(
        429,
        `session ${id} has its limit of ${this.maxStreamsPerSession} event streams open; close one or poll instead`,
        { 'retry-after': '5' },
      );
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    // At once, not with the first frame: the client counts the stream open when its headers come,
    // and a session waiting on the person may write nothing for a while.
    res.flushHeaders();
    let ended = false;
    /** `abandon`: the client stopped reading; what is buffered for it would never leave. */
    const end = (abandon = false) => {
      if (ended) return;
      ended = true;
      clearInterval(keepAlive);
      this.streams.delete(end);
      const left = (this.streamsPerSession.get(id) ?? 1) - 1;
      if (left > 0) this.streamsPerSession.set(id, left);
      else this.streamsPerSession.delete(id);
      onEnd();
      // Ending politely would wait for the client to read the buffer first, keeping the socket
      // and the buffer for as long as it does not: destroying frees both now.
      if (abandon) res.destroy();
      else res.end();
    };
    const write = (frame: string) => {
      if (ended) return;
      res.write(frame);
      if (res.writableLength > MAX_STREAM_BUFFER_BYTES) {
        this.log(`stream ${id}: the client reads too slowly; closing its connection (it resumes from the last id it read)`);
        end(true);
      }
    };
    const keepAlive = setInterval(() => write(': keep-alive\n\n'), this.keepAliveMs);
    this.streams.add(end);
    this.streamsPerSession.set(id, onSession + 1);
    res.on('close', () => end());
    return {
      write,
      end: () => end(),
      get ended() {
        return ended;
      },
    };
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function parseLimit(value: string | null): number | undefined {
  if (value === null || value === '') return undefined;
  const limit = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(limit))
    throw new HttpError(400, `limit must be an integer from 1 to 1000, got ${JSON.stringify(value)}`);
  return limit;
}

function notFound(pathname: string): HttpError {
  return new HttpError(404, `no such route: ${pathname}`);
}

function methodNotAllowed(allow: string): HttpError {
  return new HttpError(405, `method not allowed here; allowed: ${allow}`, { allow });
}

function schemaError(what: string, error: z.ZodError): HttpError {
  return new HttpError(400, `${what}: ${z.prettifyError(error).replace(/\s*\n\s*/g, '; ')}`);
}

/**
 * A git source that carries a password or a token is refused before it is stored: the session's
 * config is returned to every reader of the session. Which hosts and transports are fetched is the
 * worker's rule (`--git-host`, `--allow-file-sources`), checked where it clones.
 */
function refuseCredentialsInSources(request: CreateSessionRequest): void {
  for (const source of request.session_context?.sources ?? []) {
    const url = (source as { type?: unknown; url?: unknown }).type === 'git_repository' ? (source as { url?: unknown }).url : undefined;
    if (typeof url !== 'string') continue;
    const verdict = checkGitSource(url, { hosts: ['*'], allowFile: true });
    if (!verdict.ok && verdict.reason === 'credentials') throw new HttpError(400, verdict.message);
  }
}

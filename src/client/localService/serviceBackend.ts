// The embedded backend: this version's local session service, and any other version still running
// beside it (docs/service.md). New sessions go to this version's service; a session this window
// follows from before (an older extension made it) is looked up on this version's service first,
// then on the other versions' that answer, and followed wherever it is.
import { SessionsError, errorMessage } from '../../core/errors';
import type { AnyEvent, CreateSessionRequest, SessionResource, SessionStatus } from '../../core/protocol';
import type { EventRead, SessionTransport } from '../../core/transport';
import type { BackendLifecycle } from '../../core/backendKinds';
import type { EventsSent, SessionBackend } from '../../core/sessionBackend';
import type { SessionsClient } from '../sessionsClient';
import type { LocalService } from './localService';
import { knownServiceVersions, readServiceStatus } from './serviceLauncher';
import { servicePlace } from '../../core/node/servicePaths';
import { socketFetch } from './socketFetch';

export interface ServiceBackendOptions {
  service: LocalService;
  /** An HTTP backend over a fetch and a token source (SessionsClient + HttpBackend). */
  connect: (fetch: typeof globalThis.fetch, getToken: () => Promise<string>) => SessionBackend;
  label: string;
  lifecycle: BackendLifecycle;
}

export class ServiceBackend implements SessionBackend {
  readonly kind = 'embedded' as const;
  readonly label: string;
  readonly lifecycle: BackendLifecycle;
  readonly transport: SessionTransport;
  readonly #options: ServiceBackendOptions;
  readonly #own: SessionBackend;
  /** Other versions' services, by version, made when a session is first found there. */
  readonly #others = new Map<string, SessionBackend>();
  readonly #where = new Map<string, Promise<SessionBackend>>();

  constructor(options: ServiceBackendOptions) {
    this.#options = options;
    this.label = options.label;
    this.lifecycle = options.lifecycle;
    this.#own = options.connect(options.service.fetch, () => this.#token());
    const route = (id: string) => this.#backendFor(id);
    this.transport = {
      readEvents: async (id, afterId, signal): Promise<EventRead> => (await route(id)).transport.readEvents(id, afterId, signal),
      getStatus: async (id, signal): Promise<SessionStatus | string> => (await route(id)).transport.getStatus(id, signal),
      waitForActivity: async (id, timeoutMs, signal) => {
        const transport = (await route(id)).transport;
        if (transport.waitForActivity) await transport.waitForActivity(id, timeoutMs, signal);
        else await new Promise((resolve) => setTimeout(resolve, timeoutMs));
      },
    };
  }

  async createSession(request: CreateSessionRequest, signal?: AbortSignal): Promise<SessionResource> {
    const created = await this.#own.createSession(request, signal);
    this.#where.set(created.id, Promise.resolve(this.#own));
    return created;
  }

  async getSession(sessionId: string, signal?: AbortSignal): Promise<SessionResource> {
    return (await this.#backendFor(sessionId)).getSession(sessionId, signal);
  }

  async listSessions(signal?: AbortSignal): Promise<SessionResource[]> {
    return (await this.#own.listSessions?.(signal)) ?? [];
  }

  /**
   * This version's sessions if its service runs; null when it does not (nothing is started: a
   * window that only looks for sessions of other windows must not keep a service alive).
   */
  async listIfRunning(signal?: AbortSignal): Promise<SessionResource[] | null> {
    const running = await this.#options.service.ifRunning();
    if (!running) return null;
    // Over a socket fetch that does not start the service again if it went away meanwhile.
    const looking = this.#options.connect(socketFetch(running.place.socket), async () => running.token);
    try {
      return (await looking.listSessions?.(signal)) ?? [];
    } catch {
      return null;
    } finally {
      await looking.dispose();
    }
  }

  async sendEvents(sessionId: string, events: AnyEvent[], signal?: AbortSignal): Promise<EventsSent | void> {
    return (await this.#backendFor(sessionId)).sendEvents(sessionId, events, signal);
  }

  /**
   * The HTTP client of the service that holds the session: its routes beyond the backend's (the
   * record of the changes since approval) are asked there.
   */
  async clientFor(sessionId: string): Promise<SessionsClient | undefined> {
    return ((await this.#backendFor(sessionId)) as SessionBackend & { client?: SessionsClient }).client;
  }

  async archive(sessionId: string, signal?: AbortSignal): Promise<void> {
    await (await this.#backendFor(sessionId)).archive(sessionId, signal);
  }

  async dispose(): Promise<void> {
    await Promise.allSettled([this.#own, ...this.#others.values()].map((b) => b.dispose()));
  }

  /** The token, or why the service is not there (said as the service's failure, not a token problem). */
  async #token(): Promise<string> {
    try {
      return await this.#options.service.token();
    } catch (err) {
      throw new SessionsError('transient', errorMessage(err), undefined, undefined, { cause: err });
    }
  }

  #backendFor(sessionId: string): Promise<SessionBackend> {
    let found = this.#where.get(sessionId);
    if (!found) {
      found = this.#locate(sessionId);
      this.#where.set(sessionId, found);
      // Not found anywhere (yet): ask again next time rather than remember a miss.
      found.catch(() => this.#where.delete(sessionId));
    }
    return found;
  }

  async #locate(sessionId: string): Promise<SessionBackend> {
    let missing: unknown;
    try {
      await this.#own.getSession(sessionId);
      return this.#own;
    } catch (err) {
      if (!(err instanceof SessionsError) || err.kind !== 'not_found') throw err;
      missing = err;
    }
    const { place: own, token } = await this.#options.service.connect();
    for (const version of await knownServiceVersions(own.paths)) {
      if (version === own.version) continue;
      const place = servicePlace(own.paths, version);
      if (!(await readServiceStatus(place, token).catch(() => null))) continue;
      let backend = this.#others.get(version);
      if (!backend) {
        backend = this.#options.connect(socketFetch(place.socket), () => this.#token());
        this.#others.set(version, backend);
      }
      try {
        await backend.getSession(sessionId);
        return backend;
      } catch (err) {
        if (!(err instanceof SessionsError) || err.kind !== 'not_found') throw err;
      }
    }
    throw missing;
  }
}

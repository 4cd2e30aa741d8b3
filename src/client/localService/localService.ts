// The extension's handle on its local session service: connects (starting the service when
// nothing answers) once, and hands out a fetch over the service's socket that starts it again
// when it has exited meanwhile (idle exit, a crash, kill -9): a request that found no listener
// was never sent, so it is sent again to the new service.
import {
  connectOrStartService,
  findRunningService,
  readServiceStatus,
  requestServiceStop,
  type ServiceConnection,
  type ServiceLauncherOptions,
} from './serviceLauncher';
import { processAlive } from '../../core/node/dataDirLock';
import { socketFetch } from './socketFetch';

/** Socket errors that mean nothing listens there: the request did not leave. */
const NOT_LISTENING = new Set(['ENOENT', 'ECONNREFUSED']);

/** How long a stopping service may take to finish what is in flight and release its lock. */
const STOP_WAIT_MS = 15_000;

export type RestartOutcome = { restarted: true; connection: ServiceConnection } | { restarted: false; liveSessions: number };

export class LocalService {
  readonly #options: ServiceLauncherOptions;
  readonly #connected: ((connection: ServiceConnection) => void) | undefined;
  #current: { connecting: Promise<ServiceConnection>; connection?: ServiceConnection } | undefined;

  /** `connected`: told of each connection made (the first, and each after the service went away or restarted). */
  constructor(options: ServiceLauncherOptions, connected?: (connection: ServiceConnection) => void) {
    this.#options = options;
    this.#connected = connected;
  }

  /** The running service (started if needed); one attempt at a time, a failed one is not kept. */
  connect(): Promise<ServiceConnection> {
    if (!this.#current) {
      const current: { connecting: Promise<ServiceConnection>; connection?: ServiceConnection } = {
        connecting: connectOrStartService(this.#options),
      };
      this.#current = current;
      current.connecting.then(
        (connection) => {
          current.connection = connection;
          this.#connected?.(connection);
        },
        () => {
          if (this.#current === current) this.#current = undefined;
        },
      );
    }
    return this.#current.connecting;
  }

  /** The running service, or null when none answers; never starts one. */
  async ifRunning(): Promise<ServiceConnection | null> {
    return findRunningService(this.#options);
  }

  /**
   * Stops the running service if nothing is live on it, and starts it again with this window's
   * environment (`env` of the options, else this process's). A service with live sessions keeps
   * running (the service itself refuses a stop then, so a session started meanwhile is safe).
   */
  async restart(): Promise<RestartOutcome> {
    const running = await this.ifRunning();
    if (running) {
      const status = await readServiceStatus(running.place, running.token);
      if (status && status.live_sessions > 0) return { restarted: false, liveSessions: status.live_sessions };
      if (status && !(await requestServiceStop(running.place, running.token))) {
        const again = await readServiceStatus(running.place, running.token).catch(() => null);
        return { restarted: false, liveSessions: again?.live_sessions ?? 1 };
      }
      const deadline = Date.now() + STOP_WAIT_MS;
      while (status && processAlive(status.pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    this.#current = undefined;
    return { restarted: true, connection: await this.connect() };
  }

  async token(): Promise<string> {
    return (await this.connect()).token;
  }

  readonly fetch: typeof fetch = async (input, init) => {
    const first = await this.connect();
    try {
      return await socketFetch(first.place.socket)(input, init);
    } catch (err) {
      if (!notListening(err)) throw err;
      // The service went away: start (or find) it again, once for every request that noticed.
      if (this.#current?.connection === first) this.#current = undefined;
      const again = await this.connect();
      return socketFetch(again.place.socket)(input, init);
    }
  };
}

function notListening(err: unknown): boolean {
  const cause = err instanceof Error ? err.cause : undefined;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && NOT_LISTENING.has(code);
}

// The extension's handle on its local session service: connects (starting the service when
// nothing answers) once, and hands out a fetch over the service's socket that starts it again
// when it has exited meanwhile (idle exit, a crash, kill -9): a request that found no listener
// was never sent, so it is sent again to the new service.
import { connectOrStartService, findRunningService, type ServiceConnection, type ServiceLauncherOptions } from './serviceLauncher';
import { socketFetch } from './socketFetch';

/** Socket errors that mean nothing listens there: the request did not leave. */
const NOT_LISTENING = new Set(['ENOENT', 'ECONNREFUSED']);

export class LocalService {
  readonly #options: ServiceLauncherOptions;
  #current: { connecting: Promise<ServiceConnection>; connection?: ServiceConnection } | undefined;

  constructor(options: ServiceLauncherOptions) {
    this.#options = options;
  }

  /** The running service (started if needed); one attempt at a time, a failed one is not kept. */
  connect(): Promise<ServiceConnection> {
    if (!this.#current) {
      const current: { connecting: Promise<ServiceConnection>; connection?: ServiceConnection } = {
        connecting: connectOrStartService(this.#options),
      };
      this.#current = current;
      current.connecting.then(
        (connection) => (current.connection = connection),
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

// A SessionBackend over a SessionHost in the same process, no HTTP: the review command line runs
// its fleet's agents this way, and tests drive a host through the face the extension uses. Its
// transport wakes the poller through the host's subscription, as prompt as an event stream.
import { SessionsError } from '../core/errors';
import { SKIPPED_EVENT_TYPES, type AnyEvent, type CreateSessionRequest, type SessionResource, type SessionStatus } from '../core/protocol';
import type { EventRead, SessionTransport } from '../core/transport';
import type { AgentFactory } from '../agents/agent';
import type { BackendLifecycle } from '../core/backendKinds';
import type { SessionBackend } from '../core/sessionBackend';
import { MAX_EVENT_PAGE_SIZE, newestFirst, type SessionHost } from './host/sessionHost';
import { MAX_LISTED_SESSIONS } from '../core/codeSessions';

/** Pages read in one readEvents call, as the HTTP client caps it (docs/protocol.md section 1). */
export const EMBEDDED_MAX_PAGES = 50;

export interface InProcessBackendOptions {
  host: SessionHost;
  /** For people, e.g. "Embedded · Claude (ACP)". */
  label?: string;
  /** Close the host on dispose (default true: the backend owns it). */
  closeHostOnDispose?: boolean;
  lifecycle?: BackendLifecycle;
}

class EmbeddedTransport implements SessionTransport {
  // What this transport last handed the poller, per session: waitForActivity returns at once
  // when the host is already past it, so an event committed between a read and the wait is
  // never slept through.
  private readonly seenId = new Map<string, string | null>();
  private readonly seenStatus = new Map<string, string>();

  constructor(private readonly host: SessionHost) {}

  async readEvents(sessionId: string, afterId: string | null, signal?: AbortSignal): Promise<EventRead> {
    signal?.throwIfAborted();
    const events: unknown[] = [];
    let cursor = afterId;
    for (let page = 0; page < EMBEDDED_MAX_PAGES; page++) {
      const read = this.host.readEvents(sessionId, cursor, MAX_EVENT_PAGE_SIZE);
      for (const event of read.data) if (!SKIPPED_EVENT_TYPES.has(event.type)) events.push(event);
      cursor = read.last_id ?? cursor;
      if (!read.has_more) break;
    }
    this.seenId.set(sessionId, cursor);
    return { events, lastId: cursor };
  }

  async getStatus(sessionId: string, signal?: AbortSignal): Promise<SessionStatus | string> {
    signal?.throwIfAborted();
    const status = this.host.getSession(sessionId).session_status;
    this.seenStatus.set(sessionId, status);
    return status;
  }

  waitForActivity(sessionId: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return resolve();
      let unsubscribe: () => void = () => {};
      try {
        unsubscribe = this.host.subscribe(sessionId, () => done());
      } catch (err) {
        return reject(err instanceof SessionsError ? err : new SessionsError('not_found', String(err), 404));
      }
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      signal?.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', done);
        resolve();
      }
      const seen = this.seenId.get(sessionId);
      const status = this.seenStatus.get(sessionId);
      if (
        (seen !== undefined && this.host.lastEventId(sessionId) !== seen) ||
        (status !== undefined && this.host.getSession(sessionId).session_status !== status)
      ) {
        done();
      }
    });
  }
}

export class InProcessBackend implements SessionBackend {
  readonly kind = 'embedded' as const;
  readonly label: string;
  readonly transport: SessionTransport;
  readonly lifecycle?: BackendLifecycle;
  private readonly host: SessionHost;
  private readonly closeHostOnDispose: boolean;

  constructor(options: InProcessBackendOptions) {
    this.host = options.host;
    this.label = options.label ?? 'Embedded';
    this.closeHostOnDispose = options.closeHostOnDispose ?? true;
    this.transport = new EmbeddedTransport(options.host);
    if (options.lifecycle) this.lifecycle = options.lifecycle;
  }

  async createSession(request: CreateSessionRequest, signal?: AbortSignal): Promise<SessionResource> {
    signal?.throwIfAborted();
    return this.host.createSession(request);
  }

  /**
   * This backend, with the sessions it creates run by `agentFactory`. The agent is bound when it is
   * chosen, so two launches in flight with different choices cannot swap agents; everything else
   * (host, transport, lifecycle) is shared, and disposing the view leaves the host open.
   */
  forAgent(agentFactory: AgentFactory): SessionBackend {
    return {
      kind: this.kind,
      label: this.label,
      transport: this.transport,
      createSession: async (request, signal) => {
        signal?.throwIfAborted();
        return this.host.createSession(request, agentFactory);
      },
      getSession: (sessionId, signal) => this.getSession(sessionId, signal),
      listSessions: (signal) => this.listSessions(signal),
      sendEvents: (sessionId, events, signal) => this.sendEvents(sessionId, events, signal),
      archive: (sessionId, signal) => this.archive(sessionId, signal),
      dispose: async () => {},
      ...(this.lifecycle ? { lifecycle: this.lifecycle } : {}),
    };
  }

  async getSession(sessionId: string, signal?: AbortSignal): Promise<SessionResource> {
    signal?.throwIfAborted();
    return this.host.getSession(sessionId);
  }

  /** The host's sessions, newest first, at most MAX_LISTED_SESSIONS (as the HTTP list). */
  async listSessions(signal?: AbortSignal): Promise<SessionResource[]> {
    signal?.throwIfAborted();
    return newestFirst(this.host.listSessions()).slice(0, MAX_LISTED_SESSIONS);
  }

  async sendEvents(sessionId: string, events: AnyEvent[], signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    await this.host.appendEvents(sessionId, events);
  }

  async archive(sessionId: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    try {
      await this.host.archive(sessionId);
    } catch (err) {
      // Already archived counts as done (SessionBackend contract).
      if (err instanceof SessionsError && err.kind === 'conflict') return;
      throw err;
    }
  }

  async dispose(): Promise<void> {
    if (this.closeHostOnDispose) await this.host.close();
  }
}

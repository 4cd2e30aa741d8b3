// A SessionBackend held in memory: the test appends the session's events (as the agent would), and
// sees what the extension sent. For units that need a backend but not a wire (the wire has its own
// tests against the real server and host).
import type { AnyEvent, CreateSessionRequest, SessionResource } from '../../src/core/protocol';
import type { BackendKind } from '../../src/core/backendKinds';
import type { SessionBackend } from '../../src/core/sessionBackend';

export class MemoryBackend implements SessionBackend {
  readonly label = 'Memory';
  readonly events: Array<Record<string, unknown>> = [];
  readonly sent: AnyEvent[] = [];
  /** Each sendEvents call's events, in order (a batch is one entry). */
  readonly batches: AnyEvent[][] = [];
  status = 'running';
  /** Set to make the next sendEvents fail with this error. */
  failNextSend: Error | undefined;
  /** Whether what the extension sends joins the session's log at once, as the session service stores it. */
  echoSent = false;
  archived = 0;
  reads = 0;
  /** Errors the next reads fail with, one a read (the session out of reach meanwhile). */
  readonly failReads: Error[] = [];

  /** The kind decides what some decisions send (approval notes); a server by default. */
  constructor(readonly kind: BackendKind = 'server') {}

  readonly transport = {
    readEvents: async (_sessionId: string, afterId: string | null) => {
      this.reads++;
      const failure = this.failReads.shift();
      if (failure) throw failure;
      const start = afterId === null ? 0 : Number(afterId);
      const events = this.events.slice(start);
      return { events, lastId: this.events.length === 0 ? null : String(this.events.length) };
    },
    getStatus: async () => this.status,
  };

  push(...events: Array<Record<string, unknown>>): void {
    this.events.push(...events);
  }

  async createSession(_request: CreateSessionRequest): Promise<SessionResource> {
    throw new Error('not used');
  }
  /** Titled as a session started elsewhere would be; the id in the current wire's `cse_` form. */
  title = 'ultraplan: started elsewhere';
  async getSession(sessionId: string): Promise<SessionResource> {
    const at = new Date(0).toISOString();
    return {
      type: 'session',
      id: sessionId.replace(/^session_/, 'cse_'),
      title: this.title,
      session_status: this.status,
      environment_id: null,
      created_at: at,
      updated_at: at,
      session_context: null,
    };
  }
  async sendEvents(_sessionId: string, events: AnyEvent[]): Promise<void> {
    const failure = this.failNextSend;
    this.failNextSend = undefined;
    if (failure) throw failure;
    this.sent.push(...events);
    this.batches.push([...events]);
    if (this.echoSent) this.events.push(...events);
  }
  async archive(): Promise<void> {
    this.archived++;
  }
  async dispose(): Promise<void> {}
}

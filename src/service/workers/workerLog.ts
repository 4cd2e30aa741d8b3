// A claimed session's log as a worker holds it: the agent runtime's store over PostgreSQL. Reads
// come from the database (the events since the last read, the open requests, the client events
// after the agent's cursor); writes are queued in order and go in one transaction per batch,
// fenced by the lease's epoch, retried while the database is away. docs/server.md, "Workers".
import type { StoredEvent } from '../store/sessionStore';
import { LeaseLostError, type ClaimedSession, type Lease, type SessionLeases } from '../store/postgres/leases';
import { seqOf } from '../store/postgres/postgresStore';
import type { RuntimeRecord, RuntimeStore } from '../runtime/runtimeStore';
import { errorMessage } from '../../core/errors';

const RETRY_MS = 250;
/** Attempts at storing a batch once the worker is stopping (the database may be gone for good). */
const ATTEMPTS_WHILE_STOPPING = 20;

export class WorkerLog implements RuntimeStore {
  readonly events: StoredEvent[] = [];
  readonly outstanding = new Map<string, string>();
  readonly answered = new Set<string>();
  checkpoint: unknown;
  /** Set when the worker stops: a batch the database keeps refusing is then given up. */
  stopping = false;
  #pending: RuntimeRecord[] = [];
  #flushing: Promise<void> | null = null;

  constructor(
    private readonly claimed: ClaimedSession,
    private readonly leases: SessionLeases,
    private readonly log: (line: string) => void,
    /** Another worker holds the session now: nothing of ours may be stored, the agent must stop. */
    private readonly fenced: () => void,
  ) {
    this.checkpoint = claimed.checkpoint;
  }

  get lease(): Lease {
    return { sessionId: this.claimed.sessionId, epoch: this.claimed.epoch };
  }

  /** Resolves once what is queued now is stored (or given up). */
  flushed(): Promise<void> {
    return this.#flushing ?? Promise.resolve();
  }

  async load(): Promise<void> {
    await this.#refresh();
    for (const [requestId, toolUseId] of await this.leases.openRequests(this.claimed.sessionId)) this.outstanding.set(requestId, toolUseId);
  }

  async clientEventsAfter(seq: number): Promise<readonly StoredEvent[]> {
    const sent = await this.leases.clientEventsAfter(this.claimed.sessionId, seq);
    if (sent.length > 0) {
      // The log up to them, our own writes included, is what a fresh turn's recap reads.
      await this.#flushing;
      await this.#refresh();
    }
    return sent;
  }

  /** Queues records; whatever queued meanwhile goes in one transaction, in order. */
  write(records: readonly RuntimeRecord[]): Promise<void> {
    for (const record of records) if (record.t === 'checkpoint') this.checkpoint = record.state;
    this.#pending.push(...records);
    this.#flushing ??= this.#flush();
    return this.#flushing;
  }

  /** Reads the events stored since the last read into `events`. */
  async #refresh(): Promise<void> {
    const last = this.events.at(-1);
    this.events.push(...(await this.leases.eventsAfter(this.claimed.sessionId, last ? seqOf(last) : 0)));
  }

  async #flush(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        await Promise.resolve();
        const batch = this.#pending.splice(0);
        for (let attempt = 0; ; attempt++) {
          try {
            await this.leases.write(this.lease, batch);
            break;
          } catch (err) {
            if (err instanceof LeaseLostError) {
              this.log(`session ${this.claimed.sessionId}: ${err.message}; stopping this worker's agent`);
              this.#pending = [];
              this.fenced();
              return;
            }
            // The database is away: keep the order, try again (the lease may run out meanwhile).
            if (this.stopping && attempt >= ATTEMPTS_WHILE_STOPPING) {
              this.log(`session ${this.claimed.sessionId}: giving up storing ${batch.length} records while stopping`);
              return;
            }
            if (attempt === 0) this.log(`session ${this.claimed.sessionId}: storing failed (${errorMessage(err)}); retrying`);
            await new Promise((r) => setTimeout(r, RETRY_MS));
          }
        }
      }
    } finally {
      this.#flushing = null;
    }
  }
}

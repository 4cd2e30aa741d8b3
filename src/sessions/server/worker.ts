// `ultraplan-server worker`: runs the agents of a PostgreSQL-backed server, apart from the API
// replicas. It claims sessions under leases (store/postgres/leases.ts), renews them with a
// heartbeat, runs each session's agent read-only as the single-process server does, writes what
// the agent says through the same database, and hands it what clients sent. A worker killed
// mid-turn stops renewing; once its lease runs out another worker claims the session and
// resumes the agent from its checkpoint, or says truthfully that the agent was lost (the person
// can still send a message to start a new turn).
import { randomUUID } from 'node:crypto';
import { AnyEventSchema, contentText } from '../../core/protocol';
import type { Agent, AgentContext, AgentFactory } from '../agent';
import { isClientEvent } from '../clientEvents';
import { AGENT_LOST_SUBTYPE } from '../host';
import type { StoredEvent } from '../store';
import { openPool } from '../store/postgres/database';
import { checkSchema } from '../store/postgres/migrations';
import { LeaseLostError, SessionLeases, type ClaimedSession, type Lease, type WorkerRecord } from '../store/postgres/leases';
import { SessionNotifications } from '../store/postgres/notifications';
import { seqOf } from '../store/postgres/postgresStore';

export interface WorkerOptions {
  connectionString: string;
  /** The agent for a session, given the folder it works in (prepared from the session's source). */
  agentFor(session: ClaimedSession): Promise<AgentFactory>;
  workerId?: string;
  /** How long a claim holds without a heartbeat (default 5 s). */
  leaseMs?: number;
  /** Sessions this worker runs at once (default 20). */
  maxSessions?: number;
  log: (line: string) => void;
}

export const DEFAULT_LEASE_MS = 5_000;
const CLAIM_INTERVAL_MS = 250;

export class SessionWorker {
  readonly id: string;
  private readonly leaseMs: number;
  private readonly maxSessions: number;
  private readonly pool;
  private readonly leases: SessionLeases;
  private readonly notifications: SessionNotifications;
  private readonly running = new Map<string, WorkerSession>();
  private readonly timers: NodeJS.Timeout[] = [];
  private claiming = false;
  private closed = false;

  constructor(private readonly options: WorkerOptions) {
    this.id = options.workerId ?? `worker_${randomUUID().slice(0, 8)}`;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.maxSessions = options.maxSessions ?? 20;
    this.pool = openPool(options.connectionString, options.log);
    this.leases = new SessionLeases(this.pool, this.id, this.leaseMs, options.log);
    this.notifications = new SessionNotifications(options.connectionString, this.pool, options.log);
  }

  async start(): Promise<void> {
    await this.notifications.start();
    // A new session is announced: claim at once rather than at the next tick.
    this.notifications.onAnnouncement((id) => {
      const session = this.running.get(id);
      if (session) void session.catchUp();
      else void this.claimAll();
    });
    this.timers.push(setInterval(() => void this.claimAll(), CLAIM_INTERVAL_MS));
    this.timers.push(setInterval(() => void this.heartbeat(), Math.max(200, Math.floor(this.leaseMs / 3))));
    await this.claimAll();
  }

  /** Readiness (health.ts): this worker's own pool reaches the database, which holds our schema. */
  async checkReady(timeoutMs: number): Promise<void> {
    if (this.closed) throw new Error('stopping');
    await checkSchema(this.pool, timeoutMs);
  }

  get sessionCount(): number {
    return this.running.size;
  }

  /** Stops every agent and lets go of the leases (another worker claims them at once). */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    await Promise.all([...this.running.values()].map((s) => s.stop(true)));
    await this.notifications.close();
    await this.pool.end();
  }

  private async claimAll(): Promise<void> {
    if (this.claiming || this.closed) return;
    this.claiming = true;
    try {
      while (!this.closed && this.running.size < this.maxSessions) {
        const claimed = await this.leases.claim();
        if (!claimed) break;
        this.options.log(`${this.id}: claimed session ${claimed.sessionId} (epoch ${claimed.epoch})`);
        const session = new WorkerSession(claimed, this.leases, this.options.log, () => this.running.delete(claimed.sessionId));
        this.running.set(claimed.sessionId, session);
        void session.begin(await this.options.agentFor(claimed).catch(() => undefined));
      }
    } catch (err) {
      this.options.log(`${this.id}: claiming failed (${errorText(err)}); trying again`);
    } finally {
      this.claiming = false;
    }
  }

  private async heartbeat(): Promise<void> {
    const held = [...this.running.values()].map((s) => s.lease);
    try {
      const lost = await this.leases.renew(held);
      for (const id of lost) {
        this.options.log(`${this.id}: session ${id} is no longer ours (archived, or its lease was taken over); stopping its agent`);
        await this.running.get(id)?.stop(false);
      }
    } catch (err) {
      this.options.log(`${this.id}: renewing leases failed (${errorText(err)})`);
    }
  }
}

/** One claimed session: its agent, the queue of what the agent says, and what it was given. */
class WorkerSession {
  private agent: Agent | null = null;
  private readonly abort = new AbortController();
  private pending: WorkerRecord[] = [];
  private flushing: Promise<void> | null = null;
  private delivered: number;
  private catchingUp = false;
  private begun = false;
  private stopped = false;
  private agentFactory: AgentFactory | undefined;

  constructor(
    private readonly claimed: ClaimedSession,
    private readonly leases: SessionLeases,
    private readonly log: (line: string) => void,
    private readonly onStopped: () => void,
  ) {
    this.delivered = claimed.agentCursor;
  }

  get lease(): Lease {
    return { sessionId: this.claimed.sessionId, epoch: this.claimed.epoch };
  }

  /** Starts the agent of a new session, or resumes the one a lost worker ran. */
  async begin(factory: AgentFactory | undefined): Promise<void> {
    this.agentFactory = factory;
    const { sessionId, checkpoint } = this.claimed;
    const fresh = this.delivered === 0 && checkpoint === undefined;
    if (fresh) {
      const creation = await this.leases.clientEventsAfter(sessionId, 0);
      const prompt = creation.find((e) => e.type === 'user');
      const last = creation.at(-1);
      if (last) this.delivered = seqOf(last);
      this.write([{ t: 'delivered', seq: this.delivered }]);
      await this.startAgent(prompt ? userText(prompt) : '');
    } else if (checkpoint !== null) {
      await this.resume();
    }
    this.begun = true;
    await this.catchUp();
  }

  private newAgent(): Agent | null {
    if (!this.agentFactory) return null;
    return this.agentFactory({ sessionId: this.claimed.sessionId, title: this.claimed.meta.title });
  }

  private async startAgent(prompt: string): Promise<void> {
    const agent = this.newAgent();
    if (!agent) return this.lost('this worker cannot start the agent');
    this.agent = agent;
    try {
      await agent.start(this.context(), prompt);
    } catch (err) {
      this.agent = null;
      this.log(`session ${this.claimed.sessionId}: agent failed to start: ${errorText(err)}`);
      this.write([
        {
          t: 'event',
          origin: 'host',
          event: { type: 'system', subtype: 'agent_error', message: `The agent failed to start: ${errorText(err)}` },
        },
        {
          t: 'event',
          origin: 'host',
          event: { type: 'result', subtype: 'error_during_execution', is_error: true, num_turns: 0, errors: [errorText(err)] },
        },
        { t: 'status', status: 'idle' },
      ]);
    }
  }

  private async resume(): Promise<void> {
    let reason = 'the agent does not support resuming';
    const agent = this.newAgent();
    if (agent?.resume && this.claimed.checkpoint !== undefined) {
      this.agent = agent;
      try {
        if (await agent.resume(this.context(), this.claimed.checkpoint)) {
          this.log(`session ${this.claimed.sessionId}: agent resumed on another worker (${agent.label})`);
          return;
        }
        reason = 'the agent could not continue from its saved state';
      } catch (err) {
        reason = `resuming failed: ${errorText(err)}`;
      }
    } else if (!agent) reason = 'this worker cannot start the agent';
    this.agent = null;
    await agent?.stop().catch(() => {});
    this.lost(reason);
  }

  /** Said once, as the single-process host says it: the requests the agent made are closed. */
  private lost(reason: string): void {
    this.log(`session ${this.claimed.sessionId}: agent lost (${reason})`);
    this.write([
      { t: 'close_requests' },
      {
        t: 'event',
        origin: 'host',
        event: {
          type: 'system',
          subtype: AGENT_LOST_SUBTYPE,
          message: `The worker running this session's agent stopped and its agent could not continue (${reason}). Send a message to start a new agent turn.`,
        },
      },
      { t: 'status', status: 'idle' },
      { t: 'checkpoint', state: null },
    ]);
  }

  /** Hands the agent what clients sent since it was last given something; stops on archive. */
  async catchUp(): Promise<void> {
    if (this.catchingUp || this.stopped || !this.begun) return;
    this.catchingUp = true;
    try {
      if ((await this.leases.status(this.claimed.sessionId)) === 'archived') return await this.stop(false);
      const events = await this.leases.clientEventsAfter(this.claimed.sessionId, this.delivered);
      for (const event of events) {
        this.delivered = seqOf(event);
        this.write([{ t: 'delivered', seq: this.delivered }]);
        if (!isClientEvent(event)) continue;
        if (event.type === 'user') {
          if (this.agent) this.agent.onUserMessage(userText(event));
          else {
            this.write([{ t: 'status', status: 'running' }]);
            await this.startAgent(userText(event));
          }
        } else if (event.type === 'control_response') {
          const response = event.response as { request_id?: unknown; response?: unknown } | undefined;
          if (typeof response?.request_id === 'string' && response.response && typeof response.response === 'object') {
            this.agent?.onDecision(response.request_id, response.response as Parameters<Agent['onDecision']>[1]);
          }
        }
      }
    } catch (err) {
      this.log(`session ${this.claimed.sessionId}: reading client events failed (${errorText(err)})`);
    } finally {
      this.catchingUp = false;
    }
  }

  /** Stops the agent; `release`: a clean stop lets go of the lease so another worker claims it now. */
  async stop(release: boolean): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort();
    const agent = this.agent;
    this.agent = null;
    await agent?.stop().catch(() => {});
    await this.flushing;
    if (release) await this.leases.release(this.lease).catch(() => {});
    this.onStopped();
  }

  private context(): AgentContext {
    const id = this.claimed.sessionId;
    const live = () => !this.abort.signal.aborted;
    return {
      sessionId: id,
      signal: this.abort.signal,
      emit: (event) => {
        if (!live()) return;
        const parsed = AnyEventSchema.safeParse(event);
        if (!parsed.success) return this.log(`session ${id}: dropped an agent event that is not an object with a type`);
        const { id: _ignored, ...rest } = parsed.data;
        this.write([{ t: 'event', origin: 'agent', event: rest }]);
      },
      setStatus: (status) => {
        if (live()) this.write([{ t: 'status', status }]);
      },
      log: (line) => this.log(`session ${id}: ${line}`),
      checkpoint: (state) => {
        if (live()) this.write([{ t: 'checkpoint', state }]);
      },
    };
  }

  /** Queues records; whatever queued meanwhile goes in one transaction, in order. */
  private write(records: WorkerRecord[]): void {
    this.pending.push(...records);
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        await Promise.resolve();
        const batch = this.pending.splice(0);
        for (let attempt = 0; ; attempt++) {
          try {
            await this.leases.write(this.lease, batch);
            break;
          } catch (err) {
            if (err instanceof LeaseLostError) {
              // Fenced out: another worker runs this session now; nothing of ours may be stored.
              this.log(`session ${this.claimed.sessionId}: ${err.message}; stopping this worker's agent`);
              this.pending = [];
              void this.stop(false);
              return;
            }
            // The database is away: keep the order, try again (the lease may run out meanwhile).
            if (this.stopped && attempt >= 20) {
              this.log(`session ${this.claimed.sessionId}: giving up storing ${batch.length} records while stopping`);
              return;
            }
            if (attempt === 0) this.log(`session ${this.claimed.sessionId}: storing failed (${errorText(err)}); retrying`);
            await new Promise((r) => setTimeout(r, 250));
          }
        }
      }
    } finally {
      this.flushing = null;
    }
  }
}

function userText(event: StoredEvent): string {
  const message = event.message as { content?: unknown } | undefined;
  return contentText(message?.content as Parameters<typeof contentText>[0]);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

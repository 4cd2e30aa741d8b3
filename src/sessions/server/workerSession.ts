// One session a worker claimed: its agent, the session's log as stored (read from the database),
// what the worker writes for it (queued in order, one transaction per batch, fenced by the
// lease's epoch) and the client events its agent was given. When another worker stopped
// mid-turn, the agent is resumed or reported stopped by the code the local session service uses
// after a restart (agentRestarts.ts): ACP session/load where the agent has it; otherwise the plan
// it left can still be approved or rejected, or the person continues with a message, and each
// starts a fresh agent turn here. docs/server.md, "Workers".
import { AnyEventSchema } from '../../core/protocol';
import type { Agent, AgentContext, AgentFactory, AgentStartOptions } from '../agent';
import { AgentRestarts, type RestartableSession } from '../agentRestarts';
import { parseClientEvent } from '../clientEvents';
import { errorText } from '../hostedSession';
import type { LogRecord, StoredEvent } from '../store';
import { LeaseLostError, type ClaimedSession, type Lease, type SessionLeases, type WorkerRecord } from '../store/postgres/leases';
import { seqOf } from '../store/postgres/postgresStore';

type HostEvent = Record<string, unknown> & { type: string };

/** Said to the person (agent_lost, agent resumed) when a worker took a session over. */
const INTERRUPTION = 'The worker running this session stopped';

export class WorkerSession implements RestartableSession {
  readonly events: StoredEvent[] = [];
  readonly outstanding = new Map<string, string>();
  readonly answered = new Set<string>();
  agent: Agent | null = null;
  checkpoint: unknown;
  /** Set once the workspace is ready and the agent can be made. */
  private restarts: AgentRestarts<WorkerSession> | null = null;
  private readonly abort = new AbortController();
  private pending: WorkerRecord[] = [];
  private flushing: Promise<void> | null = null;
  private delivered: number;
  private catchingUp = false;
  private catchUpAgain = false;
  private begun = false;
  private stopped = false;

  constructor(
    private readonly claimed: ClaimedSession,
    private readonly leases: SessionLeases,
    /** The agent factory for this session's workspace, prepared from its source; throws a reason for the person. */
    private readonly prepare: (session: ClaimedSession) => Promise<AgentFactory>,
    private readonly log: (line: string) => void,
    private readonly onStopped: () => void,
  ) {
    this.delivered = claimed.agentCursor;
    this.checkpoint = claimed.checkpoint;
  }

  get meta(): ClaimedSession['meta'] {
    return this.claimed.meta;
  }

  get lease(): Lease {
    return { sessionId: this.claimed.sessionId, epoch: this.claimed.epoch };
  }

  /** Starts the agent of a new session, or resumes (or reports stopped) the one a lost worker ran. */
  async begin(): Promise<void> {
    try {
      await this.refresh();
      for (const [requestId, toolUseId] of await this.leases.openRequests(this.claimed.sessionId))
        this.outstanding.set(requestId, toolUseId);
      await this.startOrResume();
    } catch (err) {
      this.log(`session ${this.claimed.sessionId}: starting failed (${errorText(err)}); waiting for the next client event`);
    }
    this.begun = true;
    await this.catchUp();
  }

  /** Prepares the workspace, then starts or resumes the agent; false when the workspace failed (said in the session). */
  private async startOrResume(): Promise<boolean> {
    const id = this.claimed.sessionId;
    const fresh = this.delivered === 0 && this.checkpoint === undefined;
    let prompt = '';
    if (fresh) {
      const creation = await this.leases.clientEventsAfter(id, 0);
      const first = creation.find((e) => e.type === 'user');
      prompt = first ? userText(first) : '';
      const last = creation.at(-1);
      if (last) this.delivered = seqOf(last);
      this.write([{ t: 'delivered', seq: this.delivered }]);
    }
    let factory: AgentFactory;
    try {
      factory = await this.prepare(this.claimed);
    } catch (err) {
      this.workspaceFailed(err);
      return false;
    }
    this.restarts = new AgentRestarts<WorkerSession>({
      agentFactory: factory,
      contextFor: () => this.context(),
      startAgent: (_session, agent, text, options) => this.startAgent(agent, text, options),
      log: this.log,
      interruption: INTERRUPTION,
    });
    if (fresh) {
      this.agent = factory({ sessionId: id, title: this.meta.title });
      await this.startAgent(this.agent, prompt);
      return true;
    }
    const open = [...this.outstanding.keys()];
    await this.restarts.resume(this);
    if (this.agent) this.log(`session ${id}: agent resumed on another worker (${this.agent.label})`);
    // What neither the agent nor a fresh turn can answer any more is refused by every replica now.
    const kept = new Set([...this.outstanding.keys(), ...this.restarts.waitingPlans(id)]);
    const closed = open.filter((requestId) => !kept.has(requestId));
    if (closed.length > 0) this.write([{ t: 'close_requests', ids: closed }]);
    return true;
  }

  /** The session's source could not be made into a workspace: said in the session, and nothing runs. */
  private workspaceFailed(err: unknown): void {
    const reason = errorText(err);
    this.log(`session ${this.claimed.sessionId}: workspace not prepared: ${reason}`);
    this.write([
      {
        t: 'event',
        origin: 'host',
        event: {
          type: 'system',
          subtype: 'agent_error',
          message: `The worker could not prepare this session's workspace: ${reason}. Send a message to try again.`,
        },
      },
      {
        t: 'event',
        origin: 'host',
        event: { type: 'result', subtype: 'error_during_execution', is_error: true, num_turns: 0, errors: [reason] },
      },
      { t: 'status', status: 'idle' },
      // Nothing to resume: the next message starts a fresh turn with the conversation so far.
      { t: 'checkpoint', state: null },
    ]);
    this.checkpoint = null;
  }

  private async startAgent(agent: Agent, prompt: string, options?: AgentStartOptions): Promise<void> {
    this.agent = agent;
    try {
      await agent.start(this.context(), prompt, options);
    } catch (err) {
      if (this.agent === agent) this.agent = null;
      this.log(`session ${this.claimed.sessionId}: agent failed to start: ${errorText(err)}`);
      this.queueEvents([
        { type: 'system', subtype: 'agent_error', message: `The agent failed to start: ${errorText(err)}` },
        { type: 'result', subtype: 'error_during_execution', is_error: true, num_turns: 0, errors: [errorText(err)] },
      ]);
      this.queueStatus('idle');
    }
  }

  /** Hands the agent what clients sent since it was last given something; stops on archive. */
  async catchUp(): Promise<void> {
    if (this.stopped || !this.begun) return;
    if (this.catchingUp) {
      this.catchUpAgain = true;
      return;
    }
    this.catchingUp = true;
    try {
      do {
        this.catchUpAgain = false;
        if ((await this.leases.status(this.claimed.sessionId)) === 'archived') return await this.stop(false);
        const sent = await this.leases.clientEventsAfter(this.claimed.sessionId, this.delivered);
        if (sent.length === 0) continue;
        await this.flushing;
        await this.refresh();
        if (!this.restarts && !(await this.startOrResume())) {
          this.delivered = seqOf(sent.at(-1) as StoredEvent);
          this.write([{ t: 'delivered', seq: this.delivered }]);
          continue;
        }
        for (const event of sent) this.deliver(event);
      } while (this.catchUpAgain && !this.stopped);
    } catch (err) {
      this.log(`session ${this.claimed.sessionId}: reading client events failed (${errorText(err)})`);
    } finally {
      this.catchingUp = false;
    }
  }

  /**
   * One client event, with its effect written in the same transaction as the cursor that says it
   * was given (a worker that takes over after a crash acts on it exactly once).
   */
  private deliver(event: StoredEvent): void {
    const restarts = this.restarts as AgentRestarts<WorkerSession>;
    this.delivered = seqOf(event);
    this.write([{ t: 'delivered', seq: this.delivered }]);
    let route;
    try {
      route = parseClientEvent(event, event.id, 'append');
    } catch {
      return; // the plan-mode switch of the creation, or nothing for the agent
    }
    try {
      if (route.kind === 'user') {
        // A message while plans of a stopped agent wait replaces the decision (planning goes on).
        const superseded = restarts.claim(this, [], true);
        if (superseded.before.length > 0) {
          this.queueEvents(superseded.before);
          this.write([{ t: 'close_requests', ids: superseded.closedRequests }]);
        }
        if (this.agent) this.agent.onUserMessage(route.text);
        else restarts.messageWithoutAgent(this);
      } else if (route.kind === 'decision') {
        if (this.outstanding.delete(route.requestId)) return this.agent?.onDecision(route.requestId, route.decision);
        const claimed = restarts.claim(this, [{ requestId: route.requestId, decision: route.decision, at: event.id }], false);
        const taken = claimed.taken.get(route.requestId);
        if (!taken) return this.log(`session ${this.claimed.sessionId}: decision on ${route.requestId} has no plan to act on`);
        this.queueEvents(taken.events);
        restarts.act(this, taken);
      }
    } catch (err) {
      this.log(`session ${this.claimed.sessionId}: the agent failed on a ${route.kind}: ${errorText(err)}`);
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

  // RestartableSession: what the restart code writes goes through this worker's lease.
  queueStatus(status: 'idle' | 'running' | 'requires_action'): void {
    this.write([{ t: 'status', status }]);
  }

  queueEvents(events: HostEvent[]): void {
    this.write(events.map((event): WorkerRecord => ({ t: 'event', origin: 'host', event })));
  }

  queue(records: LogRecord[]): Promise<void> {
    this.write(
      records.flatMap((record): WorkerRecord[] => {
        if (record.t === 'checkpoint') return [{ t: 'checkpoint', state: record.state }];
        if (record.t === 'status') return record.status === 'archived' ? [] : [{ t: 'status', status: record.status }];
        const { id: _id, ...event } = record.event;
        return [{ t: 'event', origin: 'host', event }];
      }),
    );
    return this.flushing ?? Promise.resolve();
  }

  /** Reads the events stored since the last read into `events`. */
  private async refresh(): Promise<void> {
    const last = this.events.at(-1);
    this.events.push(...(await this.leases.eventsAfter(this.claimed.sessionId, last ? seqOf(last) : 0)));
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
        const request = rest.type === 'control_request' ? (rest.request as { subtype?: unknown; tool_use_id?: unknown }) : undefined;
        if (request?.subtype === 'can_use_tool' && typeof rest.request_id === 'string') {
          this.outstanding.set(rest.request_id, typeof request.tool_use_id === 'string' ? request.tool_use_id : '');
        }
        this.write([{ t: 'event', origin: 'agent', event: rest }]);
      },
      setStatus: (status) => {
        if (live()) this.write([{ t: 'status', status }]);
      },
      log: (line) => this.log(`session ${id}: ${line}`),
      checkpoint: (state) => {
        if (!live()) return;
        this.checkpoint = state;
        this.write([{ t: 'checkpoint', state }]);
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
  const route = parseClientEvent(event, event.id, 'create');
  return route.kind === 'user' ? route.text : '';
}

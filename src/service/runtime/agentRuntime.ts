// One session's agent, run the same way wherever the session lives (the single-process host over
// the journal, a worker over PostgreSQL): start it for a new session or resume it from its
// checkpoint after a restart (or say truthfully it stopped: agentRestarts.ts), feed it the client
// events after its cursor (user messages, decisions), and write what it says through the store.
//
// Exactly once: the cursor is written before the agent hears of an event, in order with what the
// agent then writes. After a restart the agent resumes from its last checkpoint, which follows
// the cursor of every event it had been given; an event after the cursor is given again, one
// before it never. What differs between the stores is behind RuntimeStore (runtimeStore.ts).
import { AnyEventSchema, type PermissionDecision } from '../../core/protocol';
import type { Agent, AgentContext, AgentFactory, AgentStartOptions } from '../../agents/agent';
import { AgentRestarts, type ClaimedDecisions, type RestartableSession } from './agentRestarts';
import { parseClientEvent } from '../host/incomingEvents';
import type { OrphanDecision } from './lostAgents';
import type { StoredEvent } from '../store/sessionStore';
import { trackControl, type RuntimeEvent, type RuntimeRecord, type RuntimeStore } from './runtimeStore';
import { errorMessage } from '../../core/errors';
import { anyPlanApproved, approvesPlan } from '../changes/planApproval';
import { awaitsPlanFileDecision } from './agentRecovery';

/** Told when the session's plan is approved and when a turn after it ends (the record of what changed: docs/execution.md). */
export interface ApprovalHooks {
  /** A plan was approved: awaited before the agent hears of it, so what it records precedes every edit. */
  approved(): Promise<void>;
  /** The agent's turn ended (its `result`) after a plan was approved. */
  turnEnded?(): void;
}
import { withholdsSecrets } from '../../core/withheldFiles';
import type { SessionContext } from '../../core/protocol';

export interface AgentRuntimeOptions {
  readonly meta: { readonly id: string; readonly title: string; readonly session_context?: SessionContext | null };
  readonly store: RuntimeStore;
  /**
   * The factory for this session's agents (resumed, or fresh turns after a stop); undefined when
   * none can be made now (the caller said why in the session). Asked again on the next client
   * event while it has none.
   */
  agentFactory(): Promise<AgentFactory | undefined>;
  /** The newest client event the agent was given (0: none yet). */
  readonly cursor: number;
  log(line: string): void;
  /** What stopped the agent, for the person: "The session host restarted" (the default). */
  readonly interruption?: string;
  readonly approvals?: ApprovalHooks;
}

/**
 * What the store's append decided about a client event before it was stored (the journal's host
 * checks decisions synchronously): `taken`, the stopped agent's plan it decided. An event with no
 * claim is claimed when it is delivered (a worker, behind the API's own checks).
 */
export interface AppendClaim {
  readonly taken?: OrphanDecision;
}

export class AgentRuntime implements RestartableSession {
  agent: Agent | null = null;
  readonly #options: AgentRuntimeOptions;
  readonly #restarts: AgentRestarts<AgentRuntime>;
  readonly #abort = new AbortController();
  readonly #claims = new Map<string, AppendClaim>();
  #factory: AgentFactory | undefined;
  #cursor: number;
  #begun = false;
  #stopped = false;
  #feeding: Promise<void> | null = null;
  #feedAgain = false;

  constructor(options: AgentRuntimeOptions) {
    this.#options = options;
    this.#cursor = options.cursor;
    this.#restarts = new AgentRestarts<AgentRuntime>({
      agentFactory: (opts) => {
        if (!this.#factory) throw new Error('no agent can be made for this session yet');
        return this.#factory(opts);
      },
      contextFor: () => this.#context(),
      startAgent: (_session, agent, prompt, startOptions) => this.#start(agent, prompt, startOptions),
      log: (line) => options.log(line),
      ...(options.interruption !== undefined ? { interruption: options.interruption } : {}),
    });
  }

  // RestartableSession: the session as the store has it.
  get meta(): { readonly id: string; readonly title: string; readonly session_context?: SessionContext | null } {
    return this.#options.meta;
  }
  get events(): readonly StoredEvent[] {
    return this.#options.store.events;
  }
  get checkpoint(): unknown {
    return this.#options.store.checkpoint;
  }
  get outstanding(): Map<string, string> {
    return this.#options.store.outstanding;
  }
  get answered(): Set<string> {
    return this.#options.store.answered;
  }
  get cursor(): number {
    return this.#cursor;
  }

  /**
   * Starts the agent of a new session (`agent`, or one from the factory, with the creation's
   * prompt), or resumes the one a restart stopped (or reports it lost: `lostBecause` says why it
   * cannot resume at all); then feeds it what clients sent since its cursor.
   */
  async begin(options: { agent?: Agent; lostBecause?: string; awaitingDecision?: boolean } = {}): Promise<void> {
    try {
      if (options.awaitingDecision) await this.#awaitDecision();
      else await this.#startOrResume(options);
    } catch (err) {
      this.#log(`starting failed (${errorMessage(err)}); waiting for the next client event`);
    }
    this.#begun = true;
    await this.feed();
  }

  /** A session created from a plan file: no agent runs until its plan is decided (agentRestarts.ts awaitDecision). */
  async #awaitDecision(): Promise<void> {
    await this.#options.store.load?.();
    this.#factory ??= await this.#options.agentFactory();
    this.#restarts.awaitDecision(this);
  }

  /** False when no agent factory could be had (nothing runs until the next client event). */
  async #startOrResume(options: { agent?: Agent; lostBecause?: string }): Promise<boolean> {
    await this.#options.store.load?.();
    const fresh = this.#cursor === 0 && this.checkpoint === undefined;
    let prompt = '';
    if (fresh) {
      const creation = await this.#options.store.clientEventsAfter(0);
      const first = creation.find((e) => e.type === 'user');
      prompt = first ? creationText(first) : '';
      const last = creation.at(-1);
      if (last) this.#cursor = seqOf(last);
      this.#write([{ t: 'delivered', seq: this.#cursor }]);
    }
    this.#factory ??= await this.#options.agentFactory();
    if (!this.#factory) return false;
    if (fresh) {
      await this.#start(
        options.agent ??
          this.#factory({ sessionId: this.meta.id, title: this.meta.title, withholdSecrets: withholdsSecrets(this.meta.session_context) }),
        prompt,
      );
      return true;
    }
    if (this.checkpoint === null && awaitsPlanFileDecision(this.events, this.outstanding)) {
      // A plan file's session taken over (a worker's claim, a host's restart) before its decision: it still waits.
      this.#restarts.awaitDecision(this);
      return true;
    }
    const open = [...this.outstanding.keys()];
    await this.#restarts.resume(this, options.lostBecause);
    // What neither the agent nor a fresh turn can answer any more is closed for every reader.
    const kept = new Set([...this.outstanding.keys(), ...this.#restarts.waitingPlans(this.meta.id)]);
    const closed = open.filter((requestId) => !kept.has(requestId));
    if (closed.length > 0) this.#write([{ t: 'close_requests', ids: closed }]);
    return true;
  }

  /**
   * Takes, synchronously, the decisions of an append that answer plans of a stopped agent, and
   * the plans a message in it closes (AgentRestarts.claim). Call `claimed(uuid, …)` for each of
   * the append's events once it is queued, and `undo` when it was not stored.
   */
  claim(
    decisions: ReadonlyArray<{ requestId: string; decision: PermissionDecision; at: string }>,
    hasMessage: boolean,
  ): ClaimedDecisions & { unknown: string | undefined } {
    return this.#restarts.claim(this, decisions, hasMessage);
  }

  /** Records what the append decided about the client event `uuid`, for its delivery. */
  claimed(uuid: string, claim: AppendClaim): void {
    this.#claims.set(uuid, claim);
  }

  /** Forgets the claim of an event that was not stored. */
  unclaimed(uuid: string): void {
    this.#claims.delete(uuid);
  }

  /**
   * Hands the agent the client events after its cursor, each once, in order. Resolves when what
   * was stored before the call has been given (concurrent calls share one loop).
   */
  feed(): Promise<void> {
    if (this.#stopped || !this.#begun) return Promise.resolve();
    this.#feedAgain = true;
    this.#feeding ??= this.#feedLoop();
    return this.#feeding;
  }

  async #feedLoop(): Promise<void> {
    try {
      await null; // #feeding is set before the loop can end
      while (this.#feedAgain && !this.#stopped) {
        this.#feedAgain = false;
        const sent = await this.#options.store.clientEventsAfter(this.#cursor);
        if (sent.length === 0 || this.#stopped) continue;
        if (!this.#factory && !(await this.#startOrResume({}))) {
          // Nothing can run them (said in the session); a later event tries again.
          this.#cursor = seqOf(sent.at(-1) as StoredEvent);
          this.#write([{ t: 'delivered', seq: this.#cursor }]);
          continue;
        }
        for (const event of sent) {
          if (this.#stopped) break;
          if (seqOf(event) <= this.#cursor) continue;
          await this.#beforeDelivery(event);
          if (!this.#stopped) this.#deliver(event);
        }
      }
    } catch (err) {
      this.#log(`reading client events failed (${errorMessage(err)})`);
    } finally {
      this.#feeding = null;
    }
  }

  /** A plan's approval is told to the hooks before the agent (or a fresh turn) acts on it. */
  async #beforeDelivery(event: StoredEvent): Promise<void> {
    const hooks = this.#options.approvals;
    if (!hooks || !approvesPlan(event, this.events)) return;
    try {
      await hooks.approved();
    } catch (err) {
      this.#log(`recording the approval failed: ${errorMessage(err)}`);
    }
  }

  /** One client event: the cursor that says it was given, then the agent (or a fresh turn) acts on it. */
  #deliver(event: StoredEvent): void {
    this.#cursor = seqOf(event);
    this.#write([{ t: 'delivered', seq: this.#cursor }]);
    const uuid = typeof event.uuid === 'string' ? event.uuid : '';
    const claim = this.#claims.get(uuid);
    this.#claims.delete(uuid);
    let route;
    try {
      route = parseClientEvent(event, event.id, 'append');
    } catch {
      return; // the plan-mode switch of the creation, or nothing for the agent
    }
    try {
      if (route.kind === 'user') {
        if (!claim) {
          // A message while plans of a stopped agent wait replaces the decision (planning goes on).
          const superseded = this.#restarts.claim(this, [], true);
          if (superseded.before.length > 0) {
            this.queueEvents(superseded.before);
            for (const requestId of superseded.closedRequests) this.answered.add(requestId);
            this.#write([{ t: 'close_requests', ids: superseded.closedRequests }]);
          }
        }
        // An agent that ended with its work done (agent.ts `ended`) takes no more: a fresh turn does.
        if (this.agent?.ended) this.agent = null;
        if (this.agent) this.agent.onUserMessage(route.text);
        else this.#restarts.messageWithoutAgent(this);
      } else if (route.kind === 'decision') {
        if (claim?.taken) return this.#restarts.act(this, claim.taken);
        if (this.outstanding.delete(route.requestId)) return this.agent?.onDecision(route.requestId, route.decision);
        if (claim) return;
        const claimed = this.#restarts.claim(this, [{ requestId: route.requestId, decision: route.decision, at: event.id }], false);
        const taken = claimed.taken.get(route.requestId);
        if (!taken) return this.#log(`decision on ${route.requestId} has no plan to act on`);
        this.queueEvents(taken.events);
        this.#restarts.act(this, taken);
      }
    } catch (err) {
      this.#log(`the agent failed on a ${route.kind}: ${errorMessage(err)}`);
    }
  }

  /** Ends the agent and every process it started; nothing it says afterwards is written. Idempotent. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#abort.abort();
    this.#restarts.forget(this.meta.id);
    const agent = this.agent;
    this.agent = null;
    await agent?.stop().catch((err: unknown) => this.#log(`agent stop failed: ${errorMessage(err)}`));
  }

  // RestartableSession: what the restart code writes goes through the store.
  queueStatus(status: 'idle' | 'running' | 'requires_action'): void {
    this.#write([{ t: 'status', status }]);
  }

  queueEvents(events: RuntimeEvent[]): void {
    this.#write(events.map((event): RuntimeRecord => ({ t: 'event', origin: 'host', event })));
  }

  queue(records: RuntimeRecord[]): Promise<void> {
    return this.#options.store.write(records);
  }

  async #start(agent: Agent, prompt: string, options?: AgentStartOptions): Promise<void> {
    this.agent = agent;
    try {
      await agent.start(this.#context(), prompt, options);
    } catch (err) {
      if (this.agent === agent) this.agent = null;
      this.#log(`agent failed to start: ${errorMessage(err)}`);
      this.queueEvents([
        { type: 'system', subtype: 'agent_error', message: `The agent failed to start: ${errorMessage(err)}` },
        { type: 'result', subtype: 'error_during_execution', is_error: true, num_turns: 0, errors: [errorMessage(err)] },
      ]);
      this.queueStatus('idle');
    }
  }

  #context(): AgentContext {
    const signal = this.#abort.signal;
    return {
      sessionId: this.meta.id,
      signal,
      emit: (event) => {
        if (signal.aborted) return;
        const parsed = AnyEventSchema.safeParse(event);
        if (!parsed.success) return this.#log('dropped an agent event that is not an object with a type');
        const { id: _ignored, ...rest } = parsed.data;
        trackControl(this.#options.store, rest);
        this.#write([{ t: 'event', origin: 'agent', event: rest }]);
        if (rest.type === 'result' && this.#options.approvals?.turnEnded && anyPlanApproved(this.events))
          this.#options.approvals.turnEnded();
      },
      setStatus: (status) => {
        if (!signal.aborted) this.#write([{ t: 'status', status }]);
      },
      log: (line) => this.#log(line),
      checkpoint: (state) => {
        if (!signal.aborted) this.#write([{ t: 'checkpoint', state }]);
      },
    };
  }

  /** Failures are the store's to report (it logs them; the worker's retries and fences). */
  #write(records: RuntimeRecord[]): void {
    this.#options.store.write(records).catch(() => {});
  }

  #log(line: string): void {
    this.#options.log(`session ${this.meta.id}: ${line}`);
  }
}

/** The event's sequence number in its session's log ("e_000000000042" -> 42). */
export function seqOf(event: { id: string }): number {
  const match = /^e_(\d{12,})$/.exec(event.id);
  return match ? Number(match[1]) : 0;
}

function creationText(event: StoredEvent): string {
  const route = parseClientEvent(event, event.id, 'create');
  return route.kind === 'user' ? route.text : '';
}

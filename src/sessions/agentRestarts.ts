// What the SessionHost does about agents across its own restarts: on load it resumes each live
// session's agent (its own state, or its conversation through ACP session/load) or reports it
// lost, once, with what can still be done; afterwards a decision on a plan the lost agent left, or
// a message, starts a fresh agent turn that carries the plan out, revises it, or goes on planning
// from the conversation (agentRecovery.ts writes the prompts, lostAgents.ts keeps the requests).
// docs/agents.md, "When the agent stops".
import { AGENT_LOST_SUBTYPE, AGENT_RESUMED_SUBTYPE, type PermissionDecision } from '../core/protocol';
import { parseEventBatch } from '../core/eventBatch';
import type { Agent, AgentContext, AgentFactory, AgentStartOptions } from './agent';
import { carriedOutLast, carryOutPrompt, continuePrompt, conversationRecap, freshTurnSinceLost, revisePrompt } from './agentRecovery';
import { errorText } from './hostedSession';
import { LostAgents, restartedEvent, type OrphanDecision } from './lostAgents';
import type { LogRecord, StoredEvent } from './store';

type HostEvent = Record<string, unknown> & { type: string };

/**
 * What this needs of a session: the local host's HostedSession, or the session a server worker
 * claimed after another worker stopped (server/workerSession.ts).
 */
export interface RestartableSession {
  readonly meta: { readonly id: string; readonly title: string };
  /** The session's log as stored. */
  readonly events: readonly StoredEvent[];
  /** The agent's saved state: undefined none, null reported lost. */
  readonly checkpoint: unknown;
  /** The live agent's requests awaiting a decision: request_id -> tool_use_id. */
  readonly outstanding: Map<string, string>;
  readonly answered: Set<string>;
  agent: Agent | null;
  queueStatus(status: 'idle' | 'running' | 'requires_action'): void;
  queueEvents(events: HostEvent[]): void;
  queue(records: LogRecord[]): Promise<void>;
}

export interface AgentRestartsHost<S extends RestartableSession> {
  readonly agentFactory: AgentFactory;
  contextFor(session: S): AgentContext;
  startAgent(session: S, agent: Agent, prompt: string, options?: AgentStartOptions): Promise<void>;
  log(line: string): void;
  /** What stopped the agent, for the person: "The session host restarted" (the default). */
  readonly interruption?: string;
}

/** What one append does about plans whose agent stopped (see AgentRestarts.claim). */
export interface ClaimedDecisions {
  /** Decisions on orphaned plans, by request id: acted on once stored. */
  readonly taken: ReadonlyMap<string, OrphanDecision>;
  /** Events before the batch's own (plans a message closes), and after (a decision's effect). */
  readonly before: HostEvent[];
  readonly after: HostEvent[];
  /** Request ids this append answers besides its decisions (the plans a message closes). */
  readonly closedRequests: readonly string[];
  /** Gives everything back: the append was not stored. */
  undo(): void;
}

export class AgentRestarts<S extends RestartableSession> {
  readonly #lost = new LostAgents();
  readonly #host: AgentRestartsHost<S>;

  constructor(host: AgentRestartsHost<S>) {
    this.#host = host;
  }

  get #interruption(): string {
    return this.#host.interruption ?? 'The session host restarted';
  }

  /** The request ids of the plans of a stopped agent that still wait for a decision. */
  waitingPlans(sessionId: string): string[] {
    return this.#lost.plans(sessionId).map((plan) => plan.requestId);
  }

  /**
   * After a restart: resumes the session's agent, or reports it lost (once) with what can still be
   * done. An agent that does not come back with its open requests leaves them here.
   */
  async resume(session: S, lostBecause?: string): Promise<void> {
    const id = session.meta.id;
    let reason = lostBecause ?? 'the agent does not support resuming';
    // null: no agent state to resume (an earlier start already reported the agent as lost).
    if (session.checkpoint !== undefined && session.checkpoint !== null && lostBecause === undefined) {
      try {
        const agent = this.#host.agentFactory({ sessionId: id, title: session.meta.title });
        if (agent.resume) {
          session.agent = agent;
          const outcome = await agent.resume(this.#host.contextFor(session), session.checkpoint);
          if (outcome === true || outcome === 'continued') {
            this.#host.log(`session ${id}: agent resumed (${agent.label})`);
            return;
          }
          if (outcome === 'reloaded') {
            this.#reloaded(session, agent);
            return;
          }
          reason = typeof outcome === 'object' ? outcome.lost : 'the agent could not continue from its saved state';
        }
        session.agent = null;
        await agent.stop();
      } catch (err) {
        session.agent = null;
        reason = `resuming failed: ${errorText(err)}`;
      }
    }
    const plans = this.#lost.orphan(id, session.outstanding, session.events);
    session.outstanding.clear();
    session.queueStatus('idle');
    // Said once: a later start finds the agent already reported and nothing running since. A null
    // checkpoint is such a report too, unless a fresh turn was started since (and never saved its state).
    if (stoppedInLog(session.events) || (session.checkpoint === null && !freshTurnSinceLost(session.events))) return;
    this.#host.log(`session ${id}: agent lost after restart (${reason})`);
    const what =
      plans > 0
        ? 'Its plan can still be decided: Approve starts a new agent turn that carries it out, Reject starts one that revises it.'
        : 'Send a message (or Continue) to start a new agent turn with the conversation so far.';
    session.queueEvents([
      {
        type: 'system',
        subtype: AGENT_LOST_SUBTYPE,
        message: `${this.#interruption} and this session's agent could not continue (${reason}). ${what}`,
      },
    ]);
    session.queue([{ t: 'checkpoint', state: null }]).catch(() => {});
  }

  /** The agent has its conversation back; what it had open is answered through here now. */
  #reloaded(session: S, agent: Agent): void {
    const id = session.meta.id;
    const plans = this.#lost.orphan(id, session.outstanding, session.events);
    session.outstanding.clear();
    this.#host.log(`session ${id}: agent resumed its conversation (${agent.label}); ${plans} plan(s) wait for a decision`);
    session.queueEvents([
      {
        type: 'system',
        subtype: AGENT_RESUMED_SUBTYPE,
        message: `${this.#interruption} and ${agent.label} continued this session's conversation.${plans > 0 ? ' Its plan can still be decided.' : ''}`,
      },
    ]);
    session.queueStatus(plans > 0 ? 'requires_action' : 'idle');
  }

  /**
   * Takes, synchronously (so a concurrent duplicate is refused), the decisions of one append that
   * answer plans of a stopped agent, and the plans a message in it closes. `isOutstanding` says
   * whether a live agent holds the request; a request neither it nor this holds is refused by the
   * caller (undefined comes back for it), one the restart closed is refused here with why.
   */
  claim(
    session: S,
    decisions: ReadonlyArray<{ requestId: string; decision: PermissionDecision; at: string }>,
    hasMessage: boolean,
  ): ClaimedDecisions & { unknown: string | undefined } {
    const id = session.meta.id;
    const taken = new Map<string, OrphanDecision>();
    let unknown: string | undefined;
    try {
      for (const { requestId, decision, at } of decisions) {
        if (session.outstanding.has(requestId)) continue;
        const one = this.#lost.take(id, requestId, decision, at, session.agent !== null);
        if (!one) {
          unknown ??= requestId;
          continue;
        }
        taken.set(requestId, one);
      }
    } catch (err) {
      for (const one of taken.values()) this.#lost.restore(id, one.orphan);
      throw err;
    }
    // A message while plans of a stopped agent wait: it replaces the decision (planning goes on).
    const superseded = hasMessage && taken.size === 0 && unknown === undefined ? this.#lost.supersede(id) : { plans: [], events: [] };
    return {
      taken,
      unknown,
      before: superseded.events,
      after: [...taken.values()].flatMap((one) => one.events),
      closedRequests: superseded.plans.map((plan) => plan.requestId),
      undo: () => {
        for (const one of taken.values()) this.#lost.restore(id, one.orphan);
        for (const plan of superseded.plans) {
          this.#lost.restore(id, plan);
          session.answered.delete(plan.requestId);
        }
      },
    };
  }

  /** A reviewer decided a plan whose agent stopped: the agent that has the conversation, or a fresh one, acts on it. */
  act(session: S, taken: OrphanDecision): void {
    const { recovery } = taken;
    if (recovery.kind === 'none') return;
    const agent = session.agent;
    const verb = recovery.kind === 'carry_out' ? 'approved' : 'rejected';
    this.#host.log(`session ${session.meta.id}: ${verb} plan ${taken.orphan.toolUseId} of a stopped agent`);
    if (agent) {
      // The agent reloaded its conversation: it knows the plan; it only needs the answer.
      if (recovery.kind === 'carry_out') {
        const prompt = `The reviewer approved your plan. Carry it out now:\n\n${recovery.plan}`;
        if (agent.carryOut) agent.carryOut(prompt);
        else agent.onUserMessage(prompt);
      } else {
        agent.onUserMessage(
          `The reviewer rejected your plan. Their feedback:\n\n${recovery.feedback}\n\nStay in plan mode, revise the plan, and ask again when it is ready.`,
        );
      }
      return;
    }
    const recap = conversationRecap(session.events);
    if (recovery.kind === 'carry_out') this.#startFresh(session, carryOutPrompt(recovery.plan, recap), { carryOut: true });
    else this.#startFresh(session, revisePrompt(recovery.plan, recovery.feedback, recap));
  }

  /**
   * A message for a session with no agent (lost at a restart, or failed to start): a fresh one
   * goes on from the conversation (the message is its last entry), carrying the plan out when the
   * last decision approved it.
   */
  messageWithoutAgent(session: S): void {
    const carryOut = carriedOutLast(session.events);
    const recap = conversationRecap(session.events);
    session.queueEvents([restartedEvent(carryOut ? 'carry_out' : 'continue')]);
    this.#host.log(
      `session ${session.meta.id}: a message starts a new agent turn (${carryOut ? 'carrying out the approved plan' : 'planning'})`,
    );
    this.#startFresh(session, continuePrompt(recap, carryOut ? 'carry_out' : 'plan'), { carryOut });
  }

  forget(sessionId: string): void {
    this.#lost.forget(sessionId);
  }

  #startFresh(session: S, prompt: string, options?: AgentStartOptions): void {
    const agent = this.#host.agentFactory({ sessionId: session.meta.id, title: session.meta.title });
    session.agent = agent;
    session.queueStatus('running');
    void this.#host.startAgent(session, agent, prompt, options);
  }
}

/** Whether the log's last word on the agent is that it stopped (see ParsedBatch.agentLife). */
function stoppedInLog(events: readonly StoredEvent[]): boolean {
  return parseEventBatch(events).agentLife?.stopped === true;
}

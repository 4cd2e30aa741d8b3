// What the agent runtime (agentRuntime.ts) does about an agent across a restart of the process
// that runs it (the single-process host, or a worker taking a session over): it resumes each live
// session's agent (its own state, or its conversation through ACP session/load) or reports it
// lost, once, with what can still be done; afterwards a decision on a plan the lost agent left, or
// a message, starts a fresh agent turn that carries the plan out, revises it, or goes on planning
// from the conversation (agentRecovery.ts writes the prompts, lostAgents.ts keeps the requests).
// docs/agents.md, "When the agent stops".
import { AGENT_LOST_SUBTYPE, AGENT_RESUMED_SUBTYPE, type PermissionDecision } from '../../core/protocol';
import { parseEventBatch } from '../../core/eventBatch';
import type { Agent, AgentContext, AgentFactory, AgentStartOptions } from '../../agents/agent';
import {
  lastApprovedPlan,
  carryOutPrompt,
  continuePrompt,
  conversationRecap,
  freshTurnSinceLost,
  interruptedMessage,
  interruptedTurnPrompt,
  revisePrompt,
} from './agentRecovery';
import { planHash } from '../../core/decision';
import { planFileCarryOutPrompt, planFileRevisePrompt } from '../../core/planFileSession';
import { LostAgents, restartedEvent, type OrphanDecision } from './lostAgents';
import type { StoredEvent } from '../store/sessionStore';
import type { RuntimeRecord } from './runtimeStore';
import { errorMessage } from '../../core/errors';
import { withholdsSecrets } from '../../core/withheldFiles';
import type { SessionContext } from '../../core/protocol';

type HostEvent = Record<string, unknown> & { type: string };

/** What this needs of a session: the agent runtime's (runtime/agentRuntime.ts), wherever the session lives. */
export interface RestartableSession {
  readonly meta: { readonly id: string; readonly title: string; readonly session_context?: SessionContext | null };
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
  queue(records: RuntimeRecord[]): Promise<void>;
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
        const agent = this.#host.agentFactory({
          sessionId: id,
          title: session.meta.title,
          withholdSecrets: withholdsSecrets(session.meta.session_context),
        });
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
        reason = `resuming failed: ${errorMessage(err)}`;
      }
    }
    const plans = this.#lost.orphan(id, session.outstanding, session.events);
    session.outstanding.clear();
    session.queueStatus('idle');
    // Said once: a later start finds the agent already reported and nothing running since. A null
    // checkpoint is such a report too, unless a fresh turn was started since (and never saved its state).
    if (stoppedInLog(session.events) || (session.checkpoint === null && !freshTurnSinceLost(session.events))) return;
    this.#host.log(`session ${id}: agent lost after restart (${reason})`);
    // A turn the restart cut off (a message with no result after it) goes on in a new agent turn.
    const cut = plans > 0 ? undefined : interruptedMessage(session.events);
    const what =
      plans > 0
        ? 'Its plan can still be decided: Approve starts a new agent turn that carries it out, Reject starts one that revises it.'
        : cut !== undefined
          ? 'A new agent turn goes on with the message it was answering, from the conversation so far.'
          : 'Send a message (or Continue) to start a new agent turn with the conversation so far.';
    session.queueEvents([
      {
        type: 'system',
        subtype: AGENT_LOST_SUBTYPE,
        message: `${this.#interruption} and this session's agent could not continue (${reason}). ${what}`,
      },
    ]);
    session.queue([{ t: 'checkpoint', state: null }]).catch(() => {});
    if (cut !== undefined) this.messageWithoutAgent(session);
  }

  /** The agent has its conversation back; what it had open is answered through here now. */
  #reloaded(session: S, agent: Agent): void {
    const id = session.meta.id;
    const plans = this.#lost.orphan(id, session.outstanding, session.events);
    session.outstanding.clear();
    // A turn the restart cut off (a message with no result after it) goes on; a waiting plan's turn waits for its decision.
    const cut = plans > 0 ? undefined : interruptedMessage(session.events);
    this.#host.log(
      `session ${id}: agent resumed its conversation (${agent.label}); ${plans} plan(s) wait for a decision${cut === undefined ? '' : '; the interrupted turn goes on'}`,
    );
    const goesOn =
      plans > 0 ? ' Its plan can still be decided.' : cut !== undefined ? ' It goes on with the message it was answering.' : '';
    session.queueEvents([
      {
        type: 'system',
        subtype: AGENT_RESUMED_SUBTYPE,
        message: `${this.#interruption} and ${agent.label} continued this session's conversation.${goesOn}`,
      },
    ]);
    session.queueStatus(plans > 0 ? 'requires_action' : cut !== undefined ? 'running' : 'idle');
    if (cut !== undefined) agent.onUserMessage(interruptedTurnPrompt(cut));
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
    const source = taken.orphan.source;
    if (recovery.kind === 'carry_out') {
      // Bound to the text as the log records it (an edit is read back without its trailing blank lines).
      const approvedPlanHash = planHash(recovery.plan === taken.orphan.plan ? recovery.plan : recovery.plan.trimEnd());
      const prompt =
        source !== undefined
          ? planFileCarryOutPrompt(recovery.plan, source)
          : carryOutPrompt(recovery.plan, conversationRecap(session.events));
      this.#startFresh(session, prompt, { carryOut: true, approvedPlanHash });
    } else {
      this.#startFresh(
        session,
        source !== undefined
          ? planFileRevisePrompt(recovery.plan, recovery.feedback, source)
          : revisePrompt(recovery.plan, recovery.feedback, conversationRecap(session.events)),
      );
    }
  }

  /**
   * A session that starts from a plan file (core/planFileSession.ts): its plan requests, which the
   * host wrote, wait for a decision with no agent running; the decision starts the first turn.
   */
  awaitDecision(session: S): void {
    const plans = this.#lost.orphan(session.meta.id, session.outstanding, session.events);
    session.outstanding.clear();
    session.queueStatus(plans > 0 ? 'requires_action' : 'idle');
  }

  /**
   * A message for a session with no agent (lost at a restart, or failed to start): a fresh one
   * goes on from the conversation (the message is its last entry), carrying the plan out when the
   * last decision approved it.
   */
  messageWithoutAgent(session: S): void {
    const approved = lastApprovedPlan(session.events);
    const carryOut = approved !== undefined;
    const recap = conversationRecap(session.events);
    session.queueEvents([restartedEvent(carryOut ? 'carry_out' : 'continue')]);
    this.#host.log(
      `session ${session.meta.id}: a message starts a new agent turn (${carryOut ? 'carrying out the approved plan' : 'planning'})`,
    );
    // Bound to the approved plan, so its progress reaches the same checklist.
    this.#startFresh(session, continuePrompt(recap, carryOut ? 'carry_out' : 'plan'), {
      carryOut,
      ...(approved !== undefined ? { approvedPlanHash: planHash(approved) } : {}),
    });
  }

  forget(sessionId: string): void {
    this.#lost.forget(sessionId);
  }

  #startFresh(session: S, prompt: string, options?: AgentStartOptions): void {
    const agent = this.#host.agentFactory({
      sessionId: session.meta.id,
      title: session.meta.title,
      withholdSecrets: withholdsSecrets(session.meta.session_context),
    });
    session.agent = agent;
    session.queueStatus('running');
    void this.#host.startAgent(session, agent, prompt, options);
  }
}

/** Whether the log's last word on the agent is that it stopped (see ParsedBatch.agentLife). */
function stoppedInLog(events: readonly StoredEvent[]): boolean {
  return parseEventBatch(events).agentLife?.stopped === true;
}

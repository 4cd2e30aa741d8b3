// The requests of agents that stopped with a restart (of the host, or a worker's takeover), per
// session: the plan requests, which a reviewer may still decide (a fresh agent turn then carries
// the plan out or revises it), and the others (tool permissions, questions by form), which nobody
// can answer any more and are refused with a message that says why. The agent runtime asks this
// (through agentRestarts.ts) before it takes a decision, and hands it the open requests of every
// agent that does not come back with them. docs/agents.md, "When the
// agent stops".
import { SessionsError } from '../../core/errors';
import { AGENT_RESTARTED_SUBTYPE, type PermissionDecision } from '../../core/protocol';
import { SUPERSEDED_PLAN_TEXT, planRequestOf, planResultEvent, recoveryFor, type OrphanedPlan, type Recovery } from './agentRecovery';
import type { StoredEvent } from '../store/sessionStore';

type HostEvent = Record<string, unknown> & { type: string };

/** What the host writes and does for a decision on an orphaned plan. */
export interface OrphanDecision {
  orphan: OrphanedPlan;
  recovery: Recovery;
  /** Written in the decision's own batch, so the decision and its effect are durable together. */
  events: HostEvent[];
}

export class LostAgents {
  readonly #orphans = new Map<string, Map<string, OrphanedPlan>>();
  readonly #closed = new Map<string, Set<string>>();

  /**
   * The agent of `sessionId` went without answering `open` (request id → tool_use id): plan
   * requests stay decidable, the rest are closed. Returns how many plans wait.
   */
  orphan(sessionId: string, open: ReadonlyMap<string, string>, events: readonly StoredEvent[]): number {
    if (open.size === 0) return this.#orphans.get(sessionId)?.size ?? 0;
    const plans = this.#orphans.get(sessionId) ?? new Map<string, OrphanedPlan>();
    const closed = this.#closed.get(sessionId) ?? new Set<string>();
    const wanted = new Set(open.keys());
    for (let i = events.length - 1; i >= 0 && wanted.size > 0; i--) {
      const event = events[i] as StoredEvent;
      if (event.type !== 'control_request' || typeof event.request_id !== 'string' || !wanted.has(event.request_id)) continue;
      wanted.delete(event.request_id);
      const plan = planRequestOf(event);
      if (plan) plans.set(plan.requestId, plan);
      else closed.add(event.request_id);
    }
    for (const requestId of wanted) closed.add(requestId);
    if (plans.size) this.#orphans.set(sessionId, plans);
    if (closed.size) this.#closed.set(sessionId, closed);
    return plans.size;
  }

  /** Plans of `sessionId` waiting for a decision that a fresh turn will act on. */
  plans(sessionId: string): OrphanedPlan[] {
    return [...(this.#orphans.get(sessionId)?.values() ?? [])];
  }

  /**
   * Takes the orphaned plan `requestId` for `decision` (synchronously, so a concurrent duplicate
   * finds it gone): undefined when it is not one. A request the restart closed is refused here,
   * with why; `at` names it in the message.
   */
  take(sessionId: string, requestId: string, decision: PermissionDecision, at: string, liveAgent: boolean): OrphanDecision | undefined {
    const orphan = this.#orphans.get(sessionId)?.get(requestId);
    if (!orphan) {
      if (this.#closed.get(sessionId)?.has(requestId)) {
        throw new SessionsError(
          'conflict',
          `${at}: control_request ${requestId} can no longer be answered: the agent that asked it stopped when the session host restarted. ` +
            'What it left (its plan, its question) can still be answered in the session.',
          409,
        );
      }
      return undefined;
    }
    this.#orphans.get(sessionId)?.delete(requestId);
    const recovery = recoveryFor(orphan, decision);
    const events: HostEvent[] = [planResultEvent(orphan.toolUseId, recovery.toolResult, recovery.kind !== 'carry_out')];
    // A plan file's first turn is no restart: no agent had run.
    if (!liveAgent && recovery.kind !== 'none' && orphan.source === undefined) events.push(restartedEvent(recovery.kind));
    return { orphan, recovery, events };
  }

  /** Gives a taken plan back (its decision was not stored). */
  restore(sessionId: string, orphan: OrphanedPlan): void {
    const plans = this.#orphans.get(sessionId) ?? new Map<string, OrphanedPlan>();
    plans.set(orphan.requestId, orphan);
    this.#orphans.set(sessionId, plans);
  }

  /**
   * A message instead of a decision: the open plans are closed (the model is told so), and the
   * message goes on from the conversation. Returns the events that close them, in order.
   */
  supersede(sessionId: string): { plans: OrphanedPlan[]; events: HostEvent[] } {
    const plans = this.plans(sessionId);
    this.#orphans.delete(sessionId);
    return { plans, events: plans.map((plan) => planResultEvent(plan.toolUseId, SUPERSEDED_PLAN_TEXT, true)) };
  }

  forget(sessionId: string): void {
    this.#orphans.delete(sessionId);
    this.#closed.delete(sessionId);
  }
}

/** The host's word that a fresh agent turn starts after its agent stopped (an agent runs again). */
export function restartedEvent(kind: 'carry_out' | 'revise' | 'continue'): HostEvent {
  const what =
    kind === 'carry_out'
      ? 'carries out the approved plan'
      : kind === 'revise'
        ? 'revises the plan from the feedback'
        : 'goes on planning with the conversation so far';
  return { type: 'system', subtype: AGENT_RESTARTED_SUBTYPE, message: `The agent had stopped; a new agent turn ${what}.` };
}

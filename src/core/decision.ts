// Decision binding (docs/protocol.md section 10): a decision is bound to the session, the ExitPlanMode
// tool_use id and the SHA-256 of the plan text the person saw. The host sends it only while that
// exact plan is still the pending one, and at most once per tool_use, so a double click, a replayed
// message, or an old card clicked after the agent revised cannot approve a plan nobody read.
// Pure: no I/O, no timers; the hash is a pure-JS SHA-256, so this file also runs in the webview.
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';
import type { DecisionBinding } from './panelMessages';
import { controlResponseEvent, teleportDenyMessage, type AnyEvent } from './protocol';

/** SHA-256 hex of the plan text exactly as shown (no trimming: what was read is what is bound). */
export function planHash(plan: string): string {
  return bytesToHex(sha256(utf8ToBytes(plan)));
}

export function bindingFor(sessionId: string, toolUseId: string, plan: string): DecisionBinding {
  return { sessionId, toolUseId, planHash: planHash(plan) };
}

/** The plan the session is waiting on right now (from the scanner), if any. */
export interface PendingPlanRef {
  sessionId: string;
  toolUseId: string;
  plan: string;
}

export const DECISION_REFUSALS = ['wrong_session', 'no_pending_plan', 'superseded', 'plan_changed', 'already_decided'] as const;
export type DecisionRefusal = (typeof DECISION_REFUSALS)[number];

export type DecisionCheck = { ok: true } | { ok: false; reason: DecisionRefusal; message: string };

function refuse(reason: DecisionRefusal, message: string): DecisionCheck {
  return { ok: false, reason, message };
}

/** The key a used binding is remembered under: one decision per ExitPlanMode call. */
function usedKey(sessionId: string, toolUseId: string): string {
  return `${sessionId}\u0000${toolUseId}`;
}

/**
 * Remembers which plans were already decided and checks new decisions against the pending plan.
 * Its state is plain strings so the extension can persist it across reloads.
 */
export class DecisionGate {
  readonly #used = new Set<string>();

  constructor(used: Iterable<{ sessionId: string; toolUseId: string }> = []) {
    for (const u of used) this.#used.add(usedKey(u.sessionId, u.toolUseId));
  }

  /** Checks without claiming. */
  check(binding: DecisionBinding, pending: PendingPlanRef | undefined, sessionId: string): DecisionCheck {
    if (binding.sessionId !== sessionId) {
      return refuse('wrong_session', 'This decision belongs to another Ultraplan session; it was not sent.');
    }
    // Used first: a replay of a decision that went through must say so, not "no pending plan".
    if (this.#used.has(usedKey(binding.sessionId, binding.toolUseId))) {
      return refuse('already_decided', 'This plan was already decided; the same decision is not sent twice. Wait for the next plan.');
    }
    if (!pending) {
      return refuse(
        'no_pending_plan',
        'The session is not waiting for a decision on a plan any more (it was decided elsewhere or the agent moved on); nothing was sent.',
      );
    }
    if (pending.toolUseId !== binding.toolUseId) {
      return refuse(
        'superseded',
        'This plan was superseded by a newer revision; review the current plan before deciding. Nothing was sent.',
      );
    }
    if (pending.plan.length === 0 || planHash(pending.plan) !== binding.planHash) {
      return refuse('plan_changed', 'The plan text differs from the one shown when you decided; review it again. Nothing was sent.');
    }
    return { ok: true };
  }

  /** Checks and, when allowed, marks the binding used in the same step (no await in between). */
  claim(binding: DecisionBinding, pending: PendingPlanRef | undefined, sessionId: string): DecisionCheck {
    const result = this.check(binding, pending, sessionId);
    if (result.ok) this.#used.add(usedKey(binding.sessionId, binding.toolUseId));
    return result;
  }

  /**
   * Forgets a claim whose send failed before reaching the session, so the person can retry. The
   * session itself refuses a second answer to the same request, so a retry cannot double-decide.
   */
  release(binding: Pick<DecisionBinding, 'sessionId' | 'toolUseId'>): void {
    this.#used.delete(usedKey(binding.sessionId, binding.toolUseId));
  }

  isUsed(sessionId: string, toolUseId: string): boolean {
    return this.#used.has(usedKey(sessionId, toolUseId));
  }

  /** For persistence. */
  used(): Array<{ sessionId: string; toolUseId: string }> {
    return [...this.#used].map((key) => {
      const [sessionId = '', toolUseId = ''] = key.split('\u0000');
      return { sessionId, toolUseId };
    });
  }
}

/** What the person decided about a plan (Reply is a plain user message, not a plan decision). */
export type PlanDecision =
  { kind: 'approve' } | { kind: 'approve_edited'; editedPlan: string } | { kind: 'reject'; feedback: string } | { kind: 'teleport' };

/** The control_response event that carries `decision` for the can_use_tool request `requestId`. */
export function decisionEvent(requestId: string, plan: string, decision: PlanDecision): AnyEvent {
  switch (decision.kind) {
    case 'approve':
      return controlResponseEvent(requestId, { behavior: 'allow', updatedInput: { plan } });
    case 'approve_edited':
      return controlResponseEvent(requestId, { behavior: 'allow', updatedInput: { plan: decision.editedPlan } });
    case 'reject':
      return controlResponseEvent(requestId, { behavior: 'deny', message: decision.feedback });
    case 'teleport':
      return controlResponseEvent(requestId, { behavior: 'deny', message: teleportDenyMessage(plan) });
  }
}

// A followed session's decisions and replies, sent to its backend: each is checked and claimed by
// the session model in one step (decisionStarted), sent in one batch, and recorded as sent or
// failed there, so the panel's lock and the answer the webview waits for come from one state.
// Refusals and failures are told to the person (in the backend's own words when it has them) and
// returned as the one answer.
import { approvalWithNotes, checkNotes, notesDeliveryFor } from '../../core/approvalNotes';
import { decisionEvent, type DecisionBinding, type PlanDecision } from '../../core/decision';
import { SessionsError } from '../../core/errors';
import { formatRejectFeedback } from '../../core/feedback';
import type { LocalDecision, SentDecision } from '../../core/hostActs';
import type { DecisionKind, LineComment } from '../../core/panelMessages';
import { userMessageEvent, type AnyEvent } from '../../core/protocol';
import type { SessionChange, SessionInput } from '../../core/sessionModel';
import { errorText, type DecisionOutcome, type SessionPorts } from './permissionAnswers';

export interface SessionDecisionsPorts extends SessionPorts {
  /** The followed session's reduce (it logs the phase and acts on what the change asks for). */
  reduce: (input: SessionInput) => SessionChange;
}

/** What Continue sends when the person typed nothing. */
export const CONTINUE_MESSAGE = 'Continue planning from where you stopped.';

const LOCAL_DECISION: Record<PlanDecision['kind'], LocalDecision> = {
  approve: 'approved',
  approve_edited: 'approved_edited',
  reject: 'rejected',
  teleport: 'teleported',
};

export class SessionDecisions {
  readonly #p: SessionDecisionsPorts;

  constructor(ports: SessionDecisionsPorts) {
    this.#p = ports;
  }

  get #key(): string {
    return this.#p.model.identity.key;
  }

  get #sessionId(): string {
    return this.#p.model.identity.sessionId;
  }

  /** The plan awaiting a decision, with its text, if any. */
  get #pendingPlan(): { toolUseId: string; plan: string } | undefined {
    const p = this.#p.model.state.pendingPlan;
    return p && p.plan !== null ? { toolUseId: p.toolUseId, plan: p.plan } : undefined;
  }

  /** Checks a binding against the pending plan without using it (for Edit, before opening the editor). */
  check(binding: DecisionBinding): DecisionOutcome {
    const refused = this.#p.model.refusal(binding);
    return refused === undefined ? { sent: true } : { sent: false, message: refused };
  }

  /**
   * Sends a decision on the plan `binding` names, if it is still the pending one and was not
   * decided before. Refusals and failures are shown to the person and returned.
   */
  async decide(
    binding: DecisionBinding,
    decision: PlanDecision,
    extras?: { feedback: string; comments: LineComment[] },
    notes?: { notes: string; after: AnyEvent[] },
  ): Promise<DecisionOutcome> {
    const log = this.#p.log;
    // Notes carried as an edit are still the person's approve, not an Edit.
    const kind: DecisionKind = notes ? 'approve' : decision.kind === 'approve_edited' ? 'edit' : decision.kind;
    const pending = this.#p.model.state.pendingPlan;
    const started = this.#p.reduce({ type: 'decisionStarted', kind, binding, at: this.#p.now() });
    if (started.refused !== undefined || !pending || pending.plan === null || pending.requestId === undefined) {
      const message = started.refused ?? 'The session is not waiting for a decision.';
      log.warn(`[${this.#key}] decision ${kind} on ${binding.toolUseId} refused: ${message}`);
      this.#p.notifier.say('warning', message);
      return { sent: false, message };
    }
    log.info(
      `[${this.#key}] decision ${kind}${notes ? ` with notes (${notes.notes.length} chars)` : ''} on plan ${binding.toolUseId} (sha256 ${binding.planHash.slice(0, 12)}…) -> request ${pending.requestId}`,
    );
    try {
      // One batch: the approval and what follows it are taken together or not at all.
      await this.#p.backend.sendEvents(this.#sessionId, [
        decisionEvent(pending.requestId, pending.plan, decision),
        ...(notes?.after ?? []),
      ]);
    } catch (err) {
      // The backend says why in its own words; a decision the service refused is not sent, and the
      // plan stays pending here (the browser can decide it).
      const reading = this.#p.voice.read(err);
      const message =
        reading.decisionNotDelivered && reading.message
          ? reading.message
          : `Sending the decision failed: ${reading.message ?? errorText(err)}`;
      log.error(`[${this.#key}] ${message}`);
      // Not delivered: let the person retry (the session refuses a second answer to one request,
      // so a retry after an ambiguous failure cannot decide twice). A 409 means it is decided.
      const release = err instanceof SessionsError && err.kind === 'conflict' ? {} : { release: binding };
      this.#p.reduce({ type: 'decisionFailed', notice: { level: 'error', text: message }, ...release, at: this.#p.now() });
      // Retry sends the same bound decision (the gate checks it again); a teleport is retried from
      // the panel, which also saves the plan.
      const retry =
        reading.decisionNotDelivered || decision.kind === 'teleport' ? {} : { retry: () => this.decide(binding, decision, extras, notes) };
      if (!this.#p.voice.show(err, { ...(reading.decisionNotDelivered ? {} : { prefix: 'Your decision was not sent:' }), ...retry })) {
        this.#p.notifier.say('error', message);
      }
      return { sent: false, message };
    }
    const sent: SentDecision = {
      toolUseId: binding.toolUseId,
      decision: LOCAL_DECISION[decision.kind],
      decidedAt: new Date(this.#p.now()).toISOString(),
    };
    if (extras) {
      sent.feedback = extras.feedback;
      sent.comments = extras.comments;
    }
    // The reviewer's version is the plan an edited approval shows, until the session records it.
    if (decision.kind === 'approve_edited') sent.editedPlan = decision.editedPlan;
    if (notes) sent.notes = notes.notes;
    this.#p.reduce({ type: 'decisionSent', decision: sent, at: this.#p.now() });
    return { sent: true };
  }

  async approve(binding: DecisionBinding): Promise<DecisionOutcome> {
    return this.decide(binding, { kind: 'approve' });
  }

  /**
   * Approves with notes for the agent: per backend, the notes follow the approval as the next
   * user message, or are appended to the approved plan as an edit (src/core/approvalNotes.ts).
   */
  async approveWithNotes(binding: DecisionBinding, notes: string): Promise<DecisionOutcome> {
    const checked = checkNotes(notes);
    if (!checked.ok) {
      this.#p.notifier.say('warning', checked.message);
      return { sent: false, message: checked.message };
    }
    // The plan the binding names; the gate in decide() refuses it if it is not the pending one.
    const plan = this.#pendingPlan?.toolUseId === binding.toolUseId ? this.#pendingPlan.plan : '';
    const { decision, after } = approvalWithNotes(notesDeliveryFor(this.#p.backend.kind), plan, checked.notes);
    return this.decide(binding, decision, undefined, { notes: checked.notes, after });
  }

  async approveEdited(binding: DecisionBinding, editedPlan: string): Promise<DecisionOutcome> {
    if (editedPlan.trim().length === 0) {
      const message = 'The edited plan is empty; nothing was sent.';
      this.#p.notifier.say('warning', message);
      return { sent: false, message };
    }
    return this.decide(binding, { kind: 'approve_edited', editedPlan });
  }

  async reject(binding: DecisionBinding, feedback: string, comments: LineComment[]): Promise<DecisionOutcome> {
    const plan = this.#pendingPlan?.plan ?? '';
    const lines = comments.map((c) => ({ startLine: c.line, endLine: c.endLine ?? c.line, text: c.text }));
    return this.decide(binding, { kind: 'reject', feedback: formatRejectFeedback(plan, feedback, lines) }, { feedback, comments });
  }

  async reply(text: string): Promise<DecisionOutcome> {
    return this.#sendMessage('reply', text);
  }

  /**
   * After the agent stopped: a new agent turn goes on planning from the session's conversation,
   * with the person's message (or a plain "continue"). Refused when an agent runs again, or when a
   * plan waits (deciding it starts the new turn).
   */
  async continuePlanning(text: string): Promise<DecisionOutcome> {
    const state = this.#p.model.state;
    if (state.phase !== 'agent_stopped' || state.pendingPlan) {
      const message = state.pendingPlan
        ? 'A plan waits for a decision: approve or reject it to start the new agent turn.'
        : 'The agent is running again; there is nothing to continue.';
      return { sent: false, message };
    }
    return this.#sendMessage('continue', text.trim() || CONTINUE_MESSAGE);
  }

  async #sendMessage(kind: 'reply' | 'continue', text: string): Promise<DecisionOutcome> {
    const log = this.#p.log;
    const started = this.#p.reduce({ type: 'decisionStarted', kind, at: this.#p.now() });
    if (started.refused !== undefined) return { sent: false, message: started.refused };
    log.info(`[${this.#key}] ${kind} (${text.length} chars)`);
    try {
      await this.#p.backend.sendEvents(this.#sessionId, [userMessageEvent(text)]);
    } catch (err) {
      const message = `Sending the ${kind === 'reply' ? 'reply' : 'message'} failed: ${errorText(err)}`;
      log.error(`[${this.#key}] ${message}`);
      this.#p.reduce({ type: 'decisionFailed', notice: { level: 'error', text: message }, at: this.#p.now() });
      this.#p.notifier.say('error', message);
      return { sent: false, message };
    }
    this.#p.reduce({ type: 'replied', at: this.#p.now() });
    return { sent: true };
  }
}

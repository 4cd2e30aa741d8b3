// A session's decisions, replies and permission answers, as the editor's followed session and the
// review page both send them. Each decision is checked and claimed by the session model in one
// step (decisionStarted), sent in one batch, and recorded as sent or failed there, so the panel's
// lock and the answer it waits for come from one state. A permission request is answered at most
// once, through its own gate. How an outcome is told (log, notifications, the backend's own words)
// is the surface's: the editor's speaks, the page's is silent (its answer is the news).
import { approvalWithNotes, checkNotes, notesDeliveryFor } from './approvalNotes';
import { DecisionGate, decisionEvent, planHash, type PendingPlanRef, type PlanDecision } from './decision';
import { SessionsError, errorMessage } from './errors';
import { formatRejectFeedback } from './feedback';
import type { LocalDecision, SentDecision } from './hostActs';
import { clip, type DecisionBinding, type DecisionKind, type LineComment } from './panelMessages';
import { permissionRefusalMessage, permissionResponseEvent, type ToolPermissionRequest } from './permissionRequests';
import { APPROVAL_REFUSED_REASON, approvalSummary } from './planApprovals';
import { userMessageEvent, type AnyEvent } from './protocol';
import type { EventsSent, SessionBackend } from './sessionBackend';
import type { SessionChange, SessionInput, SessionModel } from './sessionModel';

/** The one answer to a decision, reply or permission answer: it went out, or it was refused and why. */
export type DecisionOutcome = { sent: true } | { sent: false; message: string };

/** What Continue sends when the person typed nothing. */
export const CONTINUE_MESSAGE = 'Continue planning from where you stopped.';

export interface ActsAction {
  label: string;
  run(): unknown;
}

/** Where the acts log; the editor's log channel fits. */
export interface ActsLog {
  info(line: string): void;
  warn(line: string): void;
  error(line: string): void;
}

/** How the person is told of a refusal or failure (the editor: a notification with buttons). */
export interface ActsNotifier {
  say(level: 'info' | 'warning' | 'error', message: string, ...actions: ActsAction[]): void;
}

/** What the backend says of a failed send, in its own words. */
export interface ActsVoice {
  /** undefined message: the error's message is all there is. */
  read(err: unknown): { message: string | undefined; decisionNotDelivered: boolean };
  /** Shows a failed decision with the backend's own buttons; false when it has nothing particular to say. */
  show(err: unknown, options: { prefix?: string; retry?: () => unknown }): boolean;
}

/** For a surface whose answers are all it says (the review page): no log, no notification, no words of its own. */
export const silent: { log: ActsLog; notifier: ActsNotifier; voice: ActsVoice } = {
  log: { info: () => undefined, warn: () => undefined, error: () => undefined },
  notifier: { say: () => undefined },
  voice: { read: () => ({ message: undefined, decisionNotDelivered: false }), show: () => false },
};

/** What the acts work with: the session's model, its reduce, its backend, and how it speaks. */
export interface ActsPorts {
  /** Read only: every change goes through `reduce`. */
  model: SessionModel;
  reduce: (input: SessionInput) => SessionChange;
  /** Where events go, in one batch; its kind says how approval notes travel (src/core/approvalNotes.ts). */
  backend: Pick<SessionBackend, 'kind' | 'sendEvents'>;
  log: ActsLog;
  notifier: ActsNotifier;
  voice: ActsVoice;
  now: () => number;
}

/** A decision's ports: the acts' own, and the server's machine-readable reason for a refused call. */
export interface DecisionPorts extends ActsPorts {
  reasonOf: (err: unknown) => string | undefined;
}

const LOCAL_DECISION: Record<PlanDecision['kind'], LocalDecision> = {
  approve: 'approved',
  approve_edited: 'approved_edited',
  reject: 'rejected',
  teleport: 'teleported',
};

/** Decisions on the pending plan, and the person's replies. */
export class PlanDecisions {
  readonly #p: DecisionPorts;

  constructor(ports: DecisionPorts) {
    this.#p = ports;
  }

  get #key(): string {
    return this.#p.model.identity.key;
  }

  #send(events: AnyEvent[]): Promise<EventsSent | void> {
    return this.#p.backend.sendEvents(this.#p.model.identity.sessionId, events);
  }

  /** The plan awaiting a decision, with its text, if any. */
  get #pendingPlan(): { toolUseId: string; plan: string } | undefined {
    const p = this.#p.model.state.pendingPlan;
    return p && p.plan !== null ? { toolUseId: p.toolUseId, plan: p.plan } : undefined;
  }

  /** Why a decision on `binding` would be refused now (nothing is claimed: Edit asks before it opens the editor); undefined: it would go out. */
  refusal(binding: DecisionBinding): string | undefined {
    return this.#p.model.refusal(binding);
  }

  /**
   * Sends a decision on the plan `binding` names, if it is still the pending one and was not
   * decided before. Refusals and failures are told and returned.
   */
  async decide(
    binding: DecisionBinding,
    decision: PlanDecision,
    extras?: { feedback: string; comments: LineComment[] },
    notes?: { notes: string; after: AnyEvent[] },
  ): Promise<DecisionOutcome> {
    const { log, notifier, voice, reduce, now, model } = this.#p;
    // Notes carried as an edit are still the person's approve, not an Edit.
    const kind: DecisionKind = notes ? 'approve' : decision.kind === 'approve_edited' ? 'edit' : decision.kind;
    const pending = model.state.pendingPlan;
    const started = reduce({ type: 'decisionStarted', kind, binding, at: now() });
    if (started.refused !== undefined || !pending || pending.plan === null || pending.requestId === undefined) {
      const message = started.refused ?? 'The session is not waiting for a decision.';
      log.warn(`[${this.#key}] decision ${kind} on ${binding.toolUseId} refused: ${message}`);
      notifier.say('warning', message);
      return { sent: false, message };
    }
    log.info(
      `[${this.#key}] decision ${kind}${notes ? ` with notes (${notes.notes.length} chars)` : ''} on plan ${binding.toolUseId} (sha256 ${binding.planHash.slice(0, 12)}…) -> request ${pending.requestId}`,
    );
    let answer: EventsSent | void;
    try {
      // One batch: the approval and what follows it are taken together or not at all.
      answer = await this.#send([decisionEvent(pending.requestId, pending.plan, decision), ...(notes?.after ?? [])]);
    } catch (err) {
      if (this.#p.reasonOf(err) === APPROVAL_REFUSED_REASON) return this.#approvalRefused(binding, errorMessage(err));
      // The backend says why in its own words; a decision the service refused is not sent, and the
      // plan stays pending here (the browser can decide it).
      const reading = voice.read(err);
      const message =
        reading.decisionNotDelivered && reading.message
          ? reading.message
          : `Sending the decision failed: ${reading.message ?? errorMessage(err)}`;
      log.error(`[${this.#key}] ${message}`);
      // Not delivered: let the person retry (the session refuses a second answer to one request,
      // so a retry after an ambiguous failure cannot decide twice). A 409 means it is decided.
      const release = err instanceof SessionsError && err.kind === 'conflict' ? {} : { release: binding };
      reduce({ type: 'decisionFailed', notice: { level: 'error', text: message }, ...release, at: now() });
      // Retry sends the same bound decision (the gate checks it again); a teleport is retried from
      // the panel, which also saves the plan.
      const retry =
        reading.decisionNotDelivered || decision.kind === 'teleport' ? {} : { retry: () => this.decide(binding, decision, extras, notes) };
      if (!voice.show(err, { ...(reading.decisionNotDelivered ? {} : { prefix: 'Your decision was not sent:' }), ...retry })) {
        notifier.say('error', message);
      }
      return { sent: false, message };
    }
    const approval = answer?.approval;
    if (approval && !approval.released) {
      log.info(`[${this.#key}] approval counted, the quorum is not reached: ${approvalSummary(approval)}`);
      reduce({ type: 'approvalCounted', approval, binding, at: now() });
      return { sent: true };
    }
    const sent: SentDecision = {
      toolUseId: binding.toolUseId,
      decision: LOCAL_DECISION[decision.kind],
      decidedAt: new Date(now()).toISOString(),
    };
    if (extras) {
      sent.feedback = extras.feedback;
      sent.comments = extras.comments;
    }
    // The reviewer's version is the plan an edited approval shows, until the session records it.
    if (decision.kind === 'approve_edited') sent.editedPlan = decision.editedPlan;
    if (notes) sent.notes = notes.notes;
    reduce({ type: 'decisionSent', decision: sent, at: now() });
    return { sent: true };
  }

  /**
   * The server would not count this person's approval (already given, the creator's, outside the
   * group): nothing went out, and retrying cannot help; the plan stays open for a reject.
   */
  #approvalRefused(binding: DecisionBinding, why: string): DecisionOutcome {
    const { log, notifier, reduce, now } = this.#p;
    const message = `Your approval was not counted: ${why}`;
    log.warn(`[${this.#key}] ${message}`);
    reduce({ type: 'decisionFailed', notice: { level: 'warning', text: message }, release: binding, at: now() });
    notifier.say('warning', message);
    return { sent: false, message };
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
    const { log, notifier, reduce, now } = this.#p;
    const started = reduce({ type: 'decisionStarted', kind, at: now() });
    if (started.refused !== undefined) return { sent: false, message: started.refused };
    log.info(`[${this.#key}] ${kind} (${text.length} chars)`);
    try {
      await this.#send([userMessageEvent(text)]);
    } catch (err) {
      const message = `Sending the ${kind === 'reply' ? 'reply' : 'message'} failed: ${errorMessage(err)}`;
      log.error(`[${this.#key}] ${message}`);
      reduce({ type: 'decisionFailed', notice: { level: 'error', text: message }, at: now() });
      notifier.say('error', message);
      return { sent: false, message };
    }
    reduce({ type: 'replied', at: now() });
    return { sent: true };
  }
}

/** The gate key of a tool permission request (plans are keyed by their tool_use id). */
function permissionGateRef(sessionId: string, request: ToolPermissionRequest): PendingPlanRef {
  return { sessionId, toolUseId: `permission:${request.requestId}`, plan: JSON.stringify(request.input ?? null) };
}

/**
 * A session's tool permission requests, each one a person's decision and never answered
 * automatically: the model holds which are open; this answers each at most once, through its own
 * gate, and records the answer as a reduce input.
 */
export class PermissionReplies {
  readonly #p: ActsPorts;
  readonly #gate = new DecisionGate();

  constructor(ports: ActsPorts) {
    this.#p = ports;
  }

  get #key(): string {
    return this.#p.model.identity.key;
  }

  get #sessionId(): string {
    return this.#p.model.identity.sessionId;
  }

  /** Open tool permission requests, oldest first. */
  get open(): readonly ToolPermissionRequest[] {
    return this.#p.model.state.permissions;
  }

  /** An answer's binding: this session, the request, and the input shown with it (an answer to a changed input is refused). */
  binding(request: ToolPermissionRequest): DecisionBinding {
    const ref = permissionGateRef(this.#sessionId, request);
    return { sessionId: this.#sessionId, toolUseId: ref.toolUseId, planHash: planHash(ref.plan) };
  }

  isPermissionOpen(requestId: string): boolean {
    return this.open.some((r) => r.requestId === requestId);
  }

  /** Asks the person about `request` again (the editor's prompt; the page lists the open requests instead). */
  protected ask(_request: ToolPermissionRequest): void {}

  /**
   * Answers a permission request the person decided on, at most once: a repeated click, a request
   * already closed (answered elsewhere, the turn ended) or one for another session is refused with
   * a message. Allow sends the input unchanged; deny a fixed message.
   */
  async answerPermission(binding: DecisionBinding, requestId: string, answer: 'allow' | 'deny'): Promise<DecisionOutcome> {
    const { log, notifier, voice, model, reduce, now } = this.#p;
    const refuse = (message: string): DecisionOutcome => {
      log.warn(`[${this.#key}] permission ${answer} for ${requestId} refused: ${message}`);
      notifier.say('warning', message);
      return { sent: false, message };
    };
    if (model.identity.readOnly !== undefined) return refuse(model.identity.readOnly);
    if (model.state.ended !== undefined) return refuse('This session is no longer followed; the answer was not sent.');
    const request = this.open.find((r) => r.requestId === requestId);
    const checked = this.#gate.claim(binding, request ? permissionGateRef(this.#sessionId, request) : undefined, this.#sessionId);
    if (!checked.ok) return refuse(permissionRefusalMessage(checked.reason));
    if (!request) return refuse(permissionRefusalMessage('no_pending_plan'));
    log.info(`[${this.#key}] permission ${answer} for ${requestId} (${clip(request.toolName, 80)})`);
    try {
      await this.#p.backend.sendEvents(this.#sessionId, [permissionResponseEvent(request, answer)]);
    } catch (err) {
      if (err instanceof SessionsError && err.kind === 'conflict') {
        // The session took another answer first (the browser, another window) or has ended.
        reduce({ type: 'permissionAnswered', requestId, at: now() });
        const message = 'This permission request was already answered elsewhere (or the session ended); your answer was not sent.';
        log.warn(`[${this.#key}] permission ${answer} for ${requestId}: 409, ${message}`);
        notifier.say('info', message);
        return { sent: false, message };
      }
      // Not delivered: the request stays open and may be answered again.
      this.#gate.release(binding);
      const message = `Sending your answer failed: ${voice.read(err).message ?? errorMessage(err)}`;
      log.error(`[${this.#key}] ${message}`);
      notifier.say('error', message, {
        label: 'Ask Again',
        run: () => {
          if (this.isPermissionOpen(requestId)) this.ask(request);
        },
      });
      return { sent: false, message };
    }
    reduce({ type: 'permissionAnswered', requestId, at: now() });
    return { sent: true };
  }
}

// The review panel as a model, without a DOM: what the host last said (the state, its plan texts),
// what the person has open (the revision shown, the diff, the comment composer, the notes field),
// the request in flight (the lock), the drafts typed so far and the status line. The view
// (reviewView.ts and its parts) renders it and forwards clicks and keystrokes to it; every change
// to a draft records which draft it was, so the view can write it out at a bounded rate
// (draftWrites.ts). Unit-tested in test/webview/panelModel.test.ts.
import {
  PANEL_LIMITS,
  currentRevision,
  joinPlanTexts,
  type AnswerMessage,
  type DecisionMessage,
  type InvokableAction,
  type LineComment,
  type PanelExecution,
  type PanelState,
  type PlanRevision,
  type ReplyMessage,
  type ContinueMessage,
  type RevisionStatus,
  type SaveDraftMessage,
  type SaveReplyDraftMessage,
  type StateMessage,
  type WebviewSavedState,
} from '../core/panelMessages';
import type { LineRange } from './lineComments';
import { PanelDrafts, composerFromDraft, composerToDraft, type Composer, type Draft, type DraftKey } from './panelDrafts';

export type { Composer, Draft, DraftKey } from './panelDrafts';

const STATUS_LABELS: Record<RevisionStatus, string> = {
  pending: 'waiting for review',
  rejected: 'rejected',
  approved: 'approved',
  approved_edited: 'approved (edited)',
  teleported: 'teleported',
  superseded: 'superseded',
};

export const ACTION_LABELS: Record<InvokableAction | 'reply' | 'continue', string> = {
  approve: 'Approve',
  reject: 'Reject',
  edit: 'Edit',
  teleport: 'Teleport',
  reply: 'Reply',
  continue: 'Continue planning',
};

/** How a revision's status reads, with the notes an approval carried. */
export function statusLabel(revision: PlanRevision): string {
  const label = STATUS_LABELS[revision.status];
  return revision.notes !== undefined && (revision.status === 'approved' || revision.status === 'approved_edited')
    ? `${label} with notes`
    : label;
}

/** A decision or reply sent and not yet answered by the host (see panelMessages.ts). */
export interface DecisionLock {
  requestId: string;
  kind: InvokableAction | 'reply' | 'continue';
  sessionKey: string;
  /** The pending toolUseId, or the question for a reply (or a continue). */
  key: string;
}

/**
 * Which decisions the session offers (parts/decisionBar.ts has the rows of each). One today: a
 * plan waiting for review; a session whose agent stopped will offer fresh turns instead.
 */
export type DecisionOffer = 'review';

/** What an act of the person came to: a message for the host, or a notice saying why not. */
export type Outcome<M> = { ok: true; message: M } | { ok: false; notice: string; focus?: 'feedback' | 'notes' | 'reply' };

export interface PanelModelOptions {
  /** A request id unique to this page load. */
  newRequestId(): string;
  /** The clock drafts are stamped with. */
  now(): number;
}

export class PanelModel {
  readonly #o: PanelModelOptions;
  #state: PanelState | undefined;
  /** The plan texts of the last state, by hash (the host knows the webview has exactly these). */
  #texts = new Map<string, string>();
  #selected: number | undefined;
  #showDiff = false;
  #lock: DecisionLock | undefined;
  #composer: Composer | undefined;
  /** Whether the notes field is open; undefined: open when the current plan has a notes draft. */
  #notesOpen: boolean | undefined;
  #notice: string | undefined;
  readonly #drafts: PanelDrafts;

  constructor(options: PanelModelOptions) {
    this.#o = options;
    this.#drafts = new PanelDrafts(options.now);
  }

  get state(): PanelState | undefined {
    return this.#state;
  }
  get lock(): DecisionLock | undefined {
    return this.#lock;
  }
  get composer(): Composer | undefined {
    return this.#composer;
  }
  get showDiff(): boolean {
    return this.#showDiff;
  }
  /** The panel's own notice (a refusal, a missing reply text); the host's is state.notice. */
  get notice(): string | undefined {
    return this.#notice;
  }
  /** Drafts changed and not yet written out, by key (see takeChanged). */
  get changedDrafts(): ReadonlySet<DraftKey> {
    return this.#drafts.changed;
  }

  // ---- what the host says ------------------------------------------------------------------

  /**
   * Takes a state message; or, when it names plan texts this page does not have, shows nothing of
   * it and says which (the view asks the host for everything again).
   */
  receiveState(message: StateMessage): { shown: true } | { shown: false; missing: string[] } {
    const joined = joinPlanTexts(message, this.#texts);
    if (!joined.ok) return { shown: false, missing: joined.missing };
    this.#texts = joined.texts;
    this.#applyState(joined.state);
    return { shown: true };
  }

  #applyState(state: PanelState): void {
    const previous = this.#state;
    const current = currentRevision(state);
    const lock = this.#lock;
    if (lock) {
      // The session moved on (another session, plan or question): the request is over whatever
      // its answer says. Otherwise only the answer ends it, never a state posted meanwhile.
      const key = lock.kind === 'reply' || lock.kind === 'continue' ? (state.question ?? '') : (current?.toolUseId ?? '');
      if (lock.sessionKey !== state.sessionKey || lock.key !== key) this.#lock = undefined;
    }
    const newPlan = previous?.sessionKey !== state.sessionKey || currentRevision(previous)?.toolUseId !== current?.toolUseId;
    if (this.#selected !== undefined && !state.revisions.some((r) => r.revision === this.#selected)) this.#selected = undefined;
    this.#drafts.takeHostCopies(state);
    this.#state = state;
    if (newPlan) {
      // A new plan (or another session): show the current revision, with the comment being written
      // for it if there is one (a restored draft), and the notes field as its draft says.
      this.#selected = undefined;
      this.#notesOpen = undefined;
      const draft = current?.status === 'pending' ? this.#drafts.plan(state.sessionKey, current) : undefined;
      this.#composer = draft?.comment ? composerFromDraft(draft.comment, draft.comments.length) : undefined;
    }
  }

  /** The host's one answer to a request: the lock ends; a refusal says why. False: not ours. */
  receiveAnswer(answer: AnswerMessage): boolean {
    if (this.#lock?.requestId !== answer.requestId) return false; // already over (the session moved on)
    this.#lock = undefined;
    if (answer.result === 'refused') this.#notice = answer.reason;
    return true;
  }

  // ---- what is shown ---------------------------------------------------------------------

  current(): PlanRevision | undefined {
    return this.#state ? currentRevision(this.#state) : undefined;
  }

  shown(): PlanRevision | undefined {
    const state = this.#state;
    if (!state) return undefined;
    if (this.#selected !== undefined) {
      const found = state.revisions.find((r) => r.revision === this.#selected);
      if (found) return found;
    }
    return currentRevision(state);
  }

  /** The revision before the one shown, when the diff against it is shown. */
  diffBase(): PlanRevision | undefined {
    const state = this.#state;
    const shown = this.shown();
    if (!state || !shown || !this.#showDiff) return undefined;
    const index = state.revisions.indexOf(shown);
    return index > 0 ? state.revisions[index - 1] : undefined;
  }

  viewingCurrent(): boolean {
    const shown = this.shown();
    return shown !== undefined && shown === this.current();
  }

  /** Line comments can be added to the revision shown. */
  canComment(): boolean {
    const shown = this.shown();
    return shown !== undefined && this.viewingCurrent() && shown.status === 'pending' && !this.#lock && !this.#state?.pendingDecision;
  }

  /**
   * The approved plan's checklist, while the current revision is the approved one: the panel is
   * then about the execution, with no decision bar and no feedback box.
   */
  execution(): PanelExecution | undefined {
    const execution = this.#state?.execution;
    return execution && this.current()?.toolUseId === execution.toolUseId ? execution : undefined;
  }

  offer(): DecisionOffer {
    return 'review';
  }

  /** The current plan can be decided now (the host allows it and nothing is in flight). */
  decisionOpen(): boolean {
    const state = this.#state;
    return !!state && state.canDecide && !state.pendingDecision && !this.#lock && this.current()?.status === 'pending';
  }

  /** Decisions can be taken from what is shown: the decision bar's buttons. */
  buttonsEnabled(): boolean {
    return this.decisionOpen() && this.viewingCurrent();
  }

  /** The feedback field takes text: the current pending plan is shown and nothing is in flight. */
  feedbackEnabled(): boolean {
    return this.viewingCurrent() && this.current()?.status === 'pending' && !this.#lock && !this.#state?.pendingDecision;
  }

  /** The agent stopped and no plan waits: the reply box continues planning (its text optional). */
  continues(): boolean {
    return this.#state?.agentStopped?.canContinue === true;
  }

  replyEnabled(): boolean {
    return (!!this.#state?.question || this.continues()) && !this.#state?.pendingDecision && !this.#lock;
  }

  /** The notes field is shown: opened, or holding a draft, while the plan can be approved. */
  notesShown(): boolean {
    if (!this.buttonsEnabled()) return false;
    return this.#notesOpen ?? (this.currentDraft()?.notes ?? '').trim().length > 0;
  }

  /** The comments shown on the revision shown: the draft's while it can take comments. */
  shownComments(): { comments: readonly LineComment[]; editable: boolean } {
    const shown = this.shown();
    if (!shown) return { comments: [], editable: false };
    if (this.canComment()) return { comments: this.currentDraft()?.comments ?? shown.comments, editable: true };
    return { comments: shown.comments, editable: false };
  }

  /** The draft of the current plan while it waits for review (made on first use). */
  currentDraft(): Draft | undefined {
    const state = this.#state;
    const current = this.current();
    if (!state || !current || current.status !== 'pending') return undefined;
    return this.#drafts.plan(state.sessionKey, current);
  }

  replyText(): string {
    const state = this.#state;
    return state ? this.#drafts.replyText(state.sessionKey) : '';
  }

  /** The decision bar's status line. */
  statusText(): string {
    const state = this.#state;
    const current = this.current();
    if (!state) return '';
    if (state.pendingDecision) return `${ACTION_LABELS[state.pendingDecision]}: in progress…`;
    if (this.#lock) return `${ACTION_LABELS[this.#lock.kind]} sent; waiting for the extension.`;
    if (!current) return '';
    if (!this.viewingCurrent()) return `You are viewing an older revision; decisions apply to revision ${current.revision}.`;
    if (current.status !== 'pending') return `Revision ${current.revision} was ${statusLabel(current)}.`;
    if (!state.canDecide) return 'This plan cannot be decided right now.';
    return '';
  }

  /** What the comment count line says; `rendered`: the plan is shown as Markdown (clickable blocks). */
  commentCountText(rendered: boolean): string {
    const draft = this.currentDraft();
    if (!draft) return '';
    const count = draft.comments.length;
    if (count > 0) return `${count} line comment${count === 1 ? '' : 's'} will be sent with Reject.`;
    return rendered
      ? 'No line comments. Click a block of the plan (Shift+click or select text for several lines) to comment on it.'
      : 'No line comments: the plan is shown as text here, so write your feedback above.';
  }

  // ---- what the person opens -------------------------------------------------------------

  select(revision: number): void {
    this.#selected = revision === this.current()?.revision ? undefined : revision;
    this.#setComposer(undefined);
  }

  toggleDiff(): void {
    this.#showDiff = !this.#showDiff;
    this.#setComposer(undefined);
  }

  /** Opens the composer on `range` (keeping the text of a new comment being written). False: not now. */
  openComposer(range: LineRange): boolean {
    if (!this.canComment()) return false;
    const text = this.#composer?.editing === undefined ? (this.#composer?.text ?? '') : '';
    this.#setComposer({ range, text });
    return true;
  }

  /** Extends the range of a new comment being written (or starts one) to cover `range` too. */
  extendComposer(range: LineRange): boolean {
    const base = this.#composer && this.#composer.editing === undefined ? this.#composer.range : range;
    return this.openComposer({ first: Math.min(base.first, range.first), last: Math.max(base.last, range.last) });
  }

  editComment(index: number): boolean {
    const comment = this.currentDraft()?.comments[index];
    if (!comment || !this.canComment()) return false;
    this.#setComposer({
      range: { first: comment.line - 1, last: (comment.endLine ?? comment.line) - 1 },
      editing: index,
      text: comment.text,
    });
    return true;
  }

  typeComment(text: string): void {
    if (!this.#composer) return;
    this.#setComposer({ ...this.#composer, text });
  }

  cancelComment(): void {
    this.#setComposer(undefined);
  }

  /** Adds (or saves the edited) comment; `comment` is the composer's range quoted from the plan. */
  commitComment(comment: LineComment): { ok: true } | { ok: false; notice: string } {
    const composer = this.#composer;
    const draft = this.currentDraft();
    if (!composer || !draft) return { ok: false, notice: 'This plan takes no comments now.' };
    if (!comment.text.trim()) return { ok: false, notice: 'A comment needs some text.' };
    if (composer.editing !== undefined) draft.comments[composer.editing] = comment;
    else if (draft.comments.length >= PANEL_LIMITS.comments)
      return { ok: false, notice: `At most ${PANEL_LIMITS.comments} comments per revision.` };
    else draft.comments.push(comment);
    draft.comments.sort((a, b) => a.line - b.line);
    this.#setComposer(undefined);
    return { ok: true };
  }

  removeComment(index: number): void {
    this.#changeDraft((d) => d.comments.splice(index, 1));
  }

  typeFeedback(text: string): void {
    this.#changeDraft((d) => (d.feedback = text));
  }

  typeNotes(text: string): void {
    this.#changeDraft((d) => (d.notes = text));
  }

  typeReply(text: string): void {
    if (this.#state) this.#drafts.typeReply(this.#state.sessionKey, text);
  }

  openNotes(): Outcome<undefined> {
    if (!this.decisionOpen()) return { ok: false, notice: 'Approve with Notes is not available right now.' };
    this.#notesOpen = true;
    return { ok: true, message: undefined };
  }

  /** Closes the notes field; the text stays as the draft. */
  closeNotes(): void {
    this.#notesOpen = false;
  }

  showNotice(text: string): void {
    this.#notice = text;
  }

  clearNotice(): void {
    this.#notice = undefined;
  }

  // ---- decisions -------------------------------------------------------------------------

  /** A decision on the current plan, bound to it; the lock holds from here to its answer. */
  decide(action: InvokableAction, notes?: string): Outcome<DecisionMessage> {
    const state = this.#state;
    const current = this.current();
    if (!state || !current || !this.decisionOpen()) return { ok: false, notice: `${ACTION_LABELS[action]} is not available right now.` };
    if (!this.viewingCurrent()) return { ok: false, notice: `Switch to revision ${current.revision} (the current one) to decide on it.` };
    const binding = { sessionId: state.sessionId, toolUseId: current.toolUseId, planHash: current.planHash };
    const request = { requestId: this.#o.newRequestId(), sessionKey: state.sessionKey, binding };
    let message: DecisionMessage;
    if (action === 'reject') {
      const draft = this.#drafts.plan(state.sessionKey, current);
      if (!draft.feedback.trim() && draft.comments.length === 0)
        return {
          ok: false,
          notice: 'To reject, write feedback or add at least one line comment, so the agent knows what to change.',
          focus: 'feedback',
        };
      message = { type: 'reject', ...request, feedback: draft.feedback, comments: draft.comments };
    } else if (action === 'approve' && notes !== undefined) {
      if (!notes.trim())
        return { ok: false, notice: 'Write the notes for the agent first (or use Approve to approve without notes).', focus: 'notes' };
      if (notes.length > PANEL_LIMITS.notesChars)
        return {
          ok: false,
          notice: `Notes are limited to ${PANEL_LIMITS.notesChars.toLocaleString('en-US')} characters; shorten them first.`,
          focus: 'notes',
        };
      message = { type: 'approve', ...request, notes };
      this.#notesOpen = false;
    } else {
      message = { type: action, ...request };
    }
    this.#lock = { requestId: request.requestId, kind: action, sessionKey: state.sessionKey, key: current.toolUseId };
    this.#setComposer(undefined);
    this.#notice = undefined;
    this.#drafts.decided(state.sessionKey, current.toolUseId);
    return { ok: true, message };
  }

  /** The reply (or, when the agent stopped, Continue with the message typed, if any). */
  reply(): Outcome<ReplyMessage | ContinueMessage> {
    const state = this.#state;
    if (!state || !this.replyEnabled()) return { ok: false, notice: 'Reply is not available right now.' };
    const kind = this.continues() ? 'continue' : 'reply';
    const text = this.#drafts.replyText(state.sessionKey);
    if (kind === 'reply' && !text.trim()) return { ok: false, notice: 'Write a reply first.', focus: 'reply' };
    const requestId = this.#o.newRequestId();
    this.#lock = { requestId, kind, sessionKey: state.sessionKey, key: state.question ?? '' };
    this.#drafts.dropReply(state.sessionKey);
    this.#notice = undefined;
    return { ok: true, message: { type: kind, requestId, sessionKey: state.sessionKey, text } };
  }

  // ---- drafts ----------------------------------------------------------------------------

  /** Changes the current pending plan's draft and records it as typed now. */
  #changeDraft(change: (draft: Draft) => void): void {
    const draft = this.currentDraft();
    if (!draft) return;
    change(draft);
    this.#drafts.touch(draft);
  }

  #setComposer(composer: Composer | undefined): void {
    this.#composer = composer;
    // The composer is only ever open on the current plan: its draft mirrors it, open or closed.
    const draft = this.currentDraft();
    if (!draft) return;
    const before = JSON.stringify(draft.comment);
    if (composer) draft.comment = composerToDraft(composer);
    else delete draft.comment;
    if (JSON.stringify(draft.comment) !== before) this.#drafts.touch(draft);
  }

  /** The host's copy of one changed draft (undefined: the host is not to keep it); marks it written. */
  takeChanged(key: DraftKey): SaveDraftMessage | SaveReplyDraftMessage | undefined {
    return this.#drafts.take(key, this.#state);
  }

  /** Whether the session shown differs from the one in the last saved state. */
  sessionUnsaved(): boolean {
    return this.#drafts.unsaved(this.#state?.sessionKey);
  }

  /** What setState keeps: the drafts and the session shown. */
  savedState(): WebviewSavedState {
    return this.#drafts.saved(this.#state?.sessionKey);
  }

  /** Takes back what setState kept (before the host says anything). */
  restore(saved: WebviewSavedState): void {
    this.#drafts.restore(saved);
  }
}

// The decision bar: the feedback for a rejection and the count of line comments, the decisions on
// the current plan, the notes field of Approve with Notes, and the status line. The decisions come
// from a table per offer (OFFERS), and the model says which offer the session is in: a state that
// offers other decisions (an agent that stopped: Approve, Reject, Continue as fresh turns) adds an
// offer with its rows, and the bar builds, enables and locks them the same way.
import { PANEL_LIMITS, type InvokableAction, type PanelState } from '../../core/panelMessages';
import type { DecisionOffer } from '../panelModel';
import { button, el, sendOnCtrlEnter, showFieldText } from './dom';
import type { PanelActions } from './panelActions';

interface Decision {
  /** data-action on its button. */
  id: string;
  label: string;
  icon: string;
  primary: boolean;
  run(bar: DecisionBar): void;
}

const decide =
  (action: InvokableAction): Decision['run'] =>
  (bar) =>
    bar.actions.decide(action);

/** The decisions of each offer, in the order shown. */
const OFFERS: Record<DecisionOffer, readonly Decision[]> = {
  /** A plan waiting for review. */
  review: [
    { id: 'approve', label: 'Approve', icon: 'check', primary: true, run: decide('approve') },
    { id: 'approve-notes', label: 'Approve with Notes…', icon: 'note', primary: false, run: (bar) => bar.openNotes() },
    { id: 'reject', label: 'Reject', icon: 'close', primary: false, run: decide('reject') },
    { id: 'edit', label: 'Edit', icon: 'edit', primary: false, run: decide('edit') },
    { id: 'teleport', label: 'Teleport', icon: 'rocket', primary: false, run: decide('teleport') },
  ],
};

const FEEDBACK_LABEL = 'Feedback for the agent (sent with Reject)';

export class DecisionBar {
  readonly actions: PanelActions;
  readonly element = el('section', { className: 'decision', attrs: { 'aria-label': 'Decision' } });
  readonly feedback = el('textarea', {
    attrs: { id: 'feedback', rows: '4', maxlength: String(PANEL_LIMITS.feedbackChars), 'aria-describedby': 'comment-count' },
  });
  readonly #commentCount = el('p', { className: 'comment-count', attrs: { id: 'comment-count' } });
  /** One toolbar per offer, built when first shown. */
  readonly #toolbars = new Map<DecisionOffer, { element: HTMLElement; buttons: Map<string, HTMLButtonElement> }>();
  readonly #toolbarSlot = el('div', { className: 'decision-toolbar' });
  #offer: DecisionOffer | undefined;
  readonly #notesForm = el('div', { className: 'approval-notes', attrs: { role: 'group', 'aria-label': 'Approve with notes' } });
  readonly notes = el('textarea', {
    attrs: { id: 'approval-notes', rows: '3', maxlength: String(PANEL_LIMITS.notesChars), 'aria-describedby': 'approval-notes-count' },
  });
  readonly #notesCount = el('p', { className: 'notes-count', attrs: { id: 'approval-notes-count', 'aria-live': 'polite' } });
  readonly #notesSend = button('Approve with Notes', 'check', 'primary');
  readonly status = el('p', { className: 'decision-status', attrs: { role: 'status', tabindex: '-1' } });
  readonly #feedbackLabel = el('label', { text: FEEDBACK_LABEL, attrs: { for: 'feedback' } });
  /** Under a quorum: who approved the plan so far and who is still needed. */
  readonly #quorum = el('p', { className: 'approval-quorum', attrs: { 'aria-live': 'polite' } });

  constructor(actions: PanelActions) {
    this.actions = actions;
    this.#buildNotes();
    this.element.append(
      this.#feedbackLabel,
      this.feedback,
      this.#commentCount,
      this.#quorum,
      this.#toolbarSlot,
      this.#notesForm,
      this.status,
    );
    this.feedback.addEventListener('input', () => {
      actions.model.typeFeedback(this.feedback.value);
      actions.draftsChanged();
    });
  }

  /** Opens the notes field, focused (the approval goes with its own button or Ctrl+Enter). */
  openNotes(): void {
    const opened = this.actions.model.openNotes();
    if (!opened.ok) {
      this.actions.notice(opened.notice);
      return;
    }
    this.actions.render();
    this.notes.focus();
  }

  render(hasBlocks: boolean): void {
    const { model } = this.actions;
    const state = model.state;
    // An approved plan is being executed: nothing is left to decide here.
    this.element.hidden = !model.current() || model.execution() !== undefined;
    this.#showOffer(model.offer());
    this.#setEnabled(state !== undefined && model.buttonsEnabled());
    this.#renderQuorum(state?.approval);
    this.#renderLimits(state?.backendLimits);
    const draft = model.currentDraft();
    this.feedback.disabled = !model.feedbackEnabled();
    if (draft) showFieldText(this.feedback, draft.feedback);
    else this.feedback.value = '';
    this.#commentCount.textContent = model.commentCountText(hasBlocks);
    const notesShown = model.notesShown();
    this.#notesForm.hidden = !notesShown;
    this.#button('approve-notes')?.setAttribute('aria-expanded', String(notesShown));
    showFieldText(this.notes, draft?.notes ?? '');
    this.#renderNotesCount();
    this.status.textContent = model.statusText();
  }

  /** The quorum's count; once this person's approval counts, Approve is off (the server would refuse a second). */
  #renderQuorum(approval: PanelState['approval']): void {
    this.#quorum.hidden = approval === undefined;
    this.#quorum.textContent = approval ? `${approval.mine ? 'Your approval is counted. ' : ''}${approval.summary}` : '';
    const approve = this.#button('approve');
    if (!approve) return;
    if (!approval?.mine) {
      approve.removeAttribute('title');
      return;
    }
    approve.disabled = true;
    approve.setAttribute('aria-disabled', 'true');
    approve.title = 'You approved this plan; it waits for more approvals.';
  }

  /** A backend whose decisions are not what they are elsewhere says so where the person decides (Jules: no reject). */
  #renderLimits(limits: PanelState['backendLimits']): void {
    this.#feedbackLabel.textContent = limits?.reject ? `Feedback for the agent (${limits.reject})` : FEEDBACK_LABEL;
    const said: Array<[string, string | undefined]> = [
      ['reject', limits?.reject],
      ['edit', limits?.approveEdited],
      ['teleport', limits?.teleport],
    ];
    for (const [id, text] of said) {
      const b = this.#button(id);
      if (!b) continue;
      if (text === undefined) {
        b.removeAttribute('title');
        continue;
      }
      b.title = text;
      if (id === 'reject') continue;
      b.disabled = true;
      b.setAttribute('aria-disabled', 'true');
    }
  }

  #button(id: string): HTMLButtonElement | undefined {
    return this.#offer === undefined ? undefined : this.#toolbars.get(this.#offer)?.buttons.get(id);
  }

  #showOffer(offer: DecisionOffer): void {
    if (offer === this.#offer) return;
    let toolbar = this.#toolbars.get(offer);
    if (!toolbar) {
      const element = el('div', { className: 'actions', attrs: { role: 'toolbar', 'aria-label': 'Decide on this plan' } });
      const buttons = new Map<string, HTMLButtonElement>();
      for (const decision of OFFERS[offer]) {
        const b = button(decision.label, decision.icon, decision.primary ? 'primary' : 'secondary');
        b.dataset.action = decision.id;
        if (decision.id === 'approve-notes') b.setAttribute('aria-controls', 'approval-notes');
        b.addEventListener('click', () => decision.run(this));
        buttons.set(decision.id, b);
        element.append(b);
      }
      toolbar = { element, buttons };
      this.#toolbars.set(offer, toolbar);
    }
    this.#offer = offer;
    this.#toolbarSlot.replaceChildren(toolbar.element);
  }

  #setEnabled(enabled: boolean): void {
    const buttons = this.#offer === undefined ? [] : [...(this.#toolbars.get(this.#offer)?.buttons.values() ?? [])];
    for (const b of [...buttons, this.#notesSend]) {
      b.disabled = !enabled;
      b.setAttribute('aria-disabled', String(!enabled));
    }
  }

  #renderNotesCount(): void {
    const length = this.notes.value.length;
    this.#notesCount.textContent = `${length.toLocaleString('en-US')} / ${PANEL_LIMITS.notesChars.toLocaleString('en-US')} characters · Ctrl+Enter approves, Escape cancels`;
    this.#notesCount.classList.toggle('over', length > PANEL_LIMITS.notesChars);
  }

  #sendNotes(): void {
    this.actions.decide('approve', this.notes.value);
  }

  #cancelNotes(): void {
    // The text stays as the draft: Escape closes the field, it does not throw away what was typed.
    this.actions.model.closeNotes();
    this.actions.render();
    this.#button('approve-notes')?.focus();
  }

  #buildNotes(): void {
    this.#notesSend.dataset.action = 'approve-notes-send';
    this.#notesSend.addEventListener('click', () => this.#sendNotes());
    const cancel = button('Cancel', undefined, 'secondary');
    cancel.dataset.action = 'approve-notes-cancel';
    cancel.addEventListener('click', () => this.#cancelNotes());
    this.notes.placeholder = 'What the agent should keep in mind while it executes the plan';
    this.notes.setAttribute('aria-keyshortcuts', 'Control+Enter Escape');
    sendOnCtrlEnter(
      this.notes,
      () => this.#sendNotes(),
      () => this.#cancelNotes(),
    );
    this.notes.addEventListener('input', () => {
      this.#renderNotesCount();
      this.actions.model.typeNotes(this.notes.value);
      this.actions.draftsChanged();
    });
    const label = el('label', { text: 'Notes for the agent (sent with Approve with Notes)', attrs: { for: 'approval-notes' } });
    const row = el('div', { className: 'composer-actions' });
    row.append(this.#notesSend, cancel);
    this.#notesForm.append(label, this.notes, this.#notesCount, row);
    this.#notesForm.hidden = true;
  }
}

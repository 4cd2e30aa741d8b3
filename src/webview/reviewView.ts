// The review panel's view: header, notices, question and reply, revision list, the plan (rendered or
// as a diff), line comments, feedback and the decision buttons. State comes only from the host's
// validated `state` messages; decisions go out as typed messages carrying the binding of the plan
// shown, each with a request id, and the buttons stay locked until the host answers that request
// (`sent` or `refused`, see src/core/panelMessages.ts).
import {
  PANEL_LIMITS,
  currentRevision,
  isHttpUrl,
  parseHostToWebviewMessage,
  parseWebviewSavedState,
  type AnswerMessage,
  type DecisionBinding,
  type InvokableAction,
  type LineComment,
  type PanelState,
  type PlanRevision,
  type RevisionStatus,
  type WebviewSavedState,
} from '../core/panelMessages';
import { PHASE_LABELS } from '../core/phase';
import type { HostChannel } from './hostChannel';
import { PlanBlockIndex, insertAfterBlock, rangeLabel, type LineRange } from './lineComments';
import { renderPlanDiff } from './planDiff';
import { planRenderBound, renderPlanMarkdown, renderPlanText, renderTextMarkdown } from './planMarkdown';
import { RenderCache } from './renderCache';

const STATUS_LABELS: Record<RevisionStatus, string> = {
  pending: 'waiting for review',
  rejected: 'rejected',
  approved: 'approved',
  approved_edited: 'approved (edited)',
  teleported: 'teleported',
  superseded: 'superseded',
};

const ACTION_LABELS: Record<InvokableAction | 'reply', string> = {
  approve: 'Approve',
  reject: 'Reject',
  edit: 'Edit',
  teleport: 'Teleport',
  reply: 'Reply',
};

/** How a revision's status reads, with the notes an approval carried. */
function statusLabel(revision: PlanRevision): string {
  const label = STATUS_LABELS[revision.status];
  return revision.notes !== undefined && (revision.status === 'approved' || revision.status === 'approved_edited')
    ? `${label} with notes`
    : label;
}

const MAX_SAVED_DRAFTS = 20;
/** Rendered plans kept for switching between revisions; each 2,000 lines is a few MB of DOM. */
const RENDERED_PLANS_KEPT = 4;
const SAVE_DELAY_MS = 400;

interface Draft {
  sessionKey: string;
  toolUseId: string;
  feedback: string;
  comments: LineComment[];
  /** Approval notes being written. */
  notes?: string;
}

/** A decision or reply sent and not yet answered by the host (see panelMessages.ts). */
interface DecisionLock {
  requestId: string;
  kind: InvokableAction | 'reply';
  sessionKey: string;
  /** The pending toolUseId, or the question for a reply. */
  key: string;
}

/** A request id unique to this page load (an answer from before a reload cannot match a new one). */
function newRequestId(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

interface Composer {
  range: LineRange;
  /** Index into the draft's comments when editing one. */
  editing?: number;
  text: string;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { className?: string; text?: string; attrs?: Record<string, string> } = {},
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.className) element.className = props.className;
  if (props.text !== undefined) element.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) element.setAttribute(name, value);
  return element;
}

function button(label: string, icon: string | undefined, className = ''): HTMLButtonElement {
  const b = el('button', { className, attrs: { type: 'button' } });
  if (icon) b.append(el('span', { className: `codicon codicon-${icon}`, attrs: { 'aria-hidden': 'true' } }));
  b.append(document.createTextNode(label));
  return b;
}

/** Ctrl/Cmd+Enter sends (Enter alone is a new line); Escape cancels, where the field has a cancel. */
function sendOnCtrlEnter(field: HTMLTextAreaElement, send: () => void, cancel?: () => void): void {
  field.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      send();
    } else if (cancel && event.key === 'Escape') {
      event.preventDefault();
      cancel();
    }
  });
}

function draftKey(sessionKey: string, toolUseId: string): string {
  return `${sessionKey}\u0000${toolUseId}`;
}

export class ReviewView {
  readonly #host: HostChannel;
  readonly #root: HTMLElement;
  #state: PanelState | undefined;
  #selected: number | undefined;
  #showDiff = false;
  readonly #drafts = new Map<string, Draft>();
  #reply: { sessionKey: string; text: string } | undefined;
  #lock: DecisionLock | undefined;
  #composer: Composer | undefined;
  #blocks: PlanBlockIndex | undefined;
  #planKey = '';
  #renderedMarkdownPlan = false;
  /** Comment threads placed among these nodes are removed by #renderComments before it places its own. */
  readonly #renderedPlans = new RenderCache<{ nodes: ChildNode[]; blocks: PlanBlockIndex }>(RENDERED_PLANS_KEPT);
  #saveTimer: ReturnType<typeof setTimeout> | undefined;
  #draftDirty = false;

  // Elements built once.
  readonly #title = el('h1', { className: 'title' });
  readonly #demoBadge = el('span', {
    className: 'badge demo-badge',
    text: 'Demo',
    // Hidden until a state says the session is the demo: a real agent's panel never shows it.
    attrs: { title: 'A scripted demo scenario, not a real agent', hidden: '' },
  });
  readonly #revisionLabel = el('span', { className: 'revision-label' });
  readonly #backendLabel = el('span', { className: 'backend-label' });
  readonly #phaseBadge = el('span', { className: 'badge phase-badge' });
  readonly #sessionLink = el('a', { className: 'session-link', text: 'Open session' });
  readonly #demoNote = el('p', {
    className: 'demo-note',
    text: 'This is the scripted demo: no real agent is planning, and nothing it approves runs anywhere.',
    attrs: { hidden: '' },
  });
  readonly #hostNotice = el('div', { className: 'notice', attrs: { 'aria-live': 'polite' } });
  readonly #localNotice = el('div', { className: 'notice notice-local', attrs: { role: 'alert' } });
  readonly #outcome = el('section', { className: 'outcome', attrs: { 'aria-label': 'Outcome' } });
  readonly #question = el('section', { className: 'question', attrs: { 'aria-label': 'Question from the agent' } });
  readonly #questionText = el('div', { className: 'question-text markdown' });
  readonly #replyText = el('textarea', { attrs: { id: 'reply-text', rows: '4', maxlength: String(PANEL_LIMITS.replyChars) } });
  readonly #replyButton = button('Reply', 'reply', 'primary');
  readonly #revisionNav = el('nav', { className: 'revisions', attrs: { 'aria-label': 'Revisions' } });
  readonly #revisionList = el('ol', { className: 'revision-list' });
  readonly #diffToggle = button('Show changes', 'diff', 'secondary');
  readonly #revisionFeedback = el('div', { className: 'revision-feedback' });
  readonly #plan = el('div', { className: 'plan markdown', attrs: { tabindex: '0', role: 'region', id: 'plan' } });
  readonly #decision = el('section', { className: 'decision', attrs: { 'aria-label': 'Decision' } });
  readonly #feedback = el('textarea', {
    attrs: { id: 'feedback', rows: '4', maxlength: String(PANEL_LIMITS.feedbackChars), 'aria-describedby': 'comment-count' },
  });
  readonly #commentCount = el('p', { className: 'comment-count', attrs: { id: 'comment-count' } });
  readonly #buttons: Record<InvokableAction, HTMLButtonElement> = {
    approve: button('Approve', 'check', 'primary'),
    reject: button('Reject', 'close', 'secondary'),
    edit: button('Edit', 'edit', 'secondary'),
    teleport: button('Teleport', 'rocket', 'secondary'),
  };
  readonly #notesButton = button('Approve with Notes…', 'note', 'secondary');
  readonly #notesForm = el('div', { className: 'approval-notes', attrs: { role: 'group', 'aria-label': 'Approve with notes' } });
  readonly #notesText = el('textarea', {
    attrs: { id: 'approval-notes', rows: '3', maxlength: String(PANEL_LIMITS.notesChars), 'aria-describedby': 'approval-notes-count' },
  });
  readonly #notesCount = el('p', { className: 'notes-count', attrs: { id: 'approval-notes-count', 'aria-live': 'polite' } });
  readonly #notesSend = button('Approve with Notes', 'check', 'primary');
  /** Whether the notes field is open; undefined: open when the current plan has a notes draft. */
  #notesOpen: boolean | undefined;
  readonly #decisionStatus = el('p', { className: 'decision-status', attrs: { role: 'status', tabindex: '-1' } });

  constructor(host: HostChannel, root: HTMLElement) {
    this.#host = host;
    this.#root = root;
    this.#build();
    this.#restoreSaved();
    this.render();
  }

  /** Whether a plan was rendered as Markdown here: the render path is warm from then on (renderWarmUp.ts). */
  get renderedMarkdownPlan(): boolean {
    return this.#renderedMarkdownPlan;
  }

  /** Handles one raw message event's data: parsed, and dropped with a visible notice if invalid. */
  receive(data: unknown): void {
    // For bench/extension.bench.ts: when each message arrived and when it was shown, so delivery
    // and rendering can be told apart in the real panel (a mark costs microseconds).
    performance.mark('ultraplan:received');
    const parsed = parseHostToWebviewMessage(data);
    if (!parsed.ok) {
      console.error(`Ultraplan review: dropped ${parsed.error}`);
      this.#showLocalNotice(
        `Ignored a message from the extension that did not pass validation (${parsed.error.split('\n')[0] ?? ''}). Nothing was changed.`,
      );
      return;
    }
    const message = parsed.value;
    if (message.type === 'state') this.#applyState(message.state);
    else if (message.type === 'answer') this.#applyAnswer(message);
    else this.#act(message.action);
    performance.mark('ultraplan:shown');
  }

  /** The host's one answer to a request: the lock ends; a refusal says why. */
  #applyAnswer(answer: AnswerMessage): void {
    if (this.#lock?.requestId !== answer.requestId) return; // already over (the session moved on)
    this.#lock = undefined;
    if (answer.result === 'refused') this.#showLocalNotice(answer.reason);
    this.render();
  }

  #applyState(state: PanelState): void {
    const previous = this.#state;
    const current = currentRevision(state);
    const lock = this.#lock;
    if (lock) {
      // The session moved on (another session, plan or question): the request is over whatever
      // its answer says. Otherwise only the answer ends it, never a state posted meanwhile.
      const key = lock.kind === 'reply' ? (state.question ?? '') : (current?.toolUseId ?? '');
      if (lock.sessionKey !== state.sessionKey || lock.key !== key) this.#lock = undefined;
    }
    if (previous?.sessionKey !== state.sessionKey || currentRevision(previous)?.toolUseId !== current?.toolUseId) {
      // A new plan (or another session): show the current revision and drop a half-written comment.
      this.#selected = undefined;
      this.#composer = undefined;
      this.#notesOpen = undefined;
    }
    if (this.#selected !== undefined && !state.revisions.some((r) => r.revision === this.#selected)) this.#selected = undefined;
    if (current && state.draft && state.draft.toolUseId === current.toolUseId) {
      const key = draftKey(state.sessionKey, current.toolUseId);
      // The webview's own draft is newer than what the host kept (the host only hears it debounced).
      if (!this.#drafts.has(key))
        this.#drafts.set(key, { sessionKey: state.sessionKey, ...state.draft, comments: [...state.draft.comments] });
    }
    this.#state = state;
    this.render();
    // Another session is saved at once: the workbench revives the panel from this saved state, and
    // a reload inside the debounce would bring back the session shown before.
    if (previous?.sessionKey !== state.sessionKey) this.flush();
    else this.#scheduleSave();
  }

  // ---- rendering -------------------------------------------------------------------------

  render(): void {
    const state = this.#state;
    this.#root.classList.toggle('no-state', !state);
    if (!state) {
      this.#title.textContent = 'Ultraplan Review';
      this.#plan.replaceChildren(el('p', { className: 'placeholder', text: 'Waiting for the extension…' }));
      this.#setButtonsEnabled(false);
      return;
    }
    this.#renderHeader(state);
    this.#renderNotices(state);
    this.#renderOutcome(state);
    this.#renderQuestion(state);
    this.#renderRevisionList(state);
    this.#renderPlan(state);
    this.#renderDecision(state);
  }

  #renderHeader(state: PanelState): void {
    const shown = this.#shownRevision(state);
    this.#title.textContent = state.title || 'Untitled plan';
    this.#demoBadge.hidden = !state.demo;
    this.#demoNote.hidden = !state.demo;
    this.#revisionLabel.textContent = shown ? `Revision ${shown.revision} of ${state.revisions.length}` : 'No plan yet';
    this.#backendLabel.textContent = [state.backendLabel, state.agentLabel, state.agentMode && `mode: ${state.agentMode}`]
      .filter(Boolean)
      .join(' · ');
    this.#phaseBadge.textContent = PHASE_LABELS.panel[state.phase];
    this.#phaseBadge.dataset.phase = state.phase;
    if (state.sessionLink) {
      this.#sessionLink.href = state.sessionLink;
      this.#sessionLink.hidden = false;
    } else {
      this.#sessionLink.removeAttribute('href');
      this.#sessionLink.hidden = true;
    }
  }

  #renderNotices(state: PanelState): void {
    const notice = state.notice;
    this.#hostNotice.hidden = !notice;
    this.#hostNotice.textContent = notice?.text ?? '';
    this.#hostNotice.dataset.level = notice?.level ?? '';
    this.#hostNotice.setAttribute('aria-live', notice?.level === 'info' ? 'polite' : 'assertive');
  }

  #renderOutcome(state: PanelState): void {
    const outcome = state.outcome;
    this.#outcome.hidden = !outcome;
    if (!outcome) return;
    const body = el('div', { className: 'markdown' });
    body.append(renderTextMarkdown(outcome.text));
    const children: Node[] = [el('h2', { text: 'Outcome' }), body];
    if (outcome.link) {
      const link = el('a', { text: 'Open the session' });
      link.href = outcome.link;
      children.push(el('p', {}));
      children[children.length - 1]?.appendChild(link);
    }
    this.#outcome.replaceChildren(...children);
  }

  #renderQuestion(state: PanelState): void {
    const question = state.question;
    this.#question.hidden = !question;
    if (!question) return;
    if (this.#questionText.dataset.source !== question) {
      this.#questionText.replaceChildren(renderTextMarkdown(question));
      this.#questionText.dataset.source = question;
    }
    const replyDraft = this.#reply?.sessionKey === state.sessionKey ? this.#reply.text : '';
    if (this.#replyText.value !== replyDraft && document.activeElement !== this.#replyText) this.#replyText.value = replyDraft;
    const open = !state.pendingDecision && !this.#lock;
    this.#replyButton.disabled = !open;
    this.#replyText.disabled = !open;
  }

  #renderRevisionList(state: PanelState): void {
    const shown = this.#shownRevision(state);
    this.#revisionNav.hidden = state.revisions.length === 0;
    const items = state.revisions.map((revision) => {
      const item = el('li');
      const b = button(`Revision ${revision.revision}: ${statusLabel(revision)}`, undefined, 'link-button');
      b.dataset.revision = String(revision.revision);
      if (revision === shown) b.setAttribute('aria-current', 'true');
      b.addEventListener('click', () => {
        this.#selected = revision === currentRevision(state) ? undefined : revision.revision;
        this.#composer = undefined;
        this.render();
      });
      item.append(b);
      return item;
    });
    this.#revisionList.replaceChildren(...items);
    const index = shown ? state.revisions.indexOf(shown) : -1;
    this.#diffToggle.hidden = index < 1;
    this.#diffToggle.setAttribute('aria-pressed', String(this.#showDiff));
    const toggleText = this.#diffToggle.lastChild;
    if (toggleText) toggleText.textContent = this.#showDiff ? 'Show plan' : 'Show changes';
  }

  #renderPlan(state: PanelState): void {
    const shown = this.#shownRevision(state);
    if (!shown) {
      this.#planKey = '';
      this.#blocks = undefined;
      const waiting =
        state.phase === 'starting' || state.phase === 'planning'
          ? 'The agent is working on a plan…'
          : state.phase === 'needs_input'
            ? 'No plan yet: the agent asked a question first.'
            : 'No plan in this session.';
      this.#plan.replaceChildren(el('p', { className: 'placeholder', text: waiting }));
      this.#revisionFeedback.hidden = true;
      return;
    }
    const index = state.revisions.indexOf(shown);
    const previous = index > 0 ? state.revisions[index - 1] : undefined;
    const diff = this.#showDiff && previous !== undefined;
    const key = `${state.sessionKey}\u0000${shown.toolUseId}\u0000${shown.planHash}\u0000${diff ? `diff:${previous.planHash}` : 'plan'}`;
    if (key !== this.#planKey) {
      this.#planKey = key;
      this.#blocks = undefined;
      if (diff) {
        const result = renderPlanDiff(previous.plan, shown.plan, {
          from: `Revision ${previous.revision}`,
          to: `Revision ${shown.revision}`,
        });
        this.#plan.replaceChildren(result.ok ? result.element : renderPlanText(shown.plan, result.reason));
        this.#plan.setAttribute('aria-label', `Changes in revision ${shown.revision}`);
      } else {
        const bound = planRenderBound(shown.plan);
        if (bound !== undefined) {
          this.#plan.replaceChildren(
            renderPlanText(shown.plan, `${bound} Line comments need the rendered plan; write your feedback in the reject message.`),
          );
        } else {
          this.#showRenderedPlan(shown.plan);
        }
        this.#plan.setAttribute(
          'aria-label',
          `Plan, revision ${shown.revision}. Arrow keys move between blocks; Enter comments on the focused block.`,
        );
      }
    }
    this.#plan.classList.toggle('commentable', this.#canComment(state, shown));
    this.#renderComments(state, shown);
    this.#renderRevisionFeedback(shown);
  }

  /** The plan rendered as Markdown, or its nodes from the last time it was (renderCache.ts). */
  #showRenderedPlan(source: string): void {
    let rendered = this.#renderedPlans.get(source);
    if (rendered) {
      this.#plan.replaceChildren();
      for (const node of rendered.nodes) this.#plan.append(node);
    } else {
      const fragment = renderPlanMarkdown(source);
      const nodes = Array.from(fragment.childNodes);
      this.#plan.replaceChildren(fragment);
      rendered = { nodes, blocks: new PlanBlockIndex(this.#plan, source) };
      this.#renderedPlans.set(source, rendered);
    }
    this.#blocks = rendered.blocks;
    this.#renderedMarkdownPlan = true;
  }

  #renderRevisionFeedback(shown: PlanRevision): void {
    const feedback = shown.status !== 'pending' ? shown.feedback?.trim() : undefined;
    const notes = shown.status !== 'pending' ? shown.notes?.trim() : undefined;
    this.#revisionFeedback.hidden = !feedback && !notes;
    const children: HTMLElement[] = [];
    if (feedback)
      children.push(el('h2', { text: 'Feedback sent with this revision' }), el('p', { className: 'feedback-text', text: feedback }));
    if (notes) {
      const edited = shown.status === 'approved_edited' ? ' (appended to the approved plan as an edit)' : '';
      children.push(
        el('h2', { text: `Approved with notes${edited}` }),
        el('p', { className: 'feedback-text approval-notes-text', text: notes }),
      );
    }
    if (children.length) this.#revisionFeedback.replaceChildren(...children);
  }

  /** Comments and the composer, placed after the blocks they refer to. Cheap: the plan itself is not re-rendered. */
  #renderComments(state: PanelState, shown: PlanRevision): void {
    for (const old of this.#plan.querySelectorAll('.comment-thread, .comment-composer')) old.remove();
    for (const old of this.#plan.querySelectorAll('.block-selected')) old.classList.remove('block-selected');
    const blocks = this.#blocks;
    if (!blocks) return;
    const editable = this.#canComment(state, shown);
    const comments = editable ? this.#draftFor(state, shown).comments : shown.comments;
    const threads = new Map<HTMLElement | null, { comment: LineComment; index: number }[]>();
    comments.forEach((comment, index) => {
      if (this.#composer?.editing === index) return;
      const anchor = blocks.blockForLine((comment.endLine ?? comment.line) - 1)?.element ?? null;
      const list = threads.get(anchor) ?? [];
      list.push({ comment, index });
      threads.set(anchor, list);
    });
    for (const [anchor, list] of threads) {
      const thread = el('div', { className: 'comment-thread' });
      for (const { comment, index } of list) thread.append(this.#commentCard(comment, index, editable));
      if (anchor) insertAfterBlock(anchor, thread);
      else this.#plan.append(thread);
    }
    const composer = this.#composer;
    if (composer && editable) {
      for (const block of blocks.blocksWithin(composer.range)) block.element.classList.add('block-selected');
      const anchor = blocks.blockForLine(composer.range.last)?.element;
      const form = this.#composerElement(composer);
      if (anchor) insertAfterBlock(anchor, form);
      else this.#plan.append(form);
    }
  }

  #commentCard(comment: LineComment, index: number, editable: boolean): HTMLElement {
    const card = el('div', { className: 'comment-card', attrs: { 'data-index': String(index), 'data-line': String(comment.line) } });
    const head = el('div', { className: 'comment-head' });
    const range = { first: comment.line - 1, last: (comment.endLine ?? comment.line) - 1 };
    const label = this.#blocks?.labelOf(range) ?? rangeLabel(comment);
    head.append(
      el('span', { className: 'codicon codicon-comment', attrs: { 'aria-hidden': 'true' } }),
      el('span', { className: 'comment-lines', text: label }),
    );
    if (editable) {
      const edit = button('Edit comment', 'edit', 'icon-button');
      edit.setAttribute('aria-label', `Edit comment on ${label}`);
      edit.addEventListener('click', () => {
        this.#composer = { range, editing: index, text: comment.text };
        this.render();
        this.#focusComposer();
      });
      const remove = button('Remove comment', 'trash', 'icon-button');
      remove.setAttribute('aria-label', `Remove comment on ${label}`);
      remove.addEventListener('click', () => this.#updateDraft((d) => d.comments.splice(index, 1)));
      head.append(edit, remove);
    }
    card.append(head, el('p', { className: 'comment-text', text: comment.text }));
    return card;
  }

  #composerElement(composer: Composer): HTMLElement {
    const label = this.#blocks?.labelOf(composer.range) ?? rangeLabel({ line: composer.range.first + 1, endLine: composer.range.last + 1 });
    const form = el('div', { className: 'comment-composer', attrs: { role: 'group', 'aria-label': `Comment on ${label}` } });
    const id = 'comment-composer-text';
    const text = el('textarea', { attrs: { id, rows: '3', maxlength: String(PANEL_LIMITS.commentChars) } });
    text.value = composer.text;
    text.addEventListener('input', () => {
      composer.text = text.value;
    });
    const save = button(composer.editing === undefined ? 'Add comment' : 'Save comment', 'check', 'primary');
    const cancel = button('Cancel', undefined, 'secondary');
    const commit = () => {
      const value = text.value.trim();
      if (!value) {
        this.#showLocalNotice('A comment needs some text.');
        text.focus();
        return;
      }
      const blocks = this.#blocks;
      if (!blocks) return;
      const comment = blocks.comment(composer.range, value);
      this.#updateDraft(
        (d) => {
          if (composer.editing !== undefined) d.comments[composer.editing] = comment;
          else if (d.comments.length >= PANEL_LIMITS.comments)
            this.#showLocalNotice(`At most ${PANEL_LIMITS.comments} comments per revision.`);
          else d.comments.push(comment);
          d.comments.sort((a, b) => a.line - b.line);
        },
        () => {
          this.#composer = undefined;
        },
      );
    };
    save.addEventListener('click', commit);
    cancel.addEventListener('click', () => {
      this.#composer = undefined;
      this.render();
      this.#plan.focus();
    });
    // Ctrl/Cmd+Enter only saves the comment; it never decides anything.
    sendOnCtrlEnter(text, commit, () => cancel.click());
    const labelEl = el('label', { text: `Comment on ${label}`, attrs: { for: id } });
    const actions = el('div', { className: 'composer-actions' });
    actions.append(save, cancel);
    form.append(labelEl, text, actions);
    return form;
  }

  #renderDecision(state: PanelState): void {
    const current = currentRevision(state);
    const shown = this.#shownRevision(state);
    const viewingCurrent = shown !== undefined && shown === current;
    const open = this.#decisionOpen(state) && viewingCurrent;
    this.#decision.hidden = !current;
    this.#setButtonsEnabled(open);
    const draft = current && current.status === 'pending' ? this.#draftFor(state, current) : undefined;
    const pendingReview = viewingCurrent && current?.status === 'pending';
    this.#feedback.disabled = !pendingReview || this.#lock !== undefined || state.pendingDecision !== undefined;
    if (draft && this.#feedback.value !== draft.feedback && document.activeElement !== this.#feedback)
      this.#feedback.value = draft.feedback;
    if (!draft) this.#feedback.value = '';
    const count = draft?.comments.length ?? 0;
    this.#commentCount.textContent = draft
      ? count === 0
        ? this.#blocks
          ? 'No line comments. Click a block of the plan (Shift+click or select text for several lines) to comment on it.'
          : 'No line comments: the plan is shown as text here, so write your feedback above.'
        : `${count} line comment${count === 1 ? '' : 's'} will be sent with Reject.`
      : '';
    this.#renderNotes(open, draft);
    this.#decisionStatus.textContent = this.#statusText(state, viewingCurrent);
  }

  /** The notes field of Approve with Notes: open while the plan can be approved, its draft kept. */
  #renderNotes(decisionOpen: boolean, draft: Draft | undefined): void {
    const shown = decisionOpen && (this.#notesOpen ?? (draft?.notes ?? '').trim().length > 0);
    this.#notesForm.hidden = !shown;
    this.#notesButton.setAttribute('aria-expanded', String(shown));
    const notes = draft?.notes ?? '';
    if (this.#notesText.value !== notes && document.activeElement !== this.#notesText) this.#notesText.value = notes;
    this.#renderNotesCount();
  }

  #renderNotesCount(): void {
    const length = this.#notesText.value.length;
    this.#notesCount.textContent = `${length.toLocaleString('en-US')} / ${PANEL_LIMITS.notesChars.toLocaleString('en-US')} characters · Ctrl+Enter approves, Escape cancels`;
    this.#notesCount.classList.toggle('over', length > PANEL_LIMITS.notesChars);
  }

  #statusText(state: PanelState, viewingCurrent: boolean): string {
    const current = currentRevision(state);
    if (state.pendingDecision) return `${ACTION_LABELS[state.pendingDecision]}: in progress…`;
    if (this.#lock) return `${ACTION_LABELS[this.#lock.kind]} sent; waiting for the extension.`;
    if (!current) return '';
    if (!viewingCurrent) return `You are viewing an older revision; decisions apply to revision ${current.revision}.`;
    if (current.status !== 'pending') return `Revision ${current.revision} was ${statusLabel(current)}.`;
    if (!state.canDecide) return 'This plan cannot be decided right now.';
    return '';
  }

  #setButtonsEnabled(enabled: boolean): void {
    for (const b of [...Object.values(this.#buttons), this.#notesButton, this.#notesSend]) {
      b.disabled = !enabled;
      b.setAttribute('aria-disabled', String(!enabled));
    }
  }

  // ---- decisions -------------------------------------------------------------------------

  #decisionOpen(state: PanelState): boolean {
    return state.canDecide && !state.pendingDecision && !this.#lock && currentRevision(state)?.status === 'pending';
  }

  #act(action: InvokableAction, notes?: string): void {
    const state = this.#state;
    const current = state ? currentRevision(state) : undefined;
    if (!state || !current || !this.#decisionOpen(state)) {
      this.#showLocalNotice(`${ACTION_LABELS[action]} is not available right now.`);
      return;
    }
    if (this.#shownRevision(state) !== current) {
      this.#showLocalNotice(`Switch to revision ${current.revision} (the current one) to decide on it.`);
      return;
    }
    const binding: DecisionBinding = { sessionId: state.sessionId, toolUseId: current.toolUseId, planHash: current.planHash };
    const request = { requestId: newRequestId(), sessionKey: state.sessionKey, binding };
    if (action === 'reject') {
      const draft = this.#draftFor(state, current);
      const feedback = this.#feedback.value;
      draft.feedback = feedback;
      if (!feedback.trim() && draft.comments.length === 0) {
        this.#showLocalNotice('To reject, write feedback or add at least one line comment, so the agent knows what to change.');
        this.#feedback.focus();
        return;
      }
      this.#host.send({ type: 'reject', ...request, feedback, comments: draft.comments });
    } else if (action === 'approve' && notes !== undefined) {
      this.#host.send({ type: 'approve', ...request, notes });
      this.#notesOpen = false;
    } else {
      this.#host.send({ type: action, ...request });
    }
    this.#lock = { requestId: request.requestId, kind: action, sessionKey: state.sessionKey, key: current.toolUseId };
    this.#composer = undefined;
    this.#hideLocalNotice();
    this.render();
    this.#decisionStatus.focus();
  }

  /** Opens the notes field, focused (the approval goes with its own button or Ctrl+Enter). */
  #openNotes(): void {
    const state = this.#state;
    if (!state || !this.#decisionOpen(state)) {
      this.#showLocalNotice('Approve with Notes is not available right now.');
      return;
    }
    this.#notesOpen = true;
    this.render();
    this.#notesText.focus();
  }

  #sendNotes(): void {
    const notes = this.#notesText.value;
    if (!notes.trim()) {
      this.#showLocalNotice('Write the notes for the agent first (or use Approve to approve without notes).');
      this.#notesText.focus();
      return;
    }
    if (notes.length > PANEL_LIMITS.notesChars) {
      this.#showLocalNotice(`Notes are limited to ${PANEL_LIMITS.notesChars.toLocaleString('en-US')} characters; shorten them first.`);
      this.#notesText.focus();
      return;
    }
    this.#act('approve', notes);
  }

  #cancelNotes(): void {
    // The text stays as the draft: Escape closes the field, it does not throw away what was typed.
    this.#notesOpen = false;
    this.render();
    this.#notesButton.focus();
  }

  #sendReply(): void {
    const state = this.#state;
    if (!state?.question || state.pendingDecision || this.#lock) return;
    const text = this.#replyText.value;
    if (!text.trim()) {
      this.#showLocalNotice('Write a reply first.');
      this.#replyText.focus();
      return;
    }
    const requestId = newRequestId();
    this.#host.send({ type: 'reply', requestId, sessionKey: state.sessionKey, text });
    this.#lock = { requestId, kind: 'reply', sessionKey: state.sessionKey, key: state.question };
    this.#reply = undefined;
    this.#replyText.value = '';
    this.#hideLocalNotice();
    this.render();
    this.#scheduleSave();
  }

  // ---- comments and drafts -----------------------------------------------------------------

  #canComment(state: PanelState, shown: PlanRevision): boolean {
    return shown === currentRevision(state) && shown.status === 'pending' && !this.#lock && !state.pendingDecision;
  }

  #draftFor(state: PanelState, revision: PlanRevision): Draft {
    const key = draftKey(state.sessionKey, revision.toolUseId);
    let draft = this.#drafts.get(key);
    if (!draft) {
      draft = { sessionKey: state.sessionKey, toolUseId: revision.toolUseId, feedback: '', comments: [...revision.comments] };
      this.#drafts.set(key, draft);
    }
    return draft;
  }

  /**
   * Changes the current plan's draft and saves it soon, without rendering (as typed into a field,
   * which shows it already); false when there is no current plan (or, `pendingOnly`, it is decided).
   */
  #changeDraft(change: (draft: Draft) => void, o: { pendingOnly?: boolean } = {}): boolean {
    const state = this.#state;
    const current = state ? currentRevision(state) : undefined;
    if (!state || !current || (o.pendingOnly && current.status !== 'pending')) return false;
    change(this.#draftFor(state, current));
    this.#draftDirty = true;
    this.#scheduleSave();
    return true;
  }

  /** Changes the current plan's draft and shows the change. */
  #updateDraft(change: (draft: Draft) => void, after?: () => void): void {
    if (!this.#changeDraft(change)) return;
    after?.();
    this.render();
  }

  #openComposer(range: LineRange): void {
    const state = this.#state;
    const shown = state ? this.#shownRevision(state) : undefined;
    if (!state || !shown || !this.#canComment(state, shown)) return;
    const text = this.#composer?.editing === undefined ? (this.#composer?.text ?? '') : '';
    this.#composer = { range, text };
    this.render();
    this.#focusComposer();
  }

  #focusComposer(): void {
    const text = this.#plan.querySelector<HTMLTextAreaElement>('.comment-composer textarea');
    text?.focus();
  }

  #onPlanClick(event: MouseEvent): void {
    const blocks = this.#blocks;
    const target = event.target as Node | null;
    if (!blocks || !target || !(target instanceof Element)) return;
    if (target.closest('.comment-thread, .comment-composer')) return;
    const selection = window.getSelection();
    if (selection && !selection.isCollapsed && this.#plan.contains(selection.anchorNode) && this.#plan.contains(selection.focusNode)) {
      const a = blocks.blockOf(selection.anchorNode);
      const b = blocks.blockOf(selection.focusNode);
      if (a && b) {
        const ra = blocks.rangeOf(a);
        const rb = blocks.rangeOf(b);
        this.#openComposer({ first: Math.min(ra.first, rb.first), last: Math.max(ra.last, rb.last) });
        return;
      }
    }
    const block = blocks.blockOf(target);
    if (!block) return;
    const range = blocks.rangeOf(block);
    const composer = this.#composer;
    if (event.shiftKey && composer && composer.editing === undefined) {
      this.#openComposer({ first: Math.min(composer.range.first, range.first), last: Math.max(composer.range.last, range.last) });
    } else {
      this.#openComposer(range);
    }
  }

  #onPlanKey(event: KeyboardEvent): void {
    const blocks = this.#blocks;
    if (!blocks || blocks.blocks.length === 0) return;
    const target = event.target as Node | null;
    if (target instanceof Element && target.closest('.comment-thread, .comment-composer')) return;
    const focused = target === this.#plan ? undefined : blocks.blockOf(target);
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const list = blocks.blocks;
      const at = focused ? list.indexOf(focused) : -1;
      const next = list[event.key === 'ArrowDown' ? Math.min(at + 1, list.length - 1) : Math.max(at - 1, 0)];
      if (!next) return;
      next.element.tabIndex = -1;
      next.element.focus();
      if (event.shiftKey && focused) {
        const a = blocks.rangeOf(focused);
        const b = blocks.rangeOf(next);
        const base = this.#composer?.range ?? a;
        this.#composer = {
          range: { first: Math.min(base.first, b.first), last: Math.max(base.last, b.last) },
          text: this.#composer?.text ?? '',
        };
        this.render();
        next.element.focus();
      }
    } else if (event.key === 'Enter' && focused) {
      event.preventDefault();
      this.#openComposer(this.#composer && this.#composer.editing === undefined ? this.#composer.range : blocks.rangeOf(focused));
    } else if (event.key === 'Escape' && this.#composer) {
      event.preventDefault();
      this.#composer = undefined;
      this.render();
    }
  }

  // ---- links -----------------------------------------------------------------------------

  /** Every link click in the page: never navigate; http(s) goes to the host, anything else is refused. */
  #onDocumentClick(event: MouseEvent): void {
    const target = event.target;
    if (!(target instanceof Element)) return;
    const anchor = target.closest('a');
    if (!anchor) return;
    event.preventDefault();
    event.stopPropagation();
    const href = anchor.getAttribute('href') ?? '';
    if (isHttpUrl(href)) this.#host.send({ type: 'openLink', href });
    else this.#showLocalNotice('That link was not opened: only http and https links open from the review panel.');
  }

  // ---- persistence -----------------------------------------------------------------------

  #restoreSaved(): void {
    const raw = this.#host.loadSaved();
    if (raw === undefined || raw === null) return;
    const parsed = parseWebviewSavedState(raw);
    if (!parsed.ok) {
      console.warn(`Ultraplan review: ignored the saved panel state (${parsed.error})`);
      return;
    }
    for (const draft of parsed.value.drafts)
      this.#drafts.set(draftKey(draft.sessionKey, draft.toolUseId), { ...draft, comments: [...draft.comments] });
    this.#reply = parsed.value.reply;
    if (parsed.value.state) this.#state = parsed.value.state;
  }

  #scheduleSave(): void {
    if (this.#saveTimer !== undefined) clearTimeout(this.#saveTimer);
    this.#saveTimer = setTimeout(() => this.flush(), SAVE_DELAY_MS);
  }

  /** Writes drafts to setState now and tells the host (also called when the page is hidden). */
  flush(): void {
    if (this.#saveTimer !== undefined) clearTimeout(this.#saveTimer);
    this.#saveTimer = undefined;
    const drafts = [...this.#drafts.values()].slice(-MAX_SAVED_DRAFTS);
    const saved: WebviewSavedState = { drafts: drafts.map((d) => ({ ...d, comments: d.comments })) };
    if (this.#state) saved.state = this.#state;
    if (this.#reply && this.#reply.text) saved.reply = this.#reply;
    this.#host.save(saved);
    const state = this.#state;
    const current = state ? currentRevision(state) : undefined;
    if (this.#draftDirty && state && current?.status === 'pending') {
      const draft = this.#draftFor(state, current);
      this.#host.send({
        type: 'saveDraft',
        sessionKey: state.sessionKey,
        toolUseId: current.toolUseId,
        feedback: draft.feedback,
        comments: draft.comments,
        ...(draft.notes !== undefined ? { notes: draft.notes } : {}),
      });
    }
    this.#draftDirty = false;
  }

  // ---- notices ---------------------------------------------------------------------------

  #showLocalNotice(text: string): void {
    this.#localNotice.textContent = text;
    this.#localNotice.hidden = false;
  }

  #hideLocalNotice(): void {
    this.#localNotice.hidden = true;
    this.#localNotice.textContent = '';
  }

  #shownRevision(state: PanelState): PlanRevision | undefined {
    if (this.#selected !== undefined) {
      const found = state.revisions.find((r) => r.revision === this.#selected);
      if (found) return found;
    }
    return currentRevision(state);
  }

  // ---- building --------------------------------------------------------------------------

  #buildNotes(): void {
    this.#notesButton.dataset.action = 'approve-notes';
    this.#notesButton.setAttribute('aria-controls', 'approval-notes');
    this.#notesButton.addEventListener('click', () => this.#openNotes());
    this.#notesSend.dataset.action = 'approve-notes-send';
    this.#notesSend.addEventListener('click', () => this.#sendNotes());
    const cancel = button('Cancel', undefined, 'secondary');
    cancel.dataset.action = 'approve-notes-cancel';
    cancel.addEventListener('click', () => this.#cancelNotes());
    this.#notesText.placeholder = 'What the agent should keep in mind while it executes the plan';
    this.#notesText.setAttribute('aria-keyshortcuts', 'Control+Enter Escape');
    sendOnCtrlEnter(
      this.#notesText,
      () => this.#sendNotes(),
      () => this.#cancelNotes(),
    );
    this.#notesText.addEventListener('input', () => {
      this.#renderNotesCount();
      this.#changeDraft((d) => (d.notes = this.#notesText.value), { pendingOnly: true });
    });
    const label = el('label', { text: 'Notes for the agent (sent with Approve with Notes)', attrs: { for: 'approval-notes' } });
    const actions = el('div', { className: 'composer-actions' });
    actions.append(this.#notesSend, cancel);
    this.#notesForm.append(label, this.#notesText, this.#notesCount, actions);
    this.#notesForm.hidden = true;
  }

  #build(): void {
    const header = el('header', { className: 'panel-header' });
    const titleRow = el('div', { className: 'title-row' });
    titleRow.append(this.#title, this.#demoBadge);
    const meta = el('div', { className: 'meta' });
    meta.append(this.#revisionLabel, this.#backendLabel, this.#phaseBadge, this.#sessionLink);
    header.append(titleRow, meta, this.#demoNote);

    const replyLabel = el('label', { text: 'Your reply', attrs: { for: 'reply-text' } });
    this.#question.append(
      el('h2', { text: 'The agent asks' }),
      this.#questionText,
      replyLabel,
      this.#replyText,
      el('div', { className: 'actions' }),
    );
    this.#question.lastElementChild?.append(this.#replyButton);
    this.#replyButton.addEventListener('click', () => this.#sendReply());
    // As in the comment composer: Ctrl+Enter (Cmd+Enter) sends; Enter alone is a new line.
    sendOnCtrlEnter(this.#replyText, () => this.#sendReply());
    this.#replyText.setAttribute('aria-keyshortcuts', 'Control+Enter');
    this.#replyText.placeholder = 'Ctrl+Enter sends';
    this.#replyText.addEventListener('input', () => {
      if (!this.#state) return;
      this.#reply = { sessionKey: this.#state.sessionKey, text: this.#replyText.value };
      this.#scheduleSave();
    });

    const nav = this.#revisionNav;
    const navRow = el('div', { className: 'revisions-row' });
    navRow.append(this.#revisionList, this.#diffToggle);
    nav.append(navRow);
    this.#diffToggle.addEventListener('click', () => {
      this.#showDiff = !this.#showDiff;
      this.#composer = undefined;
      this.render();
    });

    const feedbackLabel = el('label', { text: 'Feedback for the agent (sent with Reject)', attrs: { for: 'feedback' } });
    const actions = el('div', { className: 'actions', attrs: { role: 'toolbar', 'aria-label': 'Decide on this plan' } });
    for (const [action, b] of Object.entries(this.#buttons) as [InvokableAction, HTMLButtonElement][]) {
      b.dataset.action = action;
      b.addEventListener('click', () => this.#act(action));
      actions.append(b);
      if (action === 'approve') actions.append(this.#notesButton);
    }
    this.#buildNotes();
    this.#decision.append(feedbackLabel, this.#feedback, this.#commentCount, actions, this.#notesForm, this.#decisionStatus);
    this.#feedback.addEventListener('input', () => this.#changeDraft((d) => (d.feedback = this.#feedback.value)));

    this.#plan.addEventListener('click', (event) => this.#onPlanClick(event));
    this.#plan.addEventListener('keydown', (event) => this.#onPlanKey(event));
    document.addEventListener('click', (event) => this.#onDocumentClick(event), true);
    // Middle-click / auxclick would otherwise be handled by the webview host.
    document.addEventListener(
      'auxclick',
      (event) => {
        if (event.target instanceof Element && event.target.closest('a')) {
          event.preventDefault();
          event.stopPropagation();
        }
      },
      true,
    );

    this.#hostNotice.hidden = true;
    this.#localNotice.hidden = true;
    this.#outcome.hidden = true;
    this.#question.hidden = true;
    this.#revisionFeedback.hidden = true;
    this.#root.replaceChildren(
      header,
      this.#hostNotice,
      this.#localNotice,
      this.#outcome,
      this.#question,
      nav,
      this.#revisionFeedback,
      this.#plan,
      this.#decision,
    );
  }
}

// Line comments on the plan shown, placed after the blocks they refer to, and the composer for the
// comment being written. Cheap to redo: the plan itself is not rendered again.
import { PANEL_LIMITS, type LineComment } from '../../core/panelMessages';
import { insertAfterBlock, rangeLabel, type PlanBlockIndex } from '../lineComments';
import type { Composer } from '../panelModel';
import { button, el, sendOnCtrlEnter, showFieldText } from './dom';
import type { PanelActions } from './panelActions';

const COMPOSER_TEXT_ID = 'comment-composer-text';

export class CommentThreads {
  readonly #actions: PanelActions;
  readonly #plan: HTMLElement;
  #blocks: PlanBlockIndex | undefined;
  /** The composer's form as placed, kept while the same comment is written so its field keeps the focus. */
  #form: { key: string; element: HTMLElement; text: HTMLTextAreaElement } | undefined;

  constructor(actions: PanelActions, plan: HTMLElement) {
    this.#actions = actions;
    this.#plan = plan;
  }

  render(blocks: PlanBlockIndex | undefined): void {
    const { model } = this.#actions;
    const { comments, editable } = model.shownComments();
    const composer = blocks && editable ? model.composer : undefined;
    const formKey = composer && `${composer.range.first}:${composer.range.last}:${composer.editing ?? ''}`;
    const kept =
      blocks === this.#blocks && formKey !== undefined && this.#form?.key === formKey && this.#form.element.isConnected
        ? this.#form
        : undefined;
    this.#blocks = blocks;
    for (const old of this.#plan.querySelectorAll('.comment-thread, .comment-composer')) if (old !== kept?.element) old.remove();
    for (const old of this.#plan.querySelectorAll('.block-selected')) old.classList.remove('block-selected');
    if (!kept) this.#form = undefined;
    if (!blocks) return;
    const composerAnchor = composer ? blocks.blockForLine(composer.range.last)?.element : undefined;
    const threads = new Map<HTMLElement | null, { comment: LineComment; index: number }[]>();
    comments.forEach((comment, index) => {
      if (composer?.editing === index) return;
      const anchor = blocks.blockForLine((comment.endLine ?? comment.line) - 1)?.element ?? null;
      const list = threads.get(anchor) ?? [];
      list.push({ comment, index });
      threads.set(anchor, list);
    });
    for (const [anchor, list] of threads) {
      const thread = el('div', { className: 'comment-thread' });
      for (const { comment, index } of list) thread.append(this.#card(comment, index, editable));
      // Beside a kept composer, in the order a fresh one would have: after a list item's thread,
      // before another block's.
      if (kept && anchor && anchor === composerAnchor) {
        if (anchor.tagName === 'LI') kept.element.before(thread);
        else kept.element.after(thread);
      } else if (anchor) insertAfterBlock(anchor, thread);
      else this.#plan.append(thread);
    }
    if (!composer || formKey === undefined) return;
    for (const block of blocks.blocksWithin(composer.range)) block.element.classList.add('block-selected');
    if (kept) {
      showFieldText(kept.text, composer.text);
      return;
    }
    this.#form = this.#composer(composer, formKey);
    if (composerAnchor) insertAfterBlock(composerAnchor, this.#form.element);
    else this.#plan.append(this.#form.element);
  }

  focusComposer(): void {
    this.#plan.querySelector<HTMLTextAreaElement>('.comment-composer textarea')?.focus();
  }

  #card(comment: LineComment, index: number, editable: boolean): HTMLElement {
    const card = el('div', { className: 'comment-card', attrs: { 'data-index': String(index), 'data-line': String(comment.line) } });
    const head = el('div', { className: 'comment-head' });
    const range = { first: comment.line - 1, last: (comment.endLine ?? comment.line) - 1 };
    const label = this.#blocks?.labelOf(range) ?? rangeLabel(comment);
    head.append(
      el('span', { className: 'codicon codicon-comment', attrs: { 'aria-hidden': 'true' } }),
      el('span', { className: 'comment-lines', text: label }),
    );
    if (editable) {
      const actions = this.#actions;
      const edit = button('Edit comment', 'edit', 'icon-button');
      edit.setAttribute('aria-label', `Edit comment on ${label}`);
      edit.addEventListener('click', () => {
        if (!actions.model.editComment(index)) return;
        actions.draftsChanged();
        actions.render();
        this.focusComposer();
      });
      const remove = button('Remove comment', 'trash', 'icon-button');
      remove.setAttribute('aria-label', `Remove comment on ${label}`);
      remove.addEventListener('click', () => {
        actions.model.removeComment(index);
        actions.draftsChanged();
        actions.render();
      });
      head.append(edit, remove);
    }
    card.append(head, el('p', { className: 'comment-text', text: comment.text }));
    return card;
  }

  #composer(composer: Composer, key: string): { key: string; element: HTMLElement; text: HTMLTextAreaElement } {
    const actions = this.#actions;
    const label = this.#blocks?.labelOf(composer.range) ?? rangeLabel({ line: composer.range.first + 1, endLine: composer.range.last + 1 });
    const form = el('div', { className: 'comment-composer', attrs: { role: 'group', 'aria-label': `Comment on ${label}` } });
    const text = el('textarea', { attrs: { id: COMPOSER_TEXT_ID, rows: '3', maxlength: String(PANEL_LIMITS.commentChars) } });
    text.value = composer.text;
    text.addEventListener('input', () => {
      actions.model.typeComment(text.value);
      actions.draftsChanged();
    });
    const save = button(composer.editing === undefined ? 'Add comment' : 'Save comment', 'check', 'primary');
    const cancel = button('Cancel', undefined, 'secondary');
    const commit = () => {
      const blocks = this.#blocks;
      const value = text.value.trim();
      if (!value) {
        actions.notice('A comment needs some text.');
        text.focus();
        return;
      }
      if (!blocks) return;
      const result = actions.model.commitComment(blocks.comment(composer.range, value));
      if (!result.ok) actions.notice(result.notice);
      actions.draftsChanged();
      actions.render();
    };
    save.addEventListener('click', commit);
    cancel.addEventListener('click', () => {
      actions.model.cancelComment();
      actions.draftsChanged();
      actions.render();
      this.#plan.focus();
    });
    // Ctrl/Cmd+Enter only saves the comment; it never decides anything.
    sendOnCtrlEnter(text, commit, () => cancel.click());
    const labelEl = el('label', { text: `Comment on ${label}`, attrs: { for: COMPOSER_TEXT_ID } });
    const row = el('div', { className: 'composer-actions' });
    row.append(save, cancel);
    form.append(labelEl, text, row);
    return { key, element: form, text };
  }
}

// The plan shown: rendered as Markdown (its nodes kept for switching back, renderCache.ts), as
// plain text when it is too large, or as the diff against the revision before; a placeholder with
// no plan. Clicks, selections and the keyboard pick the lines a comment is about.
import type { PanelState } from '../../core/panelMessages';
import { PlanBlockIndex } from '../lineComments';
import { renderPlanDiff } from '../planDiff';
import { planRenderBound, renderPlanMarkdown, renderPlanText } from '../planMarkdown';
import { RenderCache } from '../renderCache';
import { CommentThreads } from './commentThreads';
import { el } from './dom';
import type { PanelActions } from './panelActions';

/** Rendered plans kept for switching between revisions; each 2,000 lines is a few MB of DOM. */
const RENDERED_PLANS_KEPT = 4;

function placeholderText(state: PanelState | undefined): string {
  if (!state) return 'Waiting for the extension…';
  if (state.phase === 'starting' || state.phase === 'planning') return 'The agent is working on a plan…';
  if (state.phase === 'needs_input') return 'No plan yet: the agent asked a question first.';
  return 'No plan in this session.';
}

export class PlanPart {
  readonly element = el('div', { className: 'plan markdown', attrs: { tabindex: '0', role: 'region', id: 'plan' } });
  readonly #actions: PanelActions;
  readonly #threads: CommentThreads;
  #blocks: PlanBlockIndex | undefined;
  #key = '';
  #renderedMarkdown = false;
  /** Comment threads placed among these nodes are removed by CommentThreads before it places its own. */
  readonly #rendered = new RenderCache<{ nodes: ChildNode[]; blocks: PlanBlockIndex }>(RENDERED_PLANS_KEPT);

  constructor(actions: PanelActions) {
    this.#actions = actions;
    this.#threads = new CommentThreads(actions, this.element);
    this.element.addEventListener('click', (event) => this.#onClick(event));
    this.element.addEventListener('keydown', (event) => this.#onKey(event));
  }

  /** Whether a plan was rendered as Markdown here: the render path is warm from then on (renderWarmUp.ts). */
  get renderedMarkdown(): boolean {
    return this.#renderedMarkdown;
  }

  /** The plan is shown as Markdown with commentable blocks. */
  get hasBlocks(): boolean {
    return this.#blocks !== undefined;
  }

  render(): void {
    const { model } = this.#actions;
    const state = model.state;
    const shown = model.shown();
    if (!state || !shown) {
      this.#key = '';
      this.#blocks = undefined;
      this.element.replaceChildren(el('p', { className: 'placeholder', text: placeholderText(state) }));
      return;
    }
    const previous = model.diffBase();
    const key = `${state.sessionKey}\u0000${shown.toolUseId}\u0000${shown.planHash}\u0000${previous ? `diff:${previous.planHash}` : 'plan'}`;
    if (key !== this.#key) {
      this.#key = key;
      this.#blocks = undefined;
      if (previous) {
        const result = renderPlanDiff(previous.plan, shown.plan, {
          from: `Revision ${previous.revision}`,
          to: `Revision ${shown.revision}`,
        });
        this.element.replaceChildren(result.ok ? result.element : renderPlanText(shown.plan, result.reason));
        this.element.setAttribute('aria-label', `Changes in revision ${shown.revision}`);
      } else {
        const bound = planRenderBound(shown.plan);
        if (bound !== undefined) {
          this.element.replaceChildren(
            renderPlanText(shown.plan, `${bound} Line comments need the rendered plan; write your feedback in the reject message.`),
          );
        } else {
          this.#showRendered(shown.plan);
        }
        this.element.setAttribute(
          'aria-label',
          `Plan, revision ${shown.revision}. Arrow keys move between blocks; Enter comments on the focused block.`,
        );
      }
    }
    this.element.classList.toggle('commentable', model.canComment());
    this.#threads.render(this.#blocks);
  }

  /** Puts the focus in the comment composer, if it is open. */
  focusComposer(): void {
    this.#threads.focusComposer();
  }

  #showRendered(source: string): void {
    let rendered = this.#rendered.get(source);
    if (rendered) {
      this.element.replaceChildren();
      for (const node of rendered.nodes) this.element.append(node);
    } else {
      const fragment = renderPlanMarkdown(source);
      const nodes = Array.from(fragment.childNodes);
      this.element.replaceChildren(fragment);
      rendered = { nodes, blocks: new PlanBlockIndex(this.element, source) };
      this.#rendered.set(source, rendered);
    }
    this.#blocks = rendered.blocks;
    this.#renderedMarkdown = true;
  }

  #open(opened: boolean): void {
    if (!opened) return;
    this.#actions.render();
    this.focusComposer();
  }

  #onClick(event: MouseEvent): void {
    const blocks = this.#blocks;
    const target = event.target as Node | null;
    if (!blocks || !target || !(target instanceof Element)) return;
    if (target.closest('.comment-thread, .comment-composer')) return;
    const { model } = this.#actions;
    const selection = window.getSelection();
    if (selection && !selection.isCollapsed && this.element.contains(selection.anchorNode) && this.element.contains(selection.focusNode)) {
      const a = blocks.blockOf(selection.anchorNode);
      const b = blocks.blockOf(selection.focusNode);
      if (a && b) {
        const ra = blocks.rangeOf(a);
        const rb = blocks.rangeOf(b);
        this.#open(model.openComposer({ first: Math.min(ra.first, rb.first), last: Math.max(ra.last, rb.last) }));
        return;
      }
    }
    const block = blocks.blockOf(target);
    if (!block) return;
    const range = blocks.rangeOf(block);
    this.#open(event.shiftKey && model.composer ? model.extendComposer(range) : model.openComposer(range));
  }

  #onKey(event: KeyboardEvent): void {
    const blocks = this.#blocks;
    if (!blocks || blocks.blocks.length === 0) return;
    const target = event.target as Node | null;
    if (target instanceof Element && target.closest('.comment-thread, .comment-composer')) return;
    const { model } = this.#actions;
    const focused = target === this.element ? undefined : blocks.blockOf(target);
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
        const base = model.composer?.range ?? a;
        if (model.extendComposer({ first: Math.min(base.first, b.first), last: Math.max(base.last, b.last) })) {
          this.#actions.render();
          next.element.focus();
        }
      }
    } else if (event.key === 'Enter' && focused) {
      event.preventDefault();
      const composer = model.composer;
      this.#open(model.openComposer(composer && composer.editing === undefined ? composer.range : blocks.rangeOf(focused)));
    } else if (event.key === 'Escape' && model.composer) {
      event.preventDefault();
      model.cancelComment();
      this.#actions.render();
    }
  }
}

/** What was sent with a decided revision: the feedback of a rejection, the notes of an approval. */
export class RevisionFeedbackPart {
  readonly element = el('div', { className: 'revision-feedback' });

  constructor() {
    this.element.hidden = true;
  }

  render(actions: PanelActions): void {
    const shown = actions.model.shown();
    const decided = shown !== undefined && shown.status !== 'pending';
    const feedback = decided ? shown.feedback?.trim() : undefined;
    const notes = decided ? shown.notes?.trim() : undefined;
    this.element.hidden = !feedback && !notes;
    const children: HTMLElement[] = [];
    if (feedback)
      children.push(el('h2', { text: 'Feedback sent with this revision' }), el('p', { className: 'feedback-text', text: feedback }));
    if (notes) {
      const edited = shown?.status === 'approved_edited' ? ' (appended to the approved plan as an edit)' : '';
      children.push(
        el('h2', { text: `Approved with notes${edited}` }),
        el('p', { className: 'feedback-text approval-notes-text', text: notes }),
      );
    }
    if (children.length) this.element.replaceChildren(...children);
  }
}

// The list of revisions (each with its status) and the switch between a plan and how it differs
// from the revision before it (the plan's text, not the code the agent changed).
import { statusLabel } from '../panelModel';
import { button, el } from './dom';
import type { PanelActions } from './panelActions';

/** Says what the diff is of: two revisions of the plan, not code changes. */
export const COMPARE_LABEL = 'Compare plan revisions';

export class RevisionListPart {
  readonly element = el('nav', { className: 'revisions', attrs: { 'aria-label': 'Revisions' } });
  readonly #list = el('ol', { className: 'revision-list' });
  readonly #diffToggle = button(COMPARE_LABEL, 'diff', 'secondary');
  readonly #actions: PanelActions;

  constructor(actions: PanelActions) {
    this.#actions = actions;
    const row = el('div', { className: 'revisions-row' });
    row.append(this.#list, this.#diffToggle);
    this.element.append(row);
    this.#diffToggle.addEventListener('click', () => {
      actions.model.toggleDiff();
      actions.render();
    });
  }

  render(): void {
    const { model } = this.#actions;
    const state = model.state;
    const revisions = state?.revisions ?? [];
    const shown = model.shown();
    this.element.hidden = revisions.length === 0;
    const items = revisions.map((revision) => {
      const item = el('li');
      const b = button(`Revision ${revision.revision}: ${statusLabel(revision)}`, undefined, 'link-button');
      b.dataset.revision = String(revision.revision);
      if (revision === shown) b.setAttribute('aria-current', 'true');
      b.addEventListener('click', () => {
        model.select(revision.revision);
        this.#actions.render();
      });
      item.append(b);
      return item;
    });
    this.#list.replaceChildren(...items);
    const index = shown ? revisions.indexOf(shown) : -1;
    this.#diffToggle.hidden = index < 1;
    this.#diffToggle.setAttribute('aria-pressed', String(model.showDiff));
    const before = index > 0 ? revisions[index - 1] : undefined;
    this.#diffToggle.title =
      before && shown ? `The lines of the plan that revision ${shown.revision} added and removed since revision ${before.revision}` : '';
    const toggleText = this.#diffToggle.lastChild;
    if (toggleText) toggleText.textContent = model.showDiff ? 'Show plan' : COMPARE_LABEL;
  }
}

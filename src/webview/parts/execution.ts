// The approved plan as a checklist while the agent executes it: each step with what the agent
// reported of it (pending, in progress, done, or nothing at all), the files it touched under it
// (each opens a diff in the editor), the work the agent reported that no step names, and the files
// touched outside any step. A step's row is rebuilt only when what it shows changed.
import type { ExecutionStep, PanelExecution } from '../../core/panelMessages';
import { button, el } from './dom';
import type { PanelActions } from './panelActions';

const STEP_STATUS_LABELS: Record<ExecutionStep['status'], string> = {
  done: 'Done',
  in_progress: 'In progress',
  pending: 'Pending',
  not_reported: 'Not reported',
};

const TODO_STATUS_LABELS: Record<PanelExecution['notInPlan'][number]['status'], string> = {
  completed: 'done',
  in_progress: 'in progress',
  pending: 'pending',
};

/** What a step's row shows, as one string: equal strings, nothing to redraw. */
function stepSignature(step: ExecutionStep): string {
  return JSON.stringify([step.title, step.status, step.todos, step.files, step.namedFiles]);
}

export class ExecutionPart {
  readonly element = el('section', { className: 'execution', attrs: { 'aria-label': 'Execution of the approved plan' } });
  readonly #summary = el('p', { className: 'execution-summary', attrs: { role: 'status' } });
  readonly #steps = el('ol', { className: 'execution-steps' });
  readonly #extra = el('div', { className: 'execution-extra' });
  readonly #rows = new Map<string, { item: HTMLLIElement; signature: string }>();
  readonly #actions: PanelActions;
  #extraSignature = '';

  constructor(actions: PanelActions) {
    this.#actions = actions;
    this.element.append(el('h2', { text: 'Execution' }), this.#summary, this.#steps, this.#extra);
    this.element.hidden = true;
  }

  render(): void {
    const execution = this.#actions.model.execution();
    this.element.hidden = execution === undefined;
    if (!execution) return;
    this.#summary.textContent = execution.summary;
    this.element.dataset.finished = String(execution.finished);
    const items: HTMLLIElement[] = [];
    const seen = new Set<string>();
    for (const step of execution.steps) {
      seen.add(step.id);
      const signature = stepSignature(step);
      let row = this.#rows.get(step.id);
      if (!row || row.signature !== signature) {
        const item = this.#stepItem(step);
        // A changed row is swapped in place: the list around it is neither rebuilt nor laid out again.
        if (row?.item.parentNode === this.#steps) row.item.replaceWith(item);
        row = { item, signature };
        this.#rows.set(step.id, row);
      }
      items.push(row.item);
    }
    for (const id of [...this.#rows.keys()]) if (!seen.has(id)) this.#rows.delete(id);
    const children = this.#steps.children;
    if (children.length !== items.length || items.some((item, i) => children[i] !== item)) this.#steps.replaceChildren(...items);
    const extraSignature = JSON.stringify([execution.notInPlan, execution.unattributedFiles]);
    if (extraSignature !== this.#extraSignature) {
      this.#extraSignature = extraSignature;
      this.#renderExtra(execution);
    }
  }

  #stepItem(step: ExecutionStep): HTMLLIElement {
    const item = el('li', { className: `execution-step status-${step.status}` });
    item.dataset.stepId = step.id;
    item.dataset.status = step.status;
    const head = el('div', { className: 'execution-step-head' });
    head.append(
      el('span', { className: 'execution-status', text: STEP_STATUS_LABELS[step.status] }),
      el('span', { className: 'execution-title', text: step.title }),
    );
    item.append(head);
    if (step.todos.length > 0 && (step.todos.length > 1 || step.todos[0] !== step.title)) {
      item.append(el('p', { className: 'execution-todos', text: `Reported as: ${step.todos.join('; ')}` }));
    }
    if (step.files.length > 0) item.append(this.#fileList(step.files, `Files touched for ${step.title}`));
    if (step.namedFiles && step.namedFiles.length > 0) {
      // No todo of the agent placed these: say so, beside the files it did report.
      item.append(
        el('p', { className: 'execution-named-note', text: 'Touched, and named by this step (the agent did not report which step):' }),
        this.#fileList(step.namedFiles, `Files named by ${step.title}`),
      );
    }
    return item;
  }

  #fileList(files: readonly string[], label: string): HTMLUListElement {
    const list = el('ul', { className: 'execution-files', attrs: { 'aria-label': label } });
    for (const file of files) {
      const open = button(file, 'diff', 'link-button');
      open.dataset.path = file;
      open.title = `Open the changes to ${file}`;
      open.addEventListener('click', () => this.#openFile(file));
      const item = el('li');
      item.append(open);
      list.append(item);
    }
    return list;
  }

  #openFile(file: string): void {
    const state = this.#actions.model.state;
    if (state) this.#actions.send({ type: 'openFileDiff', sessionKey: state.sessionKey, path: file });
  }

  #renderExtra(execution: PanelExecution): void {
    const parts: HTMLElement[] = [];
    if (execution.notInPlan.length > 0) {
      const list = el('ul', { className: 'execution-not-in-plan' });
      for (const todo of execution.notInPlan) list.append(el('li', { text: `${todo.content} (${TODO_STATUS_LABELS[todo.status]})` }));
      parts.push(el('h3', { text: 'Reported work no step names' }), list);
    }
    if (execution.unattributedFiles.length > 0) {
      parts.push(
        el('h3', { text: 'Files touched outside any step' }),
        this.#fileList(execution.unattributedFiles, 'Files touched outside any step'),
      );
    }
    this.#extra.replaceChildren(...parts);
  }
}

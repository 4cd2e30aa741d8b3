// What the page shows that the editor shows outside the panel: the agent's permission requests
// (VS Code asks in a notification) and the plan editor for Edit (VS Code opens an editor tab).
// Built with the panel's DOM helpers; every text goes in as text, never as markup.
import { PANEL_LIMITS } from '../../core/panelMessages';
import type { ToolPermissionRequest } from '../../core/permissionRequests';
import { button, el } from '../parts/dom';

export interface PermissionActions {
  answer(request: ToolPermissionRequest, answer: 'allow' | 'deny'): Promise<string | undefined>;
}

/** The open permission requests, each with Allow and Deny, and what went wrong with an answer. */
export class PermissionsPart {
  readonly element = el('section', { className: 'permissions', attrs: { 'aria-label': 'Permission requests' } });
  readonly #list = el('ul', { className: 'permission-list' });
  readonly #status = el('p', { className: 'permission-status', attrs: { role: 'status' } });

  constructor(private readonly actions: PermissionActions) {
    this.element.append(el('h2', { text: 'The agent asks for permission' }), this.#list, this.#status);
    this.element.hidden = true;
  }

  render(open: readonly ToolPermissionRequest[], agent: string): void {
    this.element.hidden = open.length === 0;
    this.#list.replaceChildren(
      ...open.map((request) => {
        const item = el('li', { className: 'permission' });
        const what = el('p', { className: 'permission-what' });
        what.append(el('strong', { text: request.toolName }), document.createTextNode(request.summary ? ` ${request.summary}` : ''));
        const row = el('div', { className: 'actions' });
        const allow = button('Allow', 'check', 'primary');
        const deny = button('Deny', 'close');
        for (const [b, a] of [
          [allow, 'allow'],
          [deny, 'deny'],
        ] as const) {
          b.addEventListener('click', () => {
            allow.disabled = deny.disabled = true;
            void this.actions.answer(request, a).then((refused) => {
              this.#status.textContent = refused ?? '';
              if (refused) allow.disabled = deny.disabled = false;
            });
          });
        }
        row.append(allow, deny);
        item.append(el('p', { className: 'permission-who', text: `${agent} wants to use:` }), what, row);
        return item;
      }),
    );
  }
}

export interface EditorActions {
  save(text: string): Promise<string | undefined>;
  cancel(): void;
}

/** Edit on the page: the plan in a text box, approved as edited, or put away. */
export class PlanEditorPart {
  readonly element = el('section', { className: 'plan-editor', attrs: { 'aria-label': 'Edit the plan' } });
  readonly field = el('textarea', { attrs: { id: 'plan-editor-text', rows: '20', maxlength: String(PANEL_LIMITS.planChars) } });
  readonly #status = el('p', { className: 'decision-status', attrs: { role: 'status' } });
  readonly #save = button('Approve Edited Plan', 'check', 'primary');
  readonly #cancel = button('Cancel', 'close');

  constructor(private readonly actions: EditorActions) {
    const row = el('div', { className: 'actions' });
    row.append(this.#save, this.#cancel);
    const label = el('label', { text: 'Your version of the plan (Markdown)', attrs: { for: 'plan-editor-text' } });
    this.element.append(el('h2', { text: 'Edit the plan' }), label, this.field, row, this.#status);
    this.element.hidden = true;
    this.#save.addEventListener('click', () => {
      this.#save.disabled = true;
      void this.actions.save(this.field.value).then((refused) => {
        this.#save.disabled = false;
        this.#status.textContent = refused ?? '';
        if (!refused) this.close();
      });
    });
    this.#cancel.addEventListener('click', () => {
      this.close();
      this.actions.cancel();
    });
  }

  open(plan: string): void {
    this.field.value = plan;
    this.#status.textContent = '';
    this.element.hidden = false;
    this.field.focus();
  }

  close(): void {
    this.element.hidden = true;
  }
}

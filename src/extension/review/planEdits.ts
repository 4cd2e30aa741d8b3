// "Edit" on a plan: the plan opens in an untitled Markdown editor; "Approve Edited Plan" (editor
// title button, palette, or keybinding) sends the edited text as updatedInput.plan, still bound to
// the original plan's tool_use id and hash, so an edit of a superseded plan is refused like any
// stale decision.
import * as vscode from 'vscode';
import type { DecisionBinding } from '../../core/panelMessages';
import { Disposable, toDisposable } from '../../core/lifecycle';

interface EditedPlan {
  sessionKey: string;
  binding: DecisionBinding;
}

const CONTEXT_KEY = 'ultraplan.editingPlan';

export class PlanEdits extends Disposable {
  readonly #byUri = new Map<string, EditedPlan>();

  /** `onClosed(sessionKey)`: an edit was closed without being approved. */
  constructor(private readonly onClosed: (sessionKey: string) => void) {
    super();
    this._register(vscode.window.onDidChangeActiveTextEditor(() => this.#updateContext()));
    this._register(
      vscode.workspace.onDidCloseTextDocument((doc) => {
        const edit = this.#byUri.get(doc.uri.toString());
        if (!edit) return;
        this.#byUri.delete(doc.uri.toString());
        this.#updateContext();
        this.onClosed(edit.sessionKey);
      }),
    );
    this._register(toDisposable(() => this.#byUri.clear()));
  }

  async open(sessionKey: string, binding: DecisionBinding, plan: string): Promise<void> {
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: plan });
    this.#byUri.set(doc.uri.toString(), { sessionKey, binding });
    // Beside the review, so the plan being edited and the panel stay in view together.
    await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
    this.#updateContext();
    void vscode.window.showInformationMessage(
      'Ultraplan: edit the plan, then use "Approve Edited Plan" (the ✓ in the editor title) to approve your version.',
    );
  }

  /** The edit in the active editor (or the only open one), with its current text. */
  current(): (EditedPlan & { text: string; document: vscode.TextDocument }) | undefined {
    const active = vscode.window.activeTextEditor?.document;
    const docs =
      active && this.#byUri.has(active.uri.toString())
        ? [active]
        : vscode.workspace.textDocuments.filter((d) => this.#byUri.has(d.uri.toString()));
    const doc = docs.length === 1 ? docs[0] : undefined;
    const edit = doc ? this.#byUri.get(doc.uri.toString()) : undefined;
    return doc && edit ? { ...edit, text: doc.getText(), document: doc } : undefined;
  }

  /** Closes the edit without a save prompt (the text was sent). */
  async close(document: vscode.TextDocument): Promise<void> {
    this.#byUri.delete(document.uri.toString());
    this.#updateContext();
    const editor = vscode.window.visibleTextEditors.find((e) => e.document === document);
    if (editor) {
      await vscode.window.showTextDocument(editor.document, editor.viewColumn);
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    }
  }

  #updateContext(): void {
    const active = vscode.window.activeTextEditor?.document;
    const editing = active !== undefined && this.#byUri.has(active.uri.toString());
    void vscode.commands.executeCommand('setContext', CONTEXT_KEY, editing);
  }
}

// Asking the person about a tool permission request (an edit, a command) the agent sent while it
// executes an approved plan, or while planning: a notification with Allow / Deny / Details, and a
// read-only view of the request's full input. Nothing here answers on its own: a dismissed
// notification leaves the request open (the status bar keeps saying "needs permission").
import * as vscode from 'vscode';
import type { DecisionBinding } from '../../core/panelMessages';
import { Disposable, toDisposable } from '../../core/lifecycle';
import { describeToolInput, permissionPromptText, type ToolPermissionRequest } from '../../core/permissionRequests';
import type { PermissionAsker } from './sessionNotifier';

export const PERMISSION_DETAILS_SCHEME = 'ultraplan-permission';
/** Details documents kept for the editor to read back (oldest forgotten first). */
const MAX_DETAILS_DOCUMENTS = 20;
/** Details, then asked again: a bound on that loop. */
const MAX_PROMPT_ROUNDS = 20;

/** Read-only documents (a content provider's scheme) showing a request's full input. */
export class PermissionDetailsView extends Disposable {
  readonly #contents = new Map<string, string>();
  readonly #changed = this._register(new vscode.EventEmitter<vscode.Uri>());

  constructor() {
    super();
    const contents = this.#contents;
    this._register(
      vscode.workspace.registerTextDocumentContentProvider(PERMISSION_DETAILS_SCHEME, {
        onDidChange: this.#changed.event,
        provideTextDocumentContent: (uri) => contents.get(uri.toString()) ?? '// This permission request is no longer available.\n',
      }),
    );
    this._register(toDisposable(() => contents.clear()));
  }

  async show(sessionKey: string, request: ToolPermissionRequest): Promise<void> {
    const safe = (text: string) => text.replace(/[^\w.-]+/g, '-').slice(0, 80) || 'request';
    const uri = vscode.Uri.from({
      scheme: PERMISSION_DETAILS_SCHEME,
      path: `/${safe(sessionKey)}/${safe(request.toolName)}-${safe(request.requestId)}.json`,
    });
    const key = uri.toString();
    this.#contents.delete(key);
    this.#contents.set(
      key,
      describeToolInput({ tool: request.toolName, tool_use_id: request.toolUseId, request_id: request.requestId, input: request.input }),
    );
    while (this.#contents.size > MAX_DETAILS_DOCUMENTS) {
      const oldest = this.#contents.keys().next().value;
      if (oldest === undefined) break;
      this.#contents.delete(oldest);
    }
    this.#changed.fire(uri);
    const document = await vscode.workspace.openTextDocument(uri);
    // Beside the review, which stays in view.
    await vscode.window.showTextDocument(document, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  }
}

export const ALLOW = 'Allow';
export const DENY = 'Deny';
export const DETAILS = 'Details';

/**
 * Shows the request until the person answers it or dismisses the notification; Details opens the
 * full input, then asks again. The answer goes through the target (and its gate), bound to what
 * was shown.
 */
export async function promptPermission(
  target: PermissionAsker,
  request: ToolPermissionRequest,
  binding: DecisionBinding,
  details: PermissionDetailsView | undefined,
): Promise<void> {
  const text = permissionPromptText(target.askerLabel, request);
  for (let round = 0; round < MAX_PROMPT_ROUNDS; round++) {
    const buttons = details ? [ALLOW, DENY, DETAILS] : [ALLOW, DENY];
    const choice = await vscode.window.showWarningMessage(text, ...buttons);
    if (choice === undefined) return; // dismissed: still open; the status bar asks again on click
    if (choice === DETAILS && details) {
      await details.show(target.key, request);
      if (!target.isPermissionOpen(request.requestId)) {
        void vscode.window.showInformationMessage(
          'Ultraplan: that permission request is no longer open (answered elsewhere, or the agent moved on).',
        );
        return;
      }
      continue;
    }
    await target.answerPermission(binding, request.requestId, choice === ALLOW ? 'allow' : 'deny');
    return;
  }
}

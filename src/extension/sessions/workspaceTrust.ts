// What followed sessions need to know of workspace trust: embedded sessions restored in Restricted
// Mode wait for it. A seam so the in-host tests can grant it.
import * as vscode from 'vscode';

export interface WorkspaceTrust {
  readonly isTrusted: boolean;
  onDidGrant(listener: () => unknown): vscode.Disposable;
}

export const vscodeTrust: WorkspaceTrust = {
  get isTrusted() {
    return vscode.workspace.isTrusted;
  },
  onDidGrant: (listener) => vscode.workspace.onDidGrantWorkspaceTrust(listener),
};

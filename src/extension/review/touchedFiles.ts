// Opens a file the approved plan's execution touched, from the panel's checklist: a diff against
// the file as it was at approval when that is known, else the file itself. Only files inside the
// workspace open: the path came from the agent, so it is resolved and checked here.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { errorMessage } from '../../core/errors';

/**
 * The file as it was when the plan was approved, if this window knows it. The record of the
 * changes since approval is not kept yet; this is where it plugs in.
 */
export type ApprovalBaseline = (sessionKey: string, file: vscode.Uri) => vscode.Uri | undefined;

/** The workspace file `reported` names (relative to a workspace folder, or absolute inside one); undefined when outside. */
export function workspaceFile(reported: string, folders: readonly string[]): string | undefined {
  for (const folder of folders) {
    const resolved = path.resolve(folder, reported);
    const relative = path.relative(folder, resolved);
    if (relative && !relative.startsWith('..') && !path.isAbsolute(relative)) return resolved;
  }
  return undefined;
}

export async function openTouchedFile(
  sessionKey: string,
  reported: string,
  baseline: ApprovalBaseline | undefined,
  log?: { warn(message: string): void },
): Promise<void> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  const file = workspaceFile(reported, folders);
  if (!file) {
    void vscode.window.showWarningMessage(`Ultraplan: ${reported} is not in this workspace, so it was not opened.`);
    return;
  }
  const uri = vscode.Uri.file(file);
  const before = baseline?.(sessionKey, uri);
  try {
    if (before) {
      await vscode.commands.executeCommand('vscode.diff', before, uri, `${path.basename(file)} (since approval)`);
    } else {
      await vscode.commands.executeCommand('vscode.open', uri);
    }
  } catch (error) {
    log?.warn(`review panel: could not open ${reported}: ${String(error)}`);
    void vscode.window.showWarningMessage(`Ultraplan: could not open ${reported}: ${errorMessage(error)}`);
  }
}

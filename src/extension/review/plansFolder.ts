// Where plans are saved: read by the teleport (a chunk of its own) and by the commands that list
// or point at saved plans, which load with the extension.
import * as path from 'node:path';
import * as vscode from 'vscode';

/** The folder plans are saved in: absolute as given, else under the first workspace folder. */
export function plansFolder(plansDirectory: string): vscode.Uri | undefined {
  if (path.isAbsolute(plansDirectory)) return vscode.Uri.file(plansDirectory);
  const root = vscode.workspace.workspaceFolders?.[0]?.uri;
  return root ? vscode.Uri.joinPath(root, ...plansDirectory.split(/[\\/]+/).filter(Boolean)) : undefined;
}

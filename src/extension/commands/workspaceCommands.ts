// Commands about the editor's own things: the saved (teleported) plans and the log.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { plansFolder } from '../review/plansFolder';
import { registerCommand, type ExtensionServices } from './services';

export function registerWorkspaceCommands(services: ExtensionServices): void {
  const { settings, log } = services;
  const register = (id: string, run: (...args: unknown[]) => unknown) => registerCommand(services, id, run);

  register('ultraplan.showLog', () => log.show());
  register('ultraplan.showServiceStatus', async () => (await import('../backends/serviceStatusCommand')).showServiceStatus(services));

  register('ultraplan.openSavedPlans', async () => {
    const folder = plansFolder(settings.read().plansDirectory);
    if (!folder) {
      void vscode.window.showWarningMessage('Ultraplan: open a folder first; saved plans live inside the workspace.');
      return;
    }
    let entries: [string, vscode.FileType][] = [];
    try {
      entries = await vscode.workspace.fs.readDirectory(folder);
    } catch {
      entries = [];
    }
    // Newest first by modification time (same-day names differ only by their -2, -3 suffix).
    const files = entries.filter(([name, type]) => type === vscode.FileType.File && name.endsWith('.md')).map(([name]) => name);
    const stamped = await Promise.all(
      files.map(async (name) => ({
        name,
        mtime: await vscode.workspace.fs.stat(vscode.Uri.joinPath(folder, name)).then(
          (st) => st.mtime,
          () => 0,
        ),
      })),
    );
    const plans = stamped.sort((a, b) => b.mtime - a.mtime || b.name.localeCompare(a.name)).map((p) => p.name);
    if (plans.length === 0) {
      void vscode.window.showInformationMessage(
        `Ultraplan: no saved plans in ${vscode.workspace.asRelativePath(folder)} yet (teleport a plan to save one).`,
      );
      return;
    }
    const picked = await vscode.window.showQuickPick(
      plans.map((name) => ({ label: name, description: path.basename(folder.fsPath) })),
      { title: 'Ultraplan: saved plans' },
    );
    if (picked) await vscode.window.showTextDocument(vscode.Uri.joinPath(folder, picked.label), { preview: false });
  });
}

import * as vscode from 'vscode';

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Ultraplan', { log: true });
  context.subscriptions.push(log, vscode.commands.registerCommand('ultraplan.showLog', () => log.show()));
}

export function deactivate(): void {}

// The options a Claude Code on the web backend is made with, from the settings and the workspace:
// the first workspace folder's repository, the chosen environment, the API address (a setting
// only tests and proxies change). The backend logs its lifecycle (eligible, session created with
// its link) at info level and each HTTP request at debug; neither ever carries a token.
import * as vscode from 'vscode';
import type { ClaudeWebBackend, ClaudeWebBackendOptions } from '../../client/claudeWeb';
import type { UltraplanSettings } from '../settings/settingsSchema';

export interface PreparedClaudeWeb {
  backend: ClaudeWebBackend;
  /** For people, before launching: unpushed work, a login about to expire. */
  warnings: string[];
  /** The settings and folder it was checked for. */
  key: string;
  at: number;
}

export function claudeWebBackendOptions(
  settings: UltraplanSettings,
  log: vscode.LogOutputChannel,
  signal?: AbortSignal,
): ClaudeWebBackendOptions & { key: string } {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  if (!folder || folder.scheme !== 'file') {
    throw new Error("Claude Code on the web plans in a GitHub repository: open the repository's folder first (File > Open Folder…).");
  }
  const environmentId = settings['claudeWeb.environmentId'] || undefined;
  const baseUrl = settings['claudeWeb.baseUrl'];
  const options: ClaudeWebBackendOptions & { key: string } = {
    workspaceFolder: folder.fsPath,
    baseUrl,
    log: (line) => (line.startsWith('claude-web:') ? log.info(line) : log.debug(`http: ${line}`)),
    key: JSON.stringify([folder.fsPath, environmentId ?? '', baseUrl]),
  };
  if (environmentId) options.environmentId = environmentId;
  if (signal) options.signal = signal;
  return options;
}

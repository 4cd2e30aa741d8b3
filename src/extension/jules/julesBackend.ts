// The Jules backend for this window: the key from secret storage, the first workspace folder's
// GitHub repository and branch for new sessions. A chunk of its own, loaded when Jules is first used.
import * as vscode from 'vscode';
import { detectGitRepository } from '../../client/claudeWeb/git';
import { JulesBackend, type JulesRepository } from '../../client/jules/backend';
import { julesKeyReader } from './julesKey';

/** The repository Jules works on: a GitHub remote and a branch Jules can start from. */
async function workspaceRepository(): Promise<JulesRepository> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  if (!folder || folder.scheme !== 'file')
    throw new Error("Jules plans in a GitHub repository: open the repository's folder first (File > Open Folder…).");
  const info = await detectGitRepository(folder.fsPath);
  if (info.host !== 'github.com') throw new Error(`Jules works on GitHub repositories; this folder's remote is on ${info.host}.`);
  if (!info.branch) throw new Error('Jules starts from a branch on GitHub: check out a branch (HEAD is detached), push it, and try again.');
  return { owner: info.owner, name: info.name, branch: info.branch };
}

/**
 * A backend that can start sessions here (`launch`), or one that follows sessions that exist (after
 * a reload: no repository needed). Each request's method, path and status are logged at debug; the
 * key is only ever a header.
 */
export async function julesBackend(
  launch: boolean,
  baseUrl: string,
  secrets: vscode.SecretStorage,
  log: vscode.LogOutputChannel,
): Promise<JulesBackend> {
  return new JulesBackend({
    getKey: julesKeyReader(secrets),
    baseUrl,
    log: (line) => (line.startsWith('jules:') ? log.warn(line) : log.debug(`http: ${line}`)),
    ...(launch ? { repository: await workspaceRepository() } : {}),
  });
}

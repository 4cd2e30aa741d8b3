// "Ultraplan: Show Changes Since Approval": VS Code's multi-file diff of what changed in the
// session's workspace since its plan was approved (the service's record: docs/execution.md, "What
// changed"). Left, each file as recorded at approval, read-only from the recording commit; right,
// the workspace file. Where that commit is not in a local repository (a team server's worker
// checkout), the unified diff opens as a read-only document instead. Loaded with its first use.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { runNeutralGit } from '../../core/node/safeGit';
import type { ChangedFile, ChangesSinceApproval } from '../../core/changesSinceApproval';
import { readChangesSinceApproval, recordClientFor } from '../../client/changesSinceApproval';
import type { ExtensionServices } from '../commands/services';
import type { FollowedSession } from '../sessions/followedSession';
import { pickApprovedSession } from './approvedSession';

/** The file as recorded at approval: `ultraplan-approved:/<path>?<commit>@<repository root>`. */
export const APPROVED_SCHEME = 'ultraplan-approved';
const MAX_FILE_BYTES = 20 * 1024 * 1024;

let provider: vscode.Disposable | undefined;

/**
 * Opens the changes since approval of the session `key` names (else the person picks one of those
 * whose plan was approved); says why when there are none to show. What it uses of the extension
 * comes through `services`, so the first load exports nothing more for it.
 */
export async function showChangesSinceApproval(services: ExtensionServices, key: string | undefined): Promise<void> {
  const session = await pickApprovedSession(services.sessions, key, 'Show the changes since approval of which session?');
  if (!session) return;
  const backend = session.backend;
  // Our own service and server keep the record; Claude Code on the web has its branch instead.
  if (backend.kind === 'claude-web') {
    await showBranchChanges(services, session);
    return;
  }
  const client = await recordClientFor(backend, session.sessionId);
  if (!client) {
    void vscode.window.showInformationMessage(`Ultraplan: ${backend.label} keeps no record of the changes since approval.`);
    return;
  }
  const changes = await readChangesSinceApproval(client, session.sessionId);
  if (changes.files.length === 0) {
    void vscode.window.showInformationMessage(`Ultraplan: nothing changed in the workspace since "${session.title}" was approved.`);
    return;
  }
  const root = await localRepositoryWith(changes.approved_commit);
  if (root === undefined) {
    const document = await vscode.workspace.openTextDocument({ content: changes.diff, language: 'diff' });
    await vscode.window.showTextDocument(document, { preview: false });
    void vscode.window.showInformationMessage(
      `Ultraplan: the workspace of "${session.title}" is not on this machine; this is the diff its worker took at ${new Date(changes.computed_at).toLocaleString()}.`,
    );
    return;
  }
  registerApprovedContent(services);
  await vscode.commands.executeCommand('vscode.changes', `Changes since approval: ${session.title}`, resources(changes, root));
}

function registerApprovedContent(services: ExtensionServices): void {
  if (provider) return;
  provider = vscode.workspace.registerTextDocumentContentProvider(APPROVED_SCHEME, { provideTextDocumentContent: approvedContent });
  services.context.subscriptions.push(provider);
}

/** A Claude Code on the web session: its branch, fetched into this clone, against where it started. */
async function showBranchChanges(services: ExtensionServices, session: FollowedSession): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
  if (!folder) {
    void vscode.window.showInformationMessage(
      "Ultraplan: open a clone of the session's GitHub repository to see the changes on its branch.",
    );
    return;
  }
  const { BranchChangesError, readBranchChanges } = await import('../../client/claudeWeb/branchChanges');
  let changes: Awaited<ReturnType<typeof readBranchChanges>>;
  try {
    const resource = await session.backend.getSession(session.sessionId);
    changes = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Ultraplan: fetching the branch of "${session.title}"…` },
      () => readBranchChanges(resource.session_context, folder),
    );
  } catch (err) {
    if (!(err instanceof BranchChangesError)) throw err;
    void vscode.window.showInformationMessage(`Ultraplan: no changes to show for "${session.title}": ${err.message}.`);
    return;
  }
  if (changes.files.length === 0) {
    void vscode.window.showInformationMessage(
      `Ultraplan: ${changes.branch} changes nothing since it left ${changes.revision ?? 'the default branch'}.`,
    );
    return;
  }
  registerApprovedContent(services);
  const entries = changes.files.map((file) => changeEntry(changes.root, file, changes.base, changes.head));
  await vscode.commands.executeCommand('vscode.changes', `Changes on ${changes.branch}: ${session.title}`, entries);
}

type ChangeEntry = [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined];

/** `[label, left, right]` per file, as vscode.changes takes them: the file at approval against the workspace file. */
export function resources(changes: ChangesSinceApproval, root: string): ChangeEntry[] {
  return changes.files.map((file) => changeEntry(root, file, changes.approved_commit, undefined));
}

/**
 * One file's `[label, left, right]`: left the file at commit `before`, right at commit `after`
 * (undefined: the workspace file); no left for an added file, no right for a deleted one.
 */
function changeEntry(root: string, file: ChangedFile, before: string, after: string | undefined): ChangeEntry {
  const workspaceFile = vscode.Uri.file(path.join(root, ...file.path.split('/')));
  const at = (commit: string) => workspaceFile.with({ scheme: APPROVED_SCHEME, query: `${commit}@${root}` });
  const right = after === undefined ? workspaceFile : at(after);
  return [workspaceFile, file.status === 'added' ? undefined : at(before), file.status === 'deleted' ? undefined : right];
}

async function approvedContent(uri: vscode.Uri): Promise<string> {
  const at = uri.query.indexOf('@');
  const commit = uri.query.slice(0, at);
  const root = uri.query.slice(at + 1);
  const relative = path.relative(root, uri.fsPath).split(path.sep).join('/');
  if (!/^[0-9a-f]{40,64}$/.test(commit) || relative.startsWith('..')) return '';
  return git(root, ['cat-file', 'blob', `${commit}:${relative}`]).catch(() => '');
}

/** The top folder of the workspace repository that holds `commit` (the local service recorded it there), if any. */
async function localRepositoryWith(commit: string): Promise<string | undefined> {
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    if (folder.uri.scheme !== 'file') continue;
    const root = (await git(folder.uri.fsPath, ['rev-parse', '--show-toplevel']).catch(() => '')).trim();
    if (!root) continue;
    const found = await git(root, ['cat-file', '-e', `${commit}^{commit}`]).then(
      () => true,
      () => false,
    );
    if (found) return root;
  }
  return undefined;
}

/** git with the repository's programs switched off (core/node/safeGit.ts, as the service runs it on the same folder). */
async function git(cwd: string, args: readonly string[]): Promise<string> {
  const result = await runNeutralGit(args, { cwd, maxBuffer: MAX_FILE_BYTES, env: { GIT_OPTIONAL_LOCKS: '0' } });
  if (result.code !== 0) throw new Error(result.stderr.trim() || `git exited ${result.code}`);
  return result.stdout;
}

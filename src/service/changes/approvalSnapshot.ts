// The record of a workspace at the moment a plan is approved, and the changes since, without
// touching what the person keeps in git: their index, stash list, branches and HEAD stay as they
// were. The workspace (untracked files included, ignored ones not, as `git add -A` sees it) is
// written as a tree through a temporary index of our own, committed with HEAD as its parent, and
// kept under refs/ultraplan/approved/<session> so `git gc` keeps it. The diff since is the same
// tree taken now, compared with that commit.
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { errorMessage } from '../../core/errors';
import { approvedRef, CHANGED_FILE_STATUSES, type ChangedFile, type ChangesSinceApproval } from '../../core/changesSinceApproval';
import { WorkspaceGit, WorkspaceGitError } from './workspaceGit';

/** A workspace that is not in a git repository has no record of changes; said in these words. */
export const NOT_A_REPOSITORY = 'not a git repository: no record of changes';

export type ApprovalRecord = { kind: 'recorded'; commit: string } | { kind: 'not_recorded'; reason: string };

export type ChangesOutcome =
  | { kind: 'changes'; changes: ChangesSinceApproval }
  /** No record to compare with: not a git repository, or no plan approved (recorded) yet. */
  | { kind: 'no_record'; reason: string }
  /** git failed, or the diff is over the bound. */
  | { kind: 'failed'; reason: string; tooLarge: boolean };

/**
 * Records `workspace` as it is now for `sessionId` (a later approval replaces the record).
 * Never throws: a workspace that cannot be recorded says why.
 */
export async function recordApproval(workspace: string, sessionId: string, at: Date = new Date()): Promise<ApprovalRecord> {
  const git = new WorkspaceGit(workspace);
  try {
    if (!(await isWorkTree(git))) return { kind: 'not_recorded', reason: NOT_A_REPOSITORY };
    const head = await headCommit(git);
    const tree = await workspaceTree(git, head);
    const parent = head ? ['-p', head] : [];
    const stamp = `${Math.floor(at.getTime() / 1000)} +0000`;
    const commit = (
      await git.run(['commit-tree', tree, ...parent, '-m', `Ultraplan: the workspace when session ${sessionId}'s plan was approved`], {
        env: { GIT_AUTHOR_DATE: stamp, GIT_COMMITTER_DATE: stamp },
      })
    ).trim();
    await git.run(['update-ref', '-m', 'ultraplan: plan approved', approvedRef(sessionId), commit]);
    return { kind: 'recorded', commit };
  } catch (err) {
    return { kind: 'not_recorded', reason: errorMessage(err) };
  }
}

export interface ChangesOptions {
  now?: Date;
  /** The diff's bound (default MAX_GIT_OUTPUT_BYTES, 20 MB): over it the outcome is `tooLarge`. */
  maxDiffBytes?: number;
}

/** The changes in `workspace` since `sessionId`'s approval was recorded. Never throws. */
export async function changesSinceApproval(workspace: string, sessionId: string, options: ChangesOptions = {}): Promise<ChangesOutcome> {
  const bound = options.maxDiffBytes === undefined ? {} : { maxOutputBytes: options.maxDiffBytes };
  const git = new WorkspaceGit(workspace);
  try {
    if (!(await isWorkTree(git))) return { kind: 'no_record', reason: NOT_A_REPOSITORY };
    const approved = await git.run(['rev-parse', '--verify', '--quiet', `${approvedRef(sessionId)}^{commit}`]).catch(() => '');
    if (!approved.trim()) {
      return { kind: 'no_record', reason: 'no plan of this session was approved in this workspace yet: no record of changes' };
    }
    const commit = approved.trim();
    const approvedAt = (await git.run(['show', '-s', '--format=%cI', commit])).trim();
    const tree = await workspaceTree(git, await headCommit(git));
    const compare = ['--no-ext-diff', '--no-textconv', '--no-color', '--no-renames', commit, tree];
    const names = await git.run(['diff', '--name-status', '-z', ...compare], bound);
    const diff = await git.run(['diff', '--patch', ...compare], bound);
    return {
      kind: 'changes',
      changes: {
        type: 'changes_since_approval',
        session_id: sessionId,
        approved_commit: commit,
        approved_at: new Date(approvedAt).toISOString(),
        computed_at: (options.now ?? new Date()).toISOString(),
        files: parseNameStatus(names),
        diff,
      },
    };
  } catch (err) {
    if (err instanceof WorkspaceGitError && err.tooLarge) {
      return { kind: 'failed', reason: `the diff since approval is too large (${err.message})`, tooLarge: true };
    }
    return { kind: 'failed', reason: errorMessage(err), tooLarge: false };
  }
}

async function isWorkTree(git: WorkspaceGit): Promise<boolean> {
  const stat = await fs.stat(git.cwd).catch(() => undefined);
  if (!stat?.isDirectory()) return false;
  const inside = await git.run(['rev-parse', '--is-inside-work-tree']).catch(() => '');
  return inside.trim() === 'true';
}

async function headCommit(git: WorkspaceGit): Promise<string | undefined> {
  const head = await git.run(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']).catch(() => '');
  return head.trim() || undefined;
}

/** The workspace as a tree, through a temporary index (the person's is never read or written). */
async function workspaceTree(git: WorkspaceGit, head: string | undefined): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ultraplan-index-'));
  const indexFile = path.join(dir, `index-${randomUUID()}`);
  try {
    // HEAD's tree first, so files git tracks but an ignore rule covers stay in the tree as they are.
    if (head) await git.run(['read-tree', head], { indexFile });
    await git.run(['add', '-A', '--', ':/'], { indexFile });
    return (await git.run(['write-tree'], { indexFile })).trim();
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const STATUS_OF: Record<string, ChangedFile['status']> = { A: 'added', M: 'modified', D: 'deleted', T: 'modified' };

/** `git diff --name-status -z` (no renames): status, NUL, path, NUL, … */
function parseNameStatus(output: string): ChangedFile[] {
  const parts = output.split('\0');
  const files: ChangedFile[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const status = STATUS_OF[(parts[i] as string).charAt(0)] ?? CHANGED_FILE_STATUSES[1];
    const file = parts[i + 1] as string;
    if (file) files.push({ path: file, status });
  }
  return files;
}

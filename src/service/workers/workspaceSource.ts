// Where a worker's agent works for a session: the session's git source (`session_context.sources[]`
// of type git_repository: `url`, optional `revision`) cloned into a scratch folder of its own, or,
// for a session without one, the worker's --workspace (a local path: one machine). A source that
// cannot be made into a workspace is refused with a reason the person can act on; nothing else
// stops. docs/server.md, "Workers".
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { checkGitSource, gitUrlWithoutCredentials, type GitSourcePolicy } from '../../core/gitSource';
import { GitRepositorySourceSchema } from '../../core/protocol';
import type { SessionMeta } from '../store/sessionStore';
import { errorMessage } from '../../core/errors';
import { runNeutralGit } from '../../core/node/safeGit';

/** A source that cannot be made into a workspace; the message is for the person. */
export class WorkspaceSourceError extends Error {}

export interface WorkspacePlaces {
  /** Where a session without a git source works. */
  workspace: string;
  /** Where git sources are cloned, one folder per session. */
  scratch: string;
  log: (line: string) => void;
  /** How long one git command may take (default 120 s). */
  gitTimeoutMs?: number;
  /** Which sources a session may name (`--git-host`, `--allow-file-sources`). */
  sources: GitSourcePolicy;
}

// Printable ASCII without what git refuses in a ref name (and no leading '-': not an option).
const ALLOWED_REVISION = /^(?!-)[!-~]{1,200}$/;
const REF_UNSAFE = /[~^:?*[\\]/;

/** The folder the session's agent works in, cloned and checked out when the session has a git source. */
export async function prepareWorkspace(meta: SessionMeta, places: WorkspacePlaces): Promise<string> {
  const sources = (meta.session_context?.sources ?? []).filter((s) => s.type === 'git_repository');
  if (sources.length === 0) return places.workspace;
  if (sources.length > 1) throw new WorkspaceSourceError(`the session names ${sources.length} git repositories; a worker prepares one`);
  const parsed = GitRepositorySourceSchema.safeParse(sources[0]);
  if (!parsed.success)
    throw new WorkspaceSourceError('the session\'s git_repository source needs a "url" (and an optional "revision") as text');
  const { url, revision } = parsed.data;
  const shown = gitUrlWithoutCredentials(url);
  // The API checked it when the session was made; checked again here, where it is fetched, under
  // this worker's own flags. Not ext:: or fd:: (they run commands), not a bare path or an option.
  const verdict = checkGitSource(url, places.sources);
  if (!verdict.ok) throw new WorkspaceSourceError(verdict.message);
  if (revision !== undefined && (!ALLOWED_REVISION.test(revision) || REF_UNSAFE.test(revision))) {
    throw new WorkspaceSourceError(`the git revision ${JSON.stringify(revision.slice(0, 200))} is not a branch, tag or commit name`);
  }
  const folder = path.join(places.scratch, meta.id);
  if (await exists(folder)) return folder; // prepared before (this worker, or another on the same scratch)
  // Cloned beside, then renamed: a folder under its final name is always a whole checkout.
  const partial = `${folder}.partial-${randomUUID().slice(0, 8)}`;
  const git = (args: string[]) => runGit(args, places.gitTimeoutMs ?? 120_000);
  try {
    await git(['clone', '--quiet', '--no-checkout', '--no-hardlinks', '--', url, partial]).catch((err: unknown) => {
      throw new WorkspaceSourceError(`git clone of ${shown} failed: ${gitReason(err)}`);
    });
    const commit = revision === undefined ? 'HEAD' : await resolveRevision(git, partial, revision, shown);
    await git(['-C', partial, 'checkout', '--quiet', '--detach', commit, '--']).catch((err: unknown) => {
      throw new WorkspaceSourceError(`checking out ${revision ?? 'the default branch'} of ${shown} failed: ${gitReason(err)}`);
    });
    await fs.rename(partial, folder).catch(async (err: unknown) => {
      if (!(await exists(folder))) throw err; // else another worker on this scratch finished first
      await fs.rm(partial, { recursive: true, force: true });
    });
  } catch (err) {
    await fs.rm(partial, { recursive: true, force: true }).catch(() => {});
    if (err instanceof WorkspaceSourceError) throw err;
    throw new WorkspaceSourceError(`preparing the workspace from ${shown} failed: ${errorMessage(err)}`);
  }
  places.log(`session ${meta.id}: workspace cloned from ${shown}${revision ? ` at ${revision}` : ''}`);
  return folder;
}

/** A branch of the remote, a tag or a commit, as a commit id. */
async function resolveRevision(git: (args: string[]) => Promise<string>, folder: string, revision: string, shown: string): Promise<string> {
  for (const candidate of [`refs/remotes/origin/${revision}`, revision]) {
    const commit = await git(['-C', folder, 'rev-parse', '--verify', '--quiet', '--end-of-options', `${candidate}^{commit}`]).catch(
      () => '',
    );
    if (commit.trim()) return commit.trim();
  }
  throw new WorkspaceSourceError(`the revision ${JSON.stringify(revision)} is not a branch, tag or commit of ${shown}`);
}

/** git under the neutral config (no hooks, fsmonitor or pager of anyone's), throwing on a non-zero exit. */
async function runGit(args: string[], timeout: number): Promise<string> {
  const result = await runNeutralGit(['-c', 'protocol.ext.allow=never', '-c', 'protocol.fd.allow=never', ...args], {
    cwd: process.cwd(),
    timeoutMs: timeout,
    // Never wait for a password nobody will type; never read the worker's own git settings for credentials.
    env: { GIT_ASKPASS: 'true', SSH_ASKPASS: 'true', GIT_SSH_COMMAND: 'ssh -o BatchMode=yes' },
  });
  if (result.code !== 0) throw Object.assign(new Error(`git ${args[0]} exited with ${result.code}`), { stderr: result.stderr });
  return result.stdout;
}

/**
 * git's own words (its first fatal or error line), or that it took too long. A host that could not
 * be reached is said one way whatever the cause, so a session cannot map which ports of the
 * worker's network answer (refused, reset, timed out and unresolved read the same).
 */
function gitReason(err: unknown): string {
  const failure = err as { killed?: boolean; stderr?: unknown; message?: unknown };
  if (failure.killed) return 'the repository could not be reached';
  const lines = String(failure.stderr ?? failure.message ?? err)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const reason = lines.find((l) => /^(fatal|error):/.test(l)) ?? lines.at(-1) ?? 'git failed';
  if (UNREACHABLE.test(reason)) return 'the repository could not be reached';
  return gitUrlWithoutCredentials(reason.replace(/^(fatal|error):\s*/, ''));
}

const UNREACHABLE =
  /Failed to connect|Could not resolve host|Connection (refused|reset|timed out)|Couldn't connect|Operation timed out|No route to host|Network is unreachable|ssh: connect to host|Could not read from remote repository|Empty reply from server|unable to access/i;

async function exists(folder: string): Promise<boolean> {
  return fs.stat(folder).then(
    () => true,
    () => false,
  );
}

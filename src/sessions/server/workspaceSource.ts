// Where a worker's agent works for a session: the session's git source (`session_context.sources[]`
// of type git_repository: `url`, optional `revision`) cloned into a scratch folder of its own, or,
// for a session without one, the worker's --workspace (a local path: one machine). A source that
// cannot be made into a workspace is refused with a reason the person can act on; nothing else
// stops. docs/server.md, "Workers".
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { GitRepositorySourceSchema } from '../../core/protocol';
import type { SessionMeta } from '../store';

const run = promisify(execFile);

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
}

// Remote transports and file://. Not ext:: or fd:: (they run commands), not a bare path or an
// option ("-u…"): a session names a repository to fetch, not a program or a folder of this machine.
const ALLOWED_URL = /^(?:(?:https?|ssh|git|file):\/\/[^\s]+|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s]+)$/;
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
  const shown = withoutCredentials(url);
  if (!ALLOWED_URL.test(url)) {
    throw new WorkspaceSourceError(
      `the git source ${JSON.stringify(shown.slice(0, 200))} is not a repository URL this worker fetches (https://, ssh://, git://, file:// or user@host:path)`,
    );
  }
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
    throw new WorkspaceSourceError(`preparing the workspace from ${shown} failed: ${err instanceof Error ? err.message : String(err)}`);
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

async function runGit(args: string[], timeout: number): Promise<string> {
  const { stdout } = await run('git', ['-c', 'protocol.ext.allow=never', '-c', 'protocol.fd.allow=never', ...args], {
    timeout,
    // Never wait for a password nobody will type; never read the worker's own git settings for credentials.
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true', SSH_ASKPASS: 'true', GIT_SSH_COMMAND: 'ssh -o BatchMode=yes' },
  });
  return stdout;
}

/** git's own words (its first fatal or error line), or that it took too long. */
function gitReason(err: unknown): string {
  const failure = err as { killed?: boolean; stderr?: unknown; message?: unknown };
  if (failure.killed) return 'it took too long and was stopped';
  const lines = String(failure.stderr ?? failure.message ?? err)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const reason = lines.find((l) => /^(fatal|error):/.test(l)) ?? lines.at(-1) ?? 'git failed';
  return withoutCredentials(reason.replace(/^(fatal|error):\s*/, ''));
}

/** A URL as it may be shown: a password or token in it is left out. */
function withoutCredentials(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, '$1');
}

async function exists(folder: string): Promise<boolean> {
  return fs.stat(folder).then(
    () => true,
    () => false,
  );
}

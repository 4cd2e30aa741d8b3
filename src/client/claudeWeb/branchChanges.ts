// What a Claude Code on the web session changed: it works on a copy of the GitHub repository and
// pushes to the claude/<slug> branch its creation request named as the outcome (launch.ts), so its
// record of "the changes since approval" is that branch against the revision it started from. Both
// are fetched into refs of our own in the person's clone (never their branches, index or working
// tree) and diffed there, with the repository's own programs switched off (core/node/safeGit.ts).
import * as z from 'zod';
import { NEUTRAL_DIFF_OPTIONS, SafeGit } from '../../core/node/safeGit';
import { CHANGED_FILE_STATUSES, type ChangedFile } from '../../core/changesSinceApproval';
import type { SessionContext } from '../../core/protocol';
import { detectGitRepository, type DetectOptions, type GitRunner } from './git';

/** The refs the fetched branch and base are kept under, so `git gc` keeps them and no branch of the person's moves. */
export const FETCHED_REF_PREFIX = 'refs/ultraplan/claude-web';
const FETCH_TIMEOUT_MS = 60_000;
const MAX_DIFF_BYTES = 64 * 1024 * 1024;

const BranchNameSchema = z
  .string()
  .min(1)
  .max(255)
  .refine((b) => /^[A-Za-z0-9._/-]+$/.test(b) && !b.startsWith('-') && !b.includes('..') && !b.endsWith('.lock') && !b.endsWith('/'), {
    message: 'not a plain branch name',
  });

const OutcomeContextSchema = z.looseObject({
  sources: z.array(z.looseObject({ type: z.string(), revision: z.string().optional() })).optional(),
  outcomes: z
    .array(
      z.looseObject({
        type: z.literal('git_repository'),
        git_info: z.looseObject({ repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/), branches: z.array(BranchNameSchema).min(1) }),
      }),
    )
    .min(1),
});

/** The repository (`owner/name`), the branch the session pushes to and the revision it started from. */
export interface SessionOutcome {
  repo: string;
  branch: string;
  /** Branch or commit; undefined: the repository's default branch. */
  revision: string | undefined;
}

export class BranchChangesError extends Error {
  override name = 'BranchChangesError';
}

/** The outcome a Claude Code on the web session's context names; why not, when it names none this can read. */
export function sessionOutcome(context: SessionContext | null | undefined): SessionOutcome {
  const parsed = OutcomeContextSchema.safeParse(context ?? {});
  if (!parsed.success) throw new BranchChangesError('the session names no branch it pushes its work to');
  const [outcome] = parsed.data.outcomes;
  const revision = parsed.data.sources?.find((s) => s.type === 'git_repository')?.revision;
  if (revision !== undefined && !BranchNameSchema.safeParse(revision).success) {
    throw new BranchChangesError('the session started from a revision that is not a plain branch or commit name');
  }
  return { repo: outcome!.git_info.repo, branch: outcome!.git_info.branches[0]!, revision };
}

export interface BranchChanges extends SessionOutcome {
  /** Where the branch left the revision it started from (their merge base). */
  base: string;
  /** The branch's commit as fetched now. */
  head: string;
  /** The clone it was fetched into. */
  root: string;
  files: ChangedFile[];
  diff: string;
}

/**
 * Fetches the session's branch and its starting revision from the clone's GitHub remote and diffs
 * them. The clone must be of the session's repository; a branch not pushed yet says so.
 */
export async function readBranchChanges(
  context: SessionContext | null | undefined,
  folder: string,
  options: DetectOptions & { signal?: AbortSignal } = {},
): Promise<BranchChanges> {
  const outcome = sessionOutcome(context);
  const repository = await detectGitRepository(folder, { ...options, git: options.git ?? neutralRunner(options.signal) });
  const here = `${repository.owner}/${repository.name}`;
  if (here.toLowerCase() !== outcome.repo.toLowerCase()) {
    throw new BranchChangesError(`the session worked on github.com/${outcome.repo}, and this folder is a clone of github.com/${here}`);
  }
  // The person's own clone: their system config (a credential helper) applies; the clone's own
  // programs (fsmonitor, hooks, filters, external diffs) still do not.
  const git = new SafeGit(repository.root, { timeoutMs: FETCH_TIMEOUT_MS, maxBuffer: MAX_DIFF_BYTES, env: { GIT_CONFIG_NOSYSTEM: '0' } });
  const run = async (args: string[], what: string): Promise<string> => {
    const result = await git.run(args, options.signal);
    if (result.code !== 0)
      throw new BranchChangesError(`${what}: ${result.stderr.trim().split('\n').slice(-2).join(' ') || `git exit ${result.code}`}`);
    return result.stdout;
  };
  const remote = repository.remoteName;
  const headRef = `${FETCHED_REF_PREFIX}/outcome/${outcome.branch}`;
  const fetched = await git.run(
    ['fetch', '--no-tags', '--quiet', '--refmap=', remote, `+refs/heads/${outcome.branch}:${headRef}`],
    options.signal,
  );
  if (fetched.code !== 0) {
    if (/couldn't find remote ref|not our ref|no such ref/i.test(fetched.stderr)) {
      throw new BranchChangesError(`the session has not pushed ${outcome.branch} to github.com/${outcome.repo} yet`);
    }
    throw new BranchChangesError(
      `fetching ${outcome.branch} from ${remote} failed: ${fetched.stderr.trim().split('\n').slice(-1)[0] ?? ''}`,
    );
  }
  const start = await startingCommit(run, remote, outcome.revision);
  const head = (await run(['rev-parse', '--verify', `${headRef}^{commit}`], 'reading the fetched branch')).trim();
  const base = (await run(['merge-base', head, start], `finding where ${outcome.branch} left its starting revision`)).trim();
  const listed = await run(['diff', ...NEUTRAL_DIFF_OPTIONS, '--no-renames', '--name-status', '-z', base, head], 'listing the changes');
  const diff = await run(['diff', ...NEUTRAL_DIFF_OPTIONS, '--no-renames', base, head], 'diffing the branch');
  return { ...outcome, base, head, root: repository.root, files: nameStatus(listed), diff };
}

/** The commit the session started from: a commit this clone has, else the branch (or the remote's default) fetched. */
async function startingCommit(
  run: (args: string[], what: string) => Promise<string>,
  remote: string,
  revision: string | undefined,
): Promise<string> {
  if (revision !== undefined && /^[0-9a-f]{7,64}$/.test(revision)) {
    const local = await run(['rev-parse', '--verify', '--quiet', `${revision}^{commit}`], 'reading the starting commit').catch(() => '');
    if (local.trim()) return local.trim();
  }
  const baseRef = `${FETCHED_REF_PREFIX}/base`;
  const source = revision === undefined ? 'HEAD' : /^[0-9a-f]{7,64}$/.test(revision) ? revision : `refs/heads/${revision}`;
  await run(
    ['fetch', '--no-tags', '--quiet', '--refmap=', remote, `+${source}:${baseRef}`],
    `fetching the starting revision ${revision ?? `(${remote}'s default branch)`}`,
  );
  return (await run(['rev-parse', '--verify', `${baseRef}^{commit}`], 'reading the starting revision')).trim();
}

/** git for the repository detection too: its `git status` must not start the clone's fsmonitor or filters either. */
function neutralRunner(signal?: AbortSignal): GitRunner {
  return async (args, cwd) => {
    const result = await new SafeGit(cwd, { timeoutMs: FETCH_TIMEOUT_MS, env: { GIT_CONFIG_NOSYSTEM: '0' } }).run(args, signal);
    if (result.code !== 0) throw Object.assign(new Error(result.stderr.trim() || `git exit ${result.code}`), { exitCode: result.code });
    return result.stdout;
  };
}

const STATUS: Record<string, ChangedFile['status']> = { A: 'added', M: 'modified', D: 'deleted', T: 'modified' };

function nameStatus(listed: string): ChangedFile[] {
  const fields = listed.split('\0');
  const files: ChangedFile[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = STATUS[fields[i]!.charAt(0)];
    const path = fields[i + 1]!;
    if (status && CHANGED_FILE_STATUSES.includes(status) && path) files.push({ path, status });
  }
  return files;
}

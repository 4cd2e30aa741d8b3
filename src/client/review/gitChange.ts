// Collects the change a review looks at with the real git (and `gh` for a pull request), under
// fixed options so a person's git configuration (external diff tools, mnemonic prefixes, colour,
// textconv) cannot change what is parsed, and through SafeGit so the repository's own config
// (fsmonitor, filters, hooks, a pager) runs nothing. Nothing here sends anything: the size and
// secret rules run on the result before any reviewer sees it.
import { execFile } from 'node:child_process';
import { GitSpawnError, NEUTRAL_DIFF_OPTIONS, SafeGit, neutralGitConfigEnv, neutralGitEnv, type GitResult } from '../../core/node/safeGit';
import { parseGitDiff, type ParsedChange } from '../../core/review/changes';
import {
  describeScope,
  isSafeRevision,
  sizeRefusal,
  DEFAULT_REVIEW_LIMITS,
  type ReviewLimits,
  type ReviewScope,
} from '../../core/review/scope';

/** git's output is read whole up to this; more is refused with the number, never cut. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
const GIT_TIMEOUT_MS = 60_000;

export class ReviewChangeError extends Error {
  constructor(
    message: string,
    readonly reason: 'not_a_repository' | 'bad_scope' | 'too_large' | 'empty' | 'gh_missing' | 'git_failed',
  ) {
    super(message);
    this.name = 'ReviewChangeError';
  }
}

export interface CollectedChange extends ParsedChange {
  /** The repository's top folder. */
  root: string;
  scope: ReviewScope;
  scopeText: string;
}

const DIFF_OPTIONS = ['--no-color', ...NEUTRAL_DIFF_OPTIONS, '--no-renames', '--src-prefix=a/', '--dst-prefix=b/', '--binary'];
const CONFIG = ['-c', 'diff.noprefix=false', '-c', 'diff.mnemonicPrefix=false'];

function tooLarge(): ReviewChangeError {
  return new ReviewChangeError(
    `This change is too large to review whole: its diff is over ${MAX_OUTPUT_BYTES / 1024 / 1024} MB. Nothing was sent.`,
    'too_large',
  );
}

type GitRunner = (args: readonly string[], signal?: AbortSignal) => Promise<GitResult>;

/** git in `cwd` under SafeGit (the repository's filters read once), its failures to start said as a review's. */
function gitIn(cwd: string): GitRunner {
  const safe = new SafeGit(cwd, { maxBuffer: MAX_OUTPUT_BYTES, timeoutMs: GIT_TIMEOUT_MS });
  return (args, signal) =>
    safe.run([...CONFIG, ...args], signal).catch((error: unknown) => {
      if (error instanceof GitSpawnError && error.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') throw tooLarge();
      if (error instanceof GitSpawnError && error.code === 'ENOENT')
        throw new ReviewChangeError('git is not installed (not found on PATH).', 'git_failed');
      throw error;
    });
}

/** gh, for a pull request's diff (git runs only through gitIn). */
function run(command: string, args: readonly string[], cwd: string, signal?: AbortSignal): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      {
        cwd,
        maxBuffer: MAX_OUTPUT_BYTES,
        timeout: GIT_TIMEOUT_MS,
        encoding: 'utf8',
        env: neutralGitEnv(process.env, neutralGitConfigEnv()),
        ...(signal ? { signal } : {}),
      },
      (error, stdout, stderr) => {
        if (error && 'code' in error && error.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
          reject(tooLarge());
          return;
        }
        if (error && typeof error.code !== 'number') {
          reject(
            error.code === 'ENOENT'
              ? new ReviewChangeError(`${command} is not installed (not found on PATH).`, command === 'gh' ? 'gh_missing' : 'git_failed')
              : error,
          );
          return;
        }
        resolve({ stdout, stderr, code: error ? (error.code as number) : 0 });
      },
    );
  });
}

/** git's output, or a review error when it exits other than `okCodes`. */
function outputOf(runner: GitRunner): (args: readonly string[], signal?: AbortSignal, okCodes?: readonly number[]) => Promise<string> {
  return async (args, signal, okCodes = [0]) => {
    const result = await runner(args, signal);
    if (!okCodes.includes(result.code))
      throw new ReviewChangeError(`git ${args[0]} failed: ${result.stderr.trim() || `exit ${result.code}`}`, 'git_failed');
    return result.stdout;
  };
}

type Git = ReturnType<typeof outputOf>;

export async function repositoryRoot(folder: string, signal?: AbortSignal): Promise<string> {
  const result = await gitIn(folder)(['rev-parse', '--show-toplevel'], signal);
  if (result.code !== 0)
    throw new ReviewChangeError(`${folder} is not in a git repository: there is no change to review.`, 'not_a_repository');
  return result.stdout.trim();
}

/** origin's HEAD, else main, else master: the branch a feature branch is compared with. */
export async function defaultBranch(root: string, signal?: AbortSignal, git: GitRunner = gitIn(root)): Promise<string> {
  const originHead = await git(['symbolic-ref', '--quiet', '--short', 'refs/remotes/origin/HEAD'], signal);
  if (originHead.code === 0 && originHead.stdout.trim()) return originHead.stdout.trim();
  for (const name of ['main', 'master']) {
    const exists = await git(['rev-parse', '--verify', '--quiet', `refs/heads/${name}`], signal);
    if (exists.code === 0) return name;
  }
  throw new ReviewChangeError(
    'No default branch found (no origin/HEAD, main or master): name the base branch to compare with.',
    'bad_scope',
  );
}

/**
 * Where "since" starts when no revision is named: HEAD's merge-base with its branch's upstream (so
 * a branch's commits not yet pushed count), or HEAD when the branch has no upstream.
 */
export async function defaultSinceRevision(root: string, signal?: AbortSignal): Promise<{ rev: string; why: string }> {
  const git = gitIn(root);
  const upstream = await git(['rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{upstream}'], signal);
  if (upstream.code === 0 && upstream.stdout.trim()) {
    const name = upstream.stdout.trim();
    const base = await git(['merge-base', 'HEAD', name], signal);
    if (base.code === 0 && base.stdout.trim()) return { rev: base.stdout.trim(), why: `HEAD's merge-base with ${name}` };
  }
  return { rev: 'HEAD', why: 'HEAD (the branch has no upstream)' };
}

function checkRevision(revision: string): string {
  if (!isSafeRevision(revision)) throw new ReviewChangeError(`"${revision}" is not a revision Ultraplan passes to git.`, 'bad_scope');
  return revision;
}

async function untrackedDiff(git: Git, signal?: AbortSignal): Promise<string> {
  const listed = await git(['ls-files', '--others', '--exclude-standard', '-z'], signal);
  const files = listed.split('\0').filter(Boolean);
  let diff = '';
  // `git diff --no-index` exits 1 when the files differ, which is every time here.
  for (const file of files) diff += await git(['diff', ...DIFF_OPTIONS, '--no-index', '--', '/dev/null', file], signal, [0, 1]);
  return diff;
}

async function rawDiff(root: string, runner: GitRunner, scope: ReviewScope, signal?: AbortSignal): Promise<string> {
  const git = outputOf(runner);
  switch (scope.kind) {
    case 'branch': {
      const base = checkRevision(scope.base ?? (await defaultBranch(root, signal, runner)));
      const mergeBase = (await git(['merge-base', 'HEAD', base], signal)).trim();
      // Against the working tree: the branch's commits plus staged and unstaged work.
      const tracked = await git(['diff', ...DIFF_OPTIONS, mergeBase, '--'], signal);
      return scope.includeUntracked ? tracked + (await untrackedDiff(git, signal)) : tracked;
    }
    case 'since': {
      const tracked = await git(['diff', ...DIFF_OPTIONS, checkRevision(scope.rev), '--'], signal);
      return scope.includeUntracked ? tracked + (await untrackedDiff(git, signal)) : tracked;
    }
    case 'staged':
      return git(['diff', ...DIFF_OPTIONS, '--cached', '--'], signal);
    case 'range': {
      // Each side must be a commit: a blob or tree on one side diffs files under other names.
      const commit = async (revision: string): Promise<string> => {
        const found = await runner(['rev-parse', '--verify', '--quiet', '--end-of-options', `${checkRevision(revision)}^{commit}`], signal);
        if (found.code !== 0 || !found.stdout.trim())
          throw new ReviewChangeError(`"${revision}" is not a commit of this repository.`, 'bad_scope');
        return found.stdout.trim();
      };
      return git(['diff', ...DIFF_OPTIONS, await commit(scope.from), await commit(scope.to), '--'], signal);
    }
    case 'pr': {
      const result = await run('gh', ['pr', 'diff', String(scope.number), '--color', 'never'], root, signal).catch((error: unknown) => {
        if (error instanceof ReviewChangeError && error.reason === 'gh_missing')
          throw new ReviewChangeError(
            'Reviewing a pull request needs the GitHub CLI (gh), logged in with `gh auth login`; it is not installed here.',
            'gh_missing',
          );
        throw error;
      });
      if (result.code !== 0)
        throw new ReviewChangeError(`gh pr diff ${scope.number} failed: ${result.stderr.trim() || `exit ${result.code}`}`, 'git_failed');
      return result.stdout;
    }
  }
}

/** The change of `scope` in the repository holding `folder`, checked against the limits. */
export async function collectChange(
  folder: string,
  scope: ReviewScope,
  limits: ReviewLimits = DEFAULT_REVIEW_LIMITS,
  signal?: AbortSignal,
): Promise<CollectedChange> {
  const root = await repositoryRoot(folder, signal);
  const parsed = parseGitDiff(await rawDiff(root, gitIn(root), scope, signal));
  const scopeText = describeScope(scope);
  const refusal = sizeRefusal(parsed.size, limits);
  if (refusal) throw new ReviewChangeError(refusal, 'too_large');
  if (parsed.files.length === 0) {
    const withheld = parsed.withheld.length
      ? ` (${parsed.withheld.length} file(s) that look like secrets were left out: ${parsed.withheld.join(', ')})`
      : '';
    throw new ReviewChangeError(`There is nothing to review in ${scopeText}${withheld}.`, 'empty');
  }
  return { ...parsed, root, scope, scopeText };
}

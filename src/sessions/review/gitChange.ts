// Collects the change a review looks at with the real git (and `gh` for a pull request), under
// fixed options so a person's git configuration (external diff tools, mnemonic prefixes, colour,
// textconv) cannot change what is parsed. Nothing here sends anything: the size and secret rules
// run on the result before any reviewer sees it.
import { execFile } from 'node:child_process';
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

interface RunResult {
  stdout: string;
  stderr: string;
  code: number;
}

const DIFF_OPTIONS = ['--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', '--src-prefix=a/', '--dst-prefix=b/', '--binary'];
const CONFIG = ['-c', 'core.quotePath=false', '-c', 'diff.noprefix=false', '-c', 'diff.mnemonicPrefix=false'];

function run(command: string, args: readonly string[], cwd: string, signal?: AbortSignal): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      {
        cwd,
        maxBuffer: MAX_OUTPUT_BYTES,
        timeout: GIT_TIMEOUT_MS,
        encoding: 'utf8',
        env: { ...process.env, GIT_PAGER: 'cat', LC_ALL: 'C' },
        ...(signal ? { signal } : {}),
      },
      (error, stdout, stderr) => {
        if (error && 'code' in error && error.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
          reject(
            new ReviewChangeError(
              `This change is too large to review whole: its diff is over ${MAX_OUTPUT_BYTES / 1024 / 1024} MB. Nothing was sent.`,
              'too_large',
            ),
          );
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

async function git(root: string, args: readonly string[], signal?: AbortSignal, okCodes: readonly number[] = [0]): Promise<string> {
  const result = await run('git', [...CONFIG, ...args], root, signal);
  if (!okCodes.includes(result.code))
    throw new ReviewChangeError(`git ${args[0]} failed: ${result.stderr.trim() || `exit ${result.code}`}`, 'git_failed');
  return result.stdout;
}

export async function repositoryRoot(folder: string, signal?: AbortSignal): Promise<string> {
  const result = await run('git', ['rev-parse', '--show-toplevel'], folder, signal);
  if (result.code !== 0)
    throw new ReviewChangeError(`${folder} is not in a git repository: there is no change to review.`, 'not_a_repository');
  return result.stdout.trim();
}

/** origin's HEAD, else main, else master: the branch a feature branch is compared with. */
export async function defaultBranch(root: string, signal?: AbortSignal): Promise<string> {
  const originHead = await run('git', ['symbolic-ref', '--quiet', '--short', 'refs/remotes/origin/HEAD'], root, signal);
  if (originHead.code === 0 && originHead.stdout.trim()) return originHead.stdout.trim();
  for (const name of ['main', 'master']) {
    const exists = await run('git', ['rev-parse', '--verify', '--quiet', `refs/heads/${name}`], root, signal);
    if (exists.code === 0) return name;
  }
  throw new ReviewChangeError(
    'No default branch found (no origin/HEAD, main or master): name the base branch to compare with.',
    'bad_scope',
  );
}

function checkRevision(revision: string): string {
  if (!isSafeRevision(revision)) throw new ReviewChangeError(`"${revision}" is not a revision Ultraplan passes to git.`, 'bad_scope');
  return revision;
}

async function untrackedDiff(root: string, signal?: AbortSignal): Promise<string> {
  const listed = await git(root, ['ls-files', '--others', '--exclude-standard', '-z'], signal);
  const files = listed.split('\0').filter(Boolean);
  let diff = '';
  // `git diff --no-index` exits 1 when the files differ, which is every time here.
  for (const file of files) diff += await git(root, ['diff', ...DIFF_OPTIONS, '--no-index', '--', '/dev/null', file], signal, [0, 1]);
  return diff;
}

async function rawDiff(root: string, scope: ReviewScope, signal?: AbortSignal): Promise<string> {
  switch (scope.kind) {
    case 'branch': {
      const base = checkRevision(scope.base ?? (await defaultBranch(root, signal)));
      const mergeBase = (await git(root, ['merge-base', 'HEAD', base], signal)).trim();
      // Against the working tree: the branch's commits plus staged and unstaged work.
      const tracked = await git(root, ['diff', ...DIFF_OPTIONS, mergeBase, '--'], signal);
      return scope.includeUntracked ? tracked + (await untrackedDiff(root, signal)) : tracked;
    }
    case 'staged':
      return git(root, ['diff', ...DIFF_OPTIONS, '--cached', '--'], signal);
    case 'range':
      return git(root, ['diff', ...DIFF_OPTIONS, checkRevision(scope.from), checkRevision(scope.to), '--'], signal);
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
  const parsed = parseGitDiff(await rawDiff(root, scope, signal));
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

// git, run on a person's workspace by the service, through core/node/safeGit.ts: the repository's
// settings that could run a program (fsmonitor, hooks, a pager, an external diff, and every clean,
// smudge or process filter its config defines) switched off, no prompts, no optional locks (a read
// never rewrites the person's index), a time bound and an output bound. What git says is kept to
// its first error line, for the person.
import { filterOverrides, GitSpawnError, runNeutralGit } from '../../core/node/safeGit';

/** git's output beyond this is refused: a diff that large is no review anyone reads. */
export const MAX_GIT_OUTPUT_BYTES = 20 * 1024 * 1024;
const GIT_TIMEOUT_MS = 60_000;

/** git said no, or its output was over the bound (`tooLarge`). */
export class WorkspaceGitError extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

export interface GitRun {
  /** The temporary index this command reads and writes instead of the person's. */
  indexFile?: string;
  maxOutputBytes?: number;
  /** More variables (a commit's dates). */
  env?: Record<string, string>;
}

// Identity of the commits we write (the person's own is not ours to use, and may be unset).
const OUR_IDENTITY = {
  GIT_AUTHOR_NAME: 'Ultraplan',
  GIT_AUTHOR_EMAIL: 'ultraplan@localhost',
  GIT_COMMITTER_NAME: 'Ultraplan',
  GIT_COMMITTER_EMAIL: 'ultraplan@localhost',
};

/**
 * git in one workspace for one operation (a record, a diff since): the filter drivers its config
 * defines are read once, by `git config` (which runs nothing), and blanked on every later call.
 */
export class WorkspaceGit {
  #filters: Promise<string[]> | undefined;

  constructor(readonly cwd: string) {}

  /** Resolves with git's stdout; rejects with a WorkspaceGitError. */
  async run(args: readonly string[], run: GitRun = {}): Promise<string> {
    const filters = await this.#filterArgs();
    return this.#git([...filters, ...args], run);
  }

  #filterArgs(): Promise<string[]> {
    this.#filters ??= this.#git(['config', '--null', '--get-regexp', '^filter\\.'], {}, [1]).then(filterOverrides, (err: unknown) => {
      throw new WorkspaceGitError(`this repository's filters could not be read, so git was not run: ${(err as Error).message}`);
    });
    return this.#filters;
  }

  async #git(args: readonly string[], run: GitRun, emptyExits: readonly number[] = []): Promise<string> {
    const maxBuffer = run.maxOutputBytes ?? MAX_GIT_OUTPUT_BYTES;
    const env = {
      ...OUR_IDENTITY,
      GIT_OPTIONAL_LOCKS: '0',
      ...(run.indexFile !== undefined ? { GIT_INDEX_FILE: run.indexFile } : {}),
      ...run.env,
    };
    let result;
    try {
      result = await runNeutralGit(args, { cwd: this.cwd, env, maxBuffer, timeoutMs: GIT_TIMEOUT_MS });
    } catch (err) {
      const failure = err as GitSpawnError & { killed?: boolean };
      if (failure.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER')
        throw new WorkspaceGitError(`git's output is over ${maxBuffer} bytes`, true);
      if (failure.killed)
        throw new WorkspaceGitError(`git ${args.find((a) => !a.startsWith('-')) ?? ''} took longer than ${GIT_TIMEOUT_MS / 1000} s`);
      throw new WorkspaceGitError(failure.message);
    }
    if (result.code === 0) return result.stdout;
    if (emptyExits.includes(result.code)) return '';
    const lines = result.stderr
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const reason = lines.find((l) => /^(fatal|error):/.test(l)) ?? lines[0] ?? `git failed (exit ${result.code})`;
    throw new WorkspaceGitError(reason.replace(/^(fatal|error):\s*/, ''));
  }
}

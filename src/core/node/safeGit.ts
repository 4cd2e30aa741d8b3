// git run on a repository nobody vetted: the repository's own configuration can name programs git
// starts by itself (core.fsmonitor, a clean or smudge filter its .gitattributes selects, hooks, a
// pager, an external diff). Every git call of a review, and the workers' clones, goes through here
// so none of them runs. docs/security.md "Ultrareview".
import { execFile } from 'node:child_process';

/**
 * Set on the command line, which wins over every config file. Each names nothing to run:
 * `core.fsmonitor=false` turns the hook off (a path there is a program), hooks are looked up in
 * /dev/null (never a folder), `diff.external` is empty (and `--no-ext-diff` is on every diff), no
 * pager, and no attributes file of the person's that could select a driver.
 */
export const NEUTRAL_GIT_CONFIG: readonly string[] = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'diff.external=',
  '-c',
  'core.pager=cat',
  '-c',
  'core.attributesFile=/dev/null',
  '-c',
  'core.quotePath=false',
];

/** Options every `git diff` of ours carries: no external diff driver, no textconv program. */
export const NEUTRAL_DIFF_OPTIONS: readonly string[] = ['--no-ext-diff', '--no-textconv'];

/**
 * The environment git runs in: the caller's, without any GIT_* variable (GIT_DIR, GIT_CONFIG_*,
 * GIT_EXTERNAL_DIFF would each redirect it), with no system config file and no system attributes.
 */
export function neutralGitEnv(base: NodeJS.ProcessEnv, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) if (!key.startsWith('GIT_')) env[key] = value;
  return { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_ATTR_NOSYSTEM: '1', GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...extra };
}

/**
 * The neutral config as variables (GIT_CONFIG_COUNT, _KEY_n, _VALUE_n), for a program that runs
 * git itself (gh): the git it starts takes them like `-c`.
 */
export function neutralGitConfigEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  const pairs = NEUTRAL_GIT_CONFIG.filter((_, i) => i % 2 === 1);
  pairs.forEach((pair, i) => {
    const equals = pair.indexOf('=');
    env[`GIT_CONFIG_KEY_${i}`] = pair.slice(0, equals);
    env[`GIT_CONFIG_VALUE_${i}`] = pair.slice(equals + 1);
  });
  env.GIT_CONFIG_COUNT = String(pairs.length);
  return env;
}

/**
 * A filter driver's program comes only from config (`filter.<name>.clean`, `.smudge`,
 * `.process`), whatever file of attributes names the driver. These blank every one the
 * repository's config defines, so no attribute can select a program. Throws on a driver name
 * `-c` cannot spell.
 */
export function filterOverrides(configListing: string): string[] {
  const names = new Set<string>();
  for (const entry of configListing.split('\0')) {
    const key = entry.slice(0, entry.indexOf('\n') === -1 ? entry.length : entry.indexOf('\n'));
    const match = /^filter\.(.+)\.[^.]+$/is.exec(key);
    if (match) names.add(match[1]!);
  }
  const args: string[] = [];
  for (const name of names) {
    if (/[=\n\0]/.test(name))
      throw new Error(`this repository's git config names a filter git cannot be told to skip: ${JSON.stringify(name)}`);
    for (const part of ['clean=', 'smudge=', 'process=', 'required=false']) args.push('-c', `filter.${name}.${part}`);
  }
  return args;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface SafeGitRunOptions {
  cwd: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxBuffer?: number;
  /** Variables over the neutral environment (GIT_ASKPASS for a clone). */
  env?: Record<string, string>;
}

/** Why git did not start or did not finish, as execFile says it (not an exit code). */
export class GitSpawnError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'GitSpawnError';
  }
}

/** One git process under the neutral config; a non-zero exit is a result, not an error. */
export function runNeutralGit(args: readonly string[], options: SafeGitRunOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...NEUTRAL_GIT_CONFIG, ...args],
      {
        cwd: options.cwd,
        encoding: 'utf8',
        env: neutralGitEnv(process.env, options.env),
        ...(options.maxBuffer !== undefined ? { maxBuffer: options.maxBuffer } : {}),
        ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') {
          reject(Object.assign(new GitSpawnError(error.message, error.code ?? undefined), { killed: error.killed, stderr }));
          return;
        }
        resolve({ stdout, stderr, code: error ? (error.code as number) : 0 });
      },
    );
  });
}

/**
 * git in one repository: the neutral config, plus every filter driver its config defines blanked
 * (read once, by `git config`, which runs nothing).
 */
export class SafeGit {
  #filters: Promise<string[]> | undefined;

  constructor(
    readonly cwd: string,
    private readonly defaults: Omit<SafeGitRunOptions, 'cwd'> = {},
  ) {}

  #filterArgs(signal?: AbortSignal): Promise<string[]> {
    this.#filters ??= runNeutralGit(['config', '--null', '--get-regexp', '^filter\\.'], {
      cwd: this.cwd,
      ...(signal ? { signal } : {}),
    }).then((listed) => {
      // 1: no such key. Anything else leaves the drivers unknown, so nothing runs.
      if (listed.code !== 0 && listed.code !== 1) throw new Error(`git config failed: ${listed.stderr.trim() || `exit ${listed.code}`}`);
      return filterOverrides(listed.stdout);
    });
    return this.#filters;
  }

  async run(args: readonly string[], signal?: AbortSignal): Promise<GitResult> {
    const filters = await this.#filterArgs(signal);
    return runNeutralGit([...filters, ...args], { ...this.defaults, cwd: this.cwd, ...(signal ? { signal } : {}) });
  }
}

// The workspace's repository as Claude Code on the web sees it: a GitHub remote and a branch it
// can check out (docs/protocol.md section 9). `git` runs as a child process without a shell; nothing
// here fetches or pushes, so "not pushed" is as far as this clone knows.
import { execFile } from 'node:child_process';
import { ClaudeWebError } from './errors';

export interface RemoteRepository {
  host: string;
  owner: string;
  name: string;
}

export interface GitRepositoryInfo extends RemoteRepository {
  /** The repository's top folder. */
  root: string;
  /** The remote used (the branch's upstream remote, else origin, else the first). */
  remoteName: string;
  /** https://host/owner/name: what the session's source points at. */
  httpsUrl: string;
  /** The current branch; undefined on a detached HEAD. */
  branch: string | undefined;
  /** HEAD's commit; undefined in a repository without commits. */
  headSha: string | undefined;
  /** The revision the remote session starts from: the branch, else the commit. */
  revision: string | undefined;
  /** Things the remote will not see (uncommitted changes, unpushed commits), for people. */
  warnings: string[];
}

/** Runs git in `cwd`; resolves stdout, rejects with the exit code. Injectable for tests of failures. */
export type GitRunner = (args: string[], cwd: string) => Promise<string>;

export const runGit: GitRunner = (args, cwd) =>
  new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      {
        cwd,
        timeout: 15_000,
        maxBuffer: 4 << 20,
        encoding: 'utf8',
        // Never prompt for credentials or open an editor: this runs behind a UI.
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
      },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    );
  });

/**
 * host/owner/name from a remote URL in any usual form: https://host/owner/name(.git),
 * ssh://[user@]host[:port]/owner/name(.git), git://…, scp-like [user@]host:owner/name(.git).
 * Credentials in a URL are dropped. Undefined when the URL is a local path or has no owner/name.
 */
export function parseRemoteUrl(url: string): RemoteRepository | undefined {
  const text = url.trim();
  let host: string;
  let path: string;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text);
  if (scheme) {
    if (!['https', 'http', 'ssh', 'git', 'git+ssh', 'ssh+git'].includes(scheme[1]!.toLowerCase())) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      return undefined;
    }
    host = parsed.hostname;
    path = decodeURIComponent(parsed.pathname);
  } else {
    // scp-like: [user@]host:path, where host has no slash (else it is a local path).
    const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.+)$/.exec(text);
    if (!scp) return undefined;
    host = scp[1]!;
    path = scp[2]!;
  }
  const parts = path
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '')
    .split('/');
  if (parts.length !== 2) return undefined;
  const [owner, name] = parts as [string, string];
  if (!host || !owner || !name) return undefined;
  return { host: host.toLowerCase(), owner, name };
}

/** The URL as a person may see it, without any user:password@ part. */
export function redactRemoteUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]+@/i, '$1');
}

/** `ssh -G -- <target>`'s output (the effective client config), or undefined when it gave none. */
export type SshConfigReader = (target: string) => Promise<string | undefined>;

export const readSshConfig: SshConfigReader = (target) =>
  new Promise((resolve) => {
    const child = execFile('ssh', ['-G', '--', target], { timeout: 3_000, maxBuffer: 1 << 20, encoding: 'utf8' }, (err, stdout) =>
      resolve(err ? undefined : stdout),
    );
    child.stdin?.end();
  });

/** Host names that are GitHub's ssh front for github.com. */
const SSH_HOST_ALIASES: ReadonlyMap<string, string> = new Map([['ssh.github.com', 'github.com']]);

/**
 * An ssh remote whose host is an alias (`git@github.com-work:owner/repo`) resolved the way ssh
 * resolves it, with `ssh -G`: its `hostname` line. Only when git uses plain ssh (no
 * GIT_SSH_COMMAND, GIT_SSH or core.sshCommand), as Claude Code does.
 */
export async function resolveSshAlias(url: string, ssh: SshConfigReader, usesOtherSsh: boolean): Promise<RemoteRepository | undefined> {
  const scp = /^((?:[\w.-]+@)?([\w.-]+)):([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/.exec(url.trim());
  const sshUrl = /^ssh:\/\/((?:[\w.-]+@)?([\w.-]+))(?::\d{1,5})?\/([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/.exec(url.trim());
  const match = scp ?? sshUrl;
  if (!match || usesOtherSsh) return undefined;
  const [, target, , owner, name] = match as unknown as [string, string, string, string, string];
  const out = await ssh(target);
  const host = out ? /^hostname (\S+)/m.exec(out)?.[1]?.toLowerCase() : undefined;
  if (!host) return undefined;
  return { host: SSH_HOST_ALIASES.get(host) ?? host, owner, name };
}

export interface DetectOptions {
  git?: GitRunner;
  ssh?: SshConfigReader;
}

/**
 * The repository at `folder`. Throws ClaudeWebError not_git_repository or no_github_remote;
 * what the remote will not see becomes a warning, not a failure.
 */
export async function detectGitRepository(folder: string, options: DetectOptions = {}): Promise<GitRepositoryInfo> {
  const git = options.git ?? runGit;
  const tryGit = async (args: string[]): Promise<string | undefined> => {
    try {
      return (await git(args, folder)).trim();
    } catch {
      return undefined;
    }
  };

  let root: string;
  try {
    root = (await git(['rev-parse', '--show-toplevel'], folder)).trim();
  } catch (err) {
    const missingGit = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new ClaudeWebError(
      'not_git_repository',
      missingGit
        ? `Claude Code on the web plans on a copy of your GitHub repository, but git could not be run here (is it installed and on PATH?).`
        : `${folder} is not a git repository. Claude Code on the web plans on a copy of your GitHub repository: open a folder cloned from GitHub, then choose Retry.`,
      { cause: err },
    );
  }

  const branch = await tryGit(['symbolic-ref', '--quiet', '--short', 'HEAD']);
  const headSha = await tryGit(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  const remotes = ((await tryGit(['remote'])) ?? '')
    .split('\n')
    .map((r) => r.trim())
    .filter(Boolean);
  const upstreamRemote = branch ? await tryGit(['config', '--get', `branch.${branch}.remote`]) : undefined;
  const remoteName =
    (upstreamRemote && remotes.includes(upstreamRemote) ? upstreamRemote : undefined) ??
    (remotes.includes('origin') ? 'origin' : remotes[0]);
  if (!remoteName) {
    throw new ClaudeWebError(
      'no_github_remote',
      `The repository ${root} has no remote. Claude Code on the web works on GitHub repositories: push it to GitHub (git remote add origin https://github.com/OWNER/REPO.git && git push -u origin HEAD), then choose Retry.`,
    );
  }
  // insteadOf rewriting can hide GitHub either way (a `gh:` shorthand expands to GitHub; a GitHub
  // URL may be mirrored elsewhere), so the expanded URL and the configured one both count.
  const candidates = [
    (await tryGit(['remote', 'get-url', remoteName])) ?? '',
    (await tryGit(['config', '--get', `remote.${remoteName}.url`])) ?? '',
  ];
  const remoteUrl = candidates.find((url) => parseRemoteUrl(url)?.host === 'github.com') ?? candidates[0] ?? '';
  let parsed = parseRemoteUrl(remoteUrl);
  let aliasNote: string | undefined;
  if (parsed && parsed.host !== 'github.com') {
    const usesOtherSsh =
      process.env.GIT_SSH_COMMAND !== undefined ||
      process.env.GIT_SSH !== undefined ||
      (await tryGit(['config', '--get', 'core.sshCommand'])) !== undefined;
    const resolved = await resolveSshAlias(remoteUrl, options.ssh ?? readSshConfig, usesOtherSsh);
    if (resolved?.host === 'github.com') {
      aliasNote = `The remote names the host "${parsed.host}"; your SSH configuration points it at github.com, so the session starts from github.com/${resolved.owner}/${resolved.name}.`;
      parsed = resolved;
    }
  }
  if (!parsed || parsed.host !== 'github.com') {
    const where = parsed ? `${parsed.host}, not github.com` : `"${redactRemoteUrl(remoteUrl)}", which is not a GitHub repository URL`;
    throw new ClaudeWebError(
      'no_github_remote',
      `The repository's remote "${remoteName}" points to ${where}. Claude Code on the web works on GitHub repositories: add a GitHub remote, then choose Retry.`,
    );
  }

  const warnings: string[] = aliasNote ? [aliasNote] : [];
  const changes = ((await tryGit(['status', '--porcelain', '--untracked-files=normal'])) ?? '').split('\n').filter(Boolean).length;
  if (changes > 0) {
    warnings.push(
      `${changes} changed file${changes === 1 ? '' : 's'} not committed and pushed: the remote session will not see ${changes === 1 ? 'it' : 'them'}.`,
    );
  }
  if (!headSha) {
    warnings.push('The repository has no commits yet: the remote session starts from what GitHub has.');
  } else if (!branch) {
    warnings.push(`HEAD is detached: the remote session starts from commit ${headSha.slice(0, 12)}, which must be on GitHub.`);
  } else {
    const upstream =
      (await tryGit(['rev-parse', '--abbrev-ref', '--symbolic-full-name', `${branch}@{upstream}`])) ??
      ((await tryGit(['rev-parse', '--verify', '--quiet', `refs/remotes/${remoteName}/${branch}`]))
        ? `${remoteName}/${branch}`
        : undefined);
    if (!upstream) {
      warnings.push(
        `The branch ${branch} is not on ${remoteName} (as far as this clone knows): push it (git push -u ${remoteName} ${branch}) or the remote session cannot start from it.`,
      );
    } else {
      const ahead = Number((await tryGit(['rev-list', '--count', `${upstream}..HEAD`])) ?? '0');
      if (ahead > 0)
        warnings.push(
          `${ahead} local commit${ahead === 1 ? '' : 's'} on ${branch} not pushed to ${upstream}: the remote session will not see ${ahead === 1 ? 'it' : 'them'}.`,
        );
    }
  }

  return {
    ...parsed,
    root,
    remoteName,
    httpsUrl: `https://${parsed.host}/${parsed.owner}/${parsed.name}`,
    branch,
    headSha,
    revision: branch ?? headSha,
    warnings,
  };
}

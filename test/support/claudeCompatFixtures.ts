// Fixtures for claude-web tests: a temporary Claude Code home (credentials and global config the
// way Claude Code writes them) and a real temporary git repository with a GitHub remote.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { strict as assert } from 'node:assert';
import { createClaudeWebBackend, type ClaudeWebBackend } from '../../src/client/claudeWeb/backend';
import { setPlanModeEvent, userMessageEvent } from '../../src/core/protocol';

const exec = promisify(execFile);

export const SESSIONS_SCOPE = 'user:sessions:claude_code';

export interface ClaudeHome {
  root: string;
  configDir: string;
  homeDir: string;
  credentialsFile: string;
  /** The env a backend gets: CLAUDE_CONFIG_DIR only (no CLAUDE_CODE_OAUTH_TOKEN from the machine). */
  env: Record<string, string>;
  writeCredentials(oauth: Partial<OauthFields> | null): Promise<void>;
  writeGlobalConfig(organizationUuid: string | undefined): Promise<void>;
  /** Content and mtime now, to prove later that nothing wrote the file. */
  snapshot(): Promise<{ content: string; mtimeMs: number }>;
  remove(): Promise<void>;
}

export interface OauthFields {
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
  scopes: string[];
  subscriptionType: string;
}

export async function makeClaudeHome(oauth: Partial<OauthFields> | null, organizationUuid?: string): Promise<ClaudeHome> {
  const root = await mkdtemp(join(tmpdir(), 'ultraplan-claude-home-'));
  const configDir = join(root, 'config');
  const homeDir = join(root, 'home');
  await mkdir(configDir);
  await mkdir(homeDir);
  const credentialsFile = join(configDir, '.credentials.json');
  const home: ClaudeHome = {
    root,
    configDir,
    homeDir,
    credentialsFile,
    env: { CLAUDE_CONFIG_DIR: configDir },
    async writeCredentials(fields) {
      if (fields === null) {
        await rm(credentialsFile, { force: true });
        return;
      }
      const body = {
        claudeAiOauth: {
          accessToken: 'token-valid',
          refreshToken: 'refresh-secret',
          expiresAt: Date.now() + 3600_000,
          scopes: ['user:inference', 'user:profile', SESSIONS_SCOPE],
          subscriptionType: 'max',
          ...fields,
        },
      };
      await writeFile(credentialsFile, JSON.stringify(body), { mode: 0o600 });
      // An old mtime, so a write by us within the same second would still show.
      const old = new Date(Date.now() - 86_400_000);
      await utimes(credentialsFile, old, old);
    },
    async writeGlobalConfig(org) {
      await writeFile(
        join(configDir, '.claude.json'),
        JSON.stringify(org ? { oauthAccount: { organizationUuid: org, emailAddress: 'ada@example.com' } } : { numStartups: 1 }),
      );
    },
    async snapshot() {
      return { content: await readFile(credentialsFile, 'utf8'), mtimeMs: (await stat(credentialsFile)).mtimeMs };
    },
    remove: () => rm(root, { recursive: true, force: true }),
  };
  await home.writeCredentials(oauth);
  if (organizationUuid !== undefined) await home.writeGlobalConfig(organizationUuid);
  return home;
}

export async function assertUntouched(home: ClaudeHome, before: { content: string; mtimeMs: number }): Promise<void> {
  const after = await home.snapshot();
  assert.equal(after.content, before.content, 'the credentials file content changed');
  assert.equal(after.mtimeMs, before.mtimeMs, 'the credentials file mtime changed');
}

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec(
    'git',
    ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args],
    {
      cwd,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
    },
  );
  return stdout.trim();
}

/** A repository with one commit on main; `remote` becomes origin, marked pushed unless told. */
export async function makeGitRepo(remote: string | undefined, options: { pushed?: boolean } = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ultraplan-claude-repo-'));
  await git(dir, 'init', '-q', '-b', 'main');
  await writeFile(join(dir, 'README.md'), '# widgets\n');
  await git(dir, 'add', 'README.md');
  await git(dir, 'commit', '-q', '-m', 'first');
  if (remote) {
    await git(dir, 'remote', 'add', 'origin', remote);
    if (options.pushed ?? true) {
      await git(dir, 'update-ref', 'refs/remotes/origin/main', 'HEAD');
      await git(dir, 'config', 'branch.main.remote', 'origin');
      await git(dir, 'config', 'branch.main.merge', 'refs/heads/main');
    }
  }
  return dir;
}

/**
 * The claude-web backend on `home`'s login against `baseUrl` (the Claude-compatibility server),
 * for the clone `workspaceFolder`, and a session it launched in plan mode with `prompt`.
 */
export async function launchClaudeWebSession(
  home: ClaudeHome,
  baseUrl: string,
  workspaceFolder: string,
  title: string,
  prompt: string,
): Promise<{ backend: ClaudeWebBackend; sessionId: string }> {
  const { backend } = await createClaudeWebBackend({
    env: home.env,
    homeDir: home.homeDir,
    platform: 'linux',
    baseUrl,
    workspaceFolder,
    log: () => undefined,
    archiveRetryMs: [20, 40],
    stream: { initialBackoffMs: 20, maxBackoffMs: 100 },
  });
  const session = await backend.createSession({
    title,
    events: [
      { type: 'event', data: setPlanModeEvent('set-mode-test') },
      { type: 'event', data: userMessageEvent(prompt) },
    ],
  });
  return { backend, sessionId: session.id };
}

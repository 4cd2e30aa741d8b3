import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  keychainService,
  readClaudeCredentials,
  secureStorageDir,
  SESSIONS_SCOPE,
  type CredentialsOptions,
} from '../../src/client/claudeWeb/credentials';
import { ClaudeWebError } from '../../src/client/claudeWeb/errors';
import { readOrganizationFromConfig } from '../../src/client/claudeWeb/organization';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const TOKEN = 'sk-ant-oat01-SECRET-access-token-value';
const REFRESH = 'sk-ant-ort01-SECRET-refresh-token-value';

function credentialsJson(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    claudeAiOauth: {
      accessToken: TOKEN,
      refreshToken: REFRESH,
      expiresAt: NOW + 3600_000,
      scopes: ['user:inference', 'user:profile', SESSIONS_SCOPE],
      subscriptionType: 'max',
      ...overrides,
    },
  });
}

async function expectFailure(options: CredentialsOptions, reason: string, messagePattern: RegExp): Promise<ClaudeWebError> {
  try {
    await readClaudeCredentials(options);
  } catch (err) {
    assert.ok(err instanceof ClaudeWebError, `expected ClaudeWebError, got ${String(err)}`);
    assert.equal(err.reason, reason);
    assert.match(err.message, messagePattern);
    assert.equal(err.remedy, 'run_claude');
    assert.doesNotMatch(err.message, /SECRET/, 'a token reached the message');
    return err;
  }
  assert.fail(`expected a ${reason} failure`);
}

describe('claude-web credentials (a temporary CLAUDE_CONFIG_DIR)', () => {
  let dir: string;
  let configDir: string;
  let home: string;
  let file: string;
  const pinnedMtime = new Date('2025-01-02T03:04:05Z');

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ultraplan-claude-creds-'));
    configDir = join(dir, 'config');
    home = join(dir, 'home');
    await mkdir(configDir);
    await mkdir(home);
    file = join(configDir, '.credentials.json');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Writes the file with mode 0600 and a fixed mtime, reads it through `run`, checks it is untouched. */
  async function withUntouchedFile<T>(content: string, run: () => Promise<T>): Promise<T> {
    await writeFile(file, content, { mode: 0o600 });
    await chmod(file, 0o600);
    await utimes(file, pinnedMtime, pinnedMtime);
    const before = await stat(file);
    try {
      return await run();
    } finally {
      const after = await stat(file);
      assert.equal(await readFile(file, 'utf8'), content, 'the credentials file content changed');
      assert.equal(after.mtimeMs, before.mtimeMs, 'the credentials file mtime changed');
      assert.equal(after.mode & 0o777, 0o600, 'the credentials file mode changed');
    }
  }

  const options = (): CredentialsOptions => ({ env: { CLAUDE_CONFIG_DIR: configDir }, homeDir: home, platform: 'linux', now: () => NOW });

  it('reads a valid login from $CLAUDE_CONFIG_DIR/.credentials.json without modifying it', async () => {
    const creds = await withUntouchedFile(credentialsJson(), () => readClaudeCredentials(options()));
    assert.equal(creds.accessToken, TOKEN);
    assert.equal(creds.source, 'file');
    assert.equal(creds.from, file);
    assert.equal(creds.subscriptionType, 'max');
    assert.equal(creds.expiresSoon, false);
    assert.equal(creds.expiresAt, NOW + 3600_000);
  });

  it('an explicit configDir wins over CLAUDE_CONFIG_DIR, and the default is ~/.claude', async () => {
    await writeFile(file, credentialsJson());
    const other = join(dir, 'elsewhere');
    await mkdir(other);
    await expectFailure({ ...options(), configDir: other }, 'not_logged_in', /elsewhere/);
    await mkdir(join(home, '.claude'));
    await writeFile(join(home, '.claude', '.credentials.json'), credentialsJson({ accessToken: 'home-token' }));
    const fromHome = await readClaudeCredentials({ env: {}, homeDir: home, platform: 'linux', now: () => NOW });
    assert.equal(fromHome.accessToken, 'home-token');
  });

  it('a token within 5 minutes of expiry is still used, and flagged', async () => {
    const creds = await withUntouchedFile(credentialsJson({ expiresAt: NOW + 60_000 }), () => readClaudeCredentials(options()));
    assert.equal(creds.expiresSoon, true);
  });

  it('an expired token is refused with a message to run claude (never refreshed)', async () => {
    await withUntouchedFile(credentialsJson({ expiresAt: NOW - 30 * 60_000 }), () =>
      expectFailure(options(), 'token_expired', /expired 30 min ago.*Run `claude` once/),
    );
  });

  it('a missing file means not logged in', async () => {
    await expectFailure(options(), 'not_logged_in', /not logged in with a Claude\.ai account.*\.credentials\.json.*Run `claude`/);
  });

  it('a file without claudeAiOauth (an API-key login) means not logged in with a Claude.ai account', async () => {
    await withUntouchedFile(JSON.stringify({ mcpOAuth: {} }), () =>
      expectFailure(options(), 'not_logged_in', /not logged in with a Claude\.ai account.*API key/),
    );
  });

  it('malformed JSON is reported without quoting the file (it holds the token)', async () => {
    const broken = `{"claudeAiOauth": {"accessToken": "${TOKEN}", `;
    await withUntouchedFile(broken, () => expectFailure(options(), 'credentials_malformed', /is not valid JSON/));
  });

  it('a field of the wrong type is reported by its path only', async () => {
    await withUntouchedFile(credentialsJson({ expiresAt: 'tomorrow' }), () =>
      expectFailure(options(), 'credentials_malformed', /field claudeAiOauth\.expiresAt/),
    );
  });

  it('a login without user:sessions:claude_code is refused with the fix', async () => {
    await withUntouchedFile(credentialsJson({ scopes: ['org:create_api_key', 'user:profile'] }), () =>
      expectFailure(options(), 'missing_scope', /user:sessions:claude_code.*\/login with your Claude\.ai account/),
    );
  });

  it('CLAUDE_CODE_OAUTH_TOKEN is not a sessions login: the stored login is used; without one, why and what to do', async () => {
    await writeFile(file, credentialsJson({ accessToken: 'file-token' }));
    const stored = await readClaudeCredentials({
      ...options(),
      env: { CLAUDE_CONFIG_DIR: configDir, CLAUDE_CODE_OAUTH_TOKEN: 'env-token' },
    });
    assert.equal(stored.accessToken, 'file-token');
    assert.equal(stored.source, 'file');
    await rm(file);
    await expectFailure(
      { ...options(), env: { CLAUDE_CONFIG_DIR: configDir, CLAUDE_CODE_OAUTH_TOKEN: 'env-token' } },
      'missing_scope',
      /CLAUDE_CODE_OAUTH_TOKEN .* carries only the user:inference scope, so it cannot start or follow cloud sessions.*\/login with your Claude\.ai account/,
    );
  });

  it('CLAUDE_CODE_OAUTH_TOKEN with CLAUDE_CODE_OAUTH_SCOPES naming the sessions scope is used, with no expiry', async () => {
    const creds = await readClaudeCredentials({
      ...options(),
      env: {
        CLAUDE_CONFIG_DIR: configDir,
        CLAUDE_CODE_OAUTH_TOKEN: ' env-token ',
        CLAUDE_CODE_OAUTH_SCOPES: 'user:inference user:sessions:claude_code',
      },
    });
    assert.equal(creds.accessToken, 'env-token');
    assert.equal(creds.source, 'env');
    assert.equal(creds.expiresAt, undefined);
  });

  it('CLAUDE_SECURESTORAGE_CONFIG_DIR holds the login; the Keychain service takes the folder suffix', async () => {
    const secure = join(dir, 'secure');
    await mkdir(secure);
    await writeFile(join(secure, '.credentials.json'), credentialsJson({ accessToken: 'secure-token' }));
    const env = { CLAUDE_CONFIG_DIR: configDir, CLAUDE_SECURESTORAGE_CONFIG_DIR: secure };
    assert.equal(secureStorageDir({ env }), secure);
    assert.equal((await readClaudeCredentials({ ...options(), env })).accessToken, 'secure-token');
    const suffix = (folder: string) => createHash('sha256').update(folder).digest('hex').slice(0, 8);
    assert.equal(keychainService({ env }), `Claude Code-credentials-${suffix(secure)}`);
    assert.equal(keychainService({ env: { CLAUDE_CONFIG_DIR: configDir } }), `Claude Code-credentials-${suffix(configDir)}`);
    assert.equal(keychainService({ env: {} }), 'Claude Code-credentials');
    assert.equal(
      keychainService({ env: { CLAUDE_CONFIG_DIR: configDir, CLAUDE_SECURESTORAGE_CONFIG_DIR: '' } }),
      'Claude Code-credentials',
    );
    const services: string[] = [];
    await readClaudeCredentials({
      ...options(),
      env: { ...env, USER: 'ada' },
      platform: 'darwin',
      readKeychain: async (service) => (services.push(service), undefined),
    });
    assert.deepEqual(services, [`Claude Code-credentials-${suffix(secure)}`]);
  });

  it('on macOS the Keychain entry is read first, for the user, and the file is the fallback', async () => {
    await writeFile(file, credentialsJson({ accessToken: 'file-token' }));
    const accounts: string[] = [];
    const fromKeychain = await readClaudeCredentials({
      ...options(),
      env: { CLAUDE_CONFIG_DIR: configDir, USER: 'ada' },
      platform: 'darwin',
      readKeychain: async (_service, account) => {
        accounts.push(account);
        return credentialsJson({ accessToken: 'keychain-token' });
      },
    });
    assert.equal(fromKeychain.accessToken, 'keychain-token');
    assert.equal(fromKeychain.source, 'keychain');
    assert.deepEqual(accounts, ['ada']);
    const fallback = await readClaudeCredentials({ ...options(), platform: 'darwin', readKeychain: async () => undefined });
    assert.equal(fallback.accessToken, 'file-token');
  });

  it('the default Keychain reader runs `security find-generic-password` without a shell (a fake `security` on PATH)', async () => {
    const bin = join(dir, 'bin');
    await mkdir(bin);
    const argsFile = join(dir, 'security-args');
    const entryFile = join(dir, 'entry.json');
    const script = `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > '${argsFile}'\n[ -f '${entryFile}' ] || exit 44\ncat '${entryFile}'\n`;
    await writeFile(join(bin, 'security'), script, { mode: 0o755 });
    const savedPath = process.env.PATH;
    process.env.PATH = `${bin}:${savedPath ?? ''}`;
    try {
      await writeFile(file, credentialsJson({ accessToken: 'file-token' }));
      // No entry (exit 44): the file is the fallback.
      // A user name that is not a plain name is written as claude-code-user, as Claude Code does.
      const fallback = await readClaudeCredentials({
        ...options(),
        env: { CLAUDE_CONFIG_DIR: configDir, USER: 'ada lovelace' },
        platform: 'darwin',
      });
      assert.equal(fallback.accessToken, 'file-token');
      assert.deepEqual((await readFile(argsFile, 'utf8')).trim().split('\n'), [
        'find-generic-password',
        '-s',
        keychainService({ env: { CLAUDE_CONFIG_DIR: configDir } }),
        '-a',
        'claude-code-user',
        '-w',
      ]);
      await writeFile(entryFile, credentialsJson({ accessToken: 'keychain-token' }));
      const fromKeychain = await readClaudeCredentials({
        ...options(),
        env: { CLAUDE_CONFIG_DIR: configDir, USER: 'ada' },
        platform: 'darwin',
      });
      assert.equal(fromKeychain.accessToken, 'keychain-token');
      assert.equal(fromKeychain.source, 'keychain');
    } finally {
      process.env.PATH = savedPath;
    }
  });

  it('the Keychain is never consulted off macOS', async () => {
    await writeFile(file, credentialsJson());
    await readClaudeCredentials({ ...options(), readKeychain: async () => assert.fail('Keychain read on linux') });
  });

  it('re-reads the file on every call, so a login refreshed by Claude Code is picked up', async () => {
    await writeFile(file, credentialsJson({ expiresAt: NOW - 1 }));
    await expectFailure(options(), 'token_expired', /expired/);
    await writeFile(file, credentialsJson({ accessToken: 'refreshed', expiresAt: NOW + 3600_000 }));
    assert.equal((await readClaudeCredentials(options())).accessToken, 'refreshed');
  });

  describe('organization from the global config', () => {
    it('reads oauthAccount.organizationUuid from $CLAUDE_CONFIG_DIR/.claude.json first', async () => {
      await writeFile(join(configDir, '.claude.json'), JSON.stringify({ oauthAccount: { organizationUuid: 'org-config' } }));
      await writeFile(join(home, '.claude.json'), JSON.stringify({ oauthAccount: { organizationUuid: 'org-home' } }));
      assert.equal(await readOrganizationFromConfig({ env: { CLAUDE_CONFIG_DIR: configDir }, homeDir: home }), 'org-config');
    });

    it('falls back to ~/.claude.json, and gives undefined when neither says (then the profile call answers)', async () => {
      const lines: string[] = [];
      await writeFile(join(configDir, '.claude.json'), '{not json');
      await writeFile(join(home, '.claude.json'), JSON.stringify({ oauthAccount: { organizationUuid: 'org-home' } }));
      assert.equal(
        await readOrganizationFromConfig({ env: { CLAUDE_CONFIG_DIR: configDir }, homeDir: home, log: (l) => lines.push(l) }),
        'org-home',
      );
      assert.match(lines.join('\n'), /not valid JSON/);
      await writeFile(join(home, '.claude.json'), JSON.stringify({ numStartups: 3 }));
      assert.equal(await readOrganizationFromConfig({ env: { CLAUDE_CONFIG_DIR: configDir }, homeDir: home }), undefined);
    });
  });
});

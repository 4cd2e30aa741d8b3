import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ClaudeWebError } from '../../src/client/claudeWeb/errors';
import { detectGitRepository, parseRemoteUrl, redactRemoteUrl } from '../../src/client/claudeWeb/git';

const exec = promisify(execFile);

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec(
    'git',
    ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args],
    {
      cwd,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
    },
  );
  return stdout.trim();
}

async function expectReason(promise: Promise<unknown>, reason: string, pattern: RegExp): Promise<void> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ClaudeWebError, String(err));
    assert.equal(err.reason, reason);
    assert.match(err.message, pattern);
    return;
  }
  assert.fail(`expected ${reason}`);
}

describe('claude-web git remote parsing', () => {
  const cases: Array<[string, string | undefined]> = [
    ['git@github.com:acme/widgets.git', 'github.com/acme/widgets'],
    ['git@github.com:acme/widgets', 'github.com/acme/widgets'],
    ['ssh://git@github.com/acme/widgets.git', 'github.com/acme/widgets'],
    ['ssh://git@github.com:22/acme/widgets.git', 'github.com/acme/widgets'],
    ['https://github.com/acme/widgets.git', 'github.com/acme/widgets'],
    ['https://github.com/acme/widgets/', 'github.com/acme/widgets'],
    ['https://user:ghp_secret@GitHub.com/acme/widgets.git', 'github.com/acme/widgets'],
    ['git://github.com/acme/widgets.git', 'github.com/acme/widgets'],
    ['git@gitlab.com:acme/widgets.git', 'gitlab.com/acme/widgets'],
    ['/srv/git/widgets.git', undefined],
    ['file:///srv/git/acme/widgets.git', undefined],
    ['https://github.com/acme', undefined],
    ['https://gitlab.com/group/sub/widgets.git', undefined],
  ];
  for (const [url, expected] of cases) {
    it(`${url} -> ${expected ?? 'not a repository URL'}`, () => {
      const parsed = parseRemoteUrl(url);
      assert.equal(parsed && `${parsed.host}/${parsed.owner}/${parsed.name}`, expected);
    });
  }

  it('redacts credentials in URLs shown to people', () => {
    assert.equal(redactRemoteUrl('https://user:ghp_secret@github.com/a/b.git'), 'https://github.com/a/b.git');
    assert.equal(redactRemoteUrl('git@github.com:a/b.git'), 'git@github.com:a/b.git');
  });
});

describe('claude-web git detection (real temporary repositories)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ultraplan-claude-git-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function repoWithCommit(): Promise<void> {
    await git(dir, 'init', '-q', '-b', 'main');
    await writeFile(join(dir, 'README.md'), '# widgets\n');
    await git(dir, 'add', 'README.md');
    await git(dir, 'commit', '-q', '-m', 'first');
  }

  /** Marks the branch as pushed: a remote-tracking ref at HEAD and an upstream, without a network. */
  async function markPushed(remote = 'origin', branch = 'main'): Promise<void> {
    await git(dir, 'update-ref', `refs/remotes/${remote}/${branch}`, 'HEAD');
    await git(dir, 'config', `branch.${branch}.remote`, remote);
    await git(dir, 'config', `branch.${branch}.merge`, `refs/heads/${branch}`);
  }

  it('a folder that is not a repository fails with not_git_repository', async () => {
    await expectReason(detectGitRepository(dir), 'not_git_repository', /is not a git repository.*GitHub/);
  });

  it('a repository without a remote fails with no_github_remote', async () => {
    await repoWithCommit();
    await expectReason(detectGitRepository(dir), 'no_github_remote', /has no remote.*push it to GitHub/);
  });

  it('a remote that is not GitHub fails with no_github_remote naming the host', async () => {
    await repoWithCommit();
    await git(dir, 'remote', 'add', 'origin', 'git@gitlab.com:acme/widgets.git');
    await expectReason(detectGitRepository(dir), 'no_github_remote', /"origin" points to gitlab\.com, not github\.com/);
  });

  it('a local-path remote fails with no_github_remote', async () => {
    await repoWithCommit();
    await git(dir, 'remote', 'add', 'origin', '/srv/git/widgets.git');
    await expectReason(detectGitRepository(dir), 'no_github_remote', /not a GitHub repository URL/);
  });

  it('an ssh GitHub remote, pushed and clean: host/owner/name, branch, no warnings', async () => {
    await repoWithCommit();
    await git(dir, 'remote', 'add', 'origin', 'git@github.com:acme/widgets.git');
    await markPushed();
    const info = await detectGitRepository(dir);
    assert.equal(info.host, 'github.com');
    assert.equal(info.owner, 'acme');
    assert.equal(info.name, 'widgets');
    assert.equal(info.httpsUrl, 'https://github.com/acme/widgets');
    assert.equal(info.branch, 'main');
    assert.equal(info.revision, 'main');
    assert.equal(info.remoteName, 'origin');
    assert.match(info.headSha ?? '', /^[0-9a-f]{40}$/);
    assert.deepEqual(info.warnings, []);
  });

  it('an https remote, from a subfolder of the repository', async () => {
    await repoWithCommit();
    await git(dir, 'remote', 'add', 'origin', 'https://github.com/acme/widgets.git');
    await markPushed();
    await exec('mkdir', [join(dir, 'src')]);
    const info = await detectGitRepository(join(dir, 'src'));
    assert.equal(info.httpsUrl, 'https://github.com/acme/widgets');
  });

  it('warns (does not fail) about an unpushed commit and uncommitted changes', async () => {
    await repoWithCommit();
    await git(dir, 'remote', 'add', 'origin', 'https://github.com/acme/widgets.git');
    await markPushed();
    await writeFile(join(dir, 'a.txt'), 'a\n');
    await git(dir, 'add', 'a.txt');
    await git(dir, 'commit', '-q', '-m', 'local only');
    await writeFile(join(dir, 'README.md'), '# changed\n');
    await writeFile(join(dir, 'new.txt'), 'new\n');
    const info = await detectGitRepository(dir);
    assert.equal(info.warnings.length, 2, info.warnings.join('\n'));
    assert.match(info.warnings.join('\n'), /2 changed files not committed and pushed/);
    assert.match(info.warnings.join('\n'), /1 local commit on main not pushed to origin\/main/);
  });

  it('warns when the branch is not on the remote at all', async () => {
    await repoWithCommit();
    await git(dir, 'remote', 'add', 'origin', 'https://github.com/acme/widgets.git');
    await git(dir, 'checkout', '-q', '-b', 'feature/x');
    const info = await detectGitRepository(dir);
    assert.equal(info.branch, 'feature/x');
    assert.match(info.warnings.join('\n'), /branch feature\/x is not on origin.*git push -u origin feature\/x/);
  });

  it("prefers the branch's upstream remote over origin", async () => {
    await repoWithCommit();
    await git(dir, 'remote', 'add', 'origin', 'https://github.com/someone/widgets.git');
    await git(dir, 'remote', 'add', 'upstream', 'git@github.com:acme/widgets.git');
    await markPushed('upstream');
    const info = await detectGitRepository(dir);
    assert.equal(info.remoteName, 'upstream');
    assert.equal(info.owner, 'acme');
  });

  it('a detached HEAD starts from the commit, with a warning', async () => {
    await repoWithCommit();
    await git(dir, 'remote', 'add', 'origin', 'https://github.com/acme/widgets.git');
    const sha = await git(dir, 'rev-parse', 'HEAD');
    await git(dir, 'checkout', '-q', '--detach');
    const info = await detectGitRepository(dir);
    assert.equal(info.branch, undefined);
    assert.equal(info.revision, sha);
    assert.match(info.warnings.join('\n'), /HEAD is detached/);
  });
});

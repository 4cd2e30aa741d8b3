// A Claude Code on the web session's changes: its claude/<slug> branch against the revision it
// started from, fetched from the clone's GitHub remote (here a bare repository on disk that the
// clone's own `url.<path>.insteadOf` stands in for github.com, as a mirror would) into refs of our
// own. Real git throughout; the person's branches, index and working tree stay as they were.
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BranchChangesError, readBranchChanges, sessionOutcome } from '../../src/client/claudeWeb/branchChanges';
import { sessionContextFor } from '../../src/client/claudeWeb/launch';

const exec = promisify(execFile);
const BRANCH = 'claude/flip-the-flag-abc12';

async function git(cwd: string, ...args: string[]): Promise<string> {
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

const context = (branch = BRANCH, revision: string | undefined = 'main') =>
  sessionContextFor({ httpsUrl: 'https://github.com/acme/app', owner: 'acme', name: 'app', revision }, branch);

describe('the changes of a Claude Code on the web session: its branch against where it started', function () {
  this.timeout(30_000);
  let dir: string;
  let clone: string;
  let origin: string;
  let startedAt: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ultraplan-branch-'));
    origin = join(dir, 'origin.git');
    const work = join(dir, 'remote-work');
    clone = join(dir, 'clone');
    await git(dir, 'init', '--quiet', '--bare', '--initial-branch=main', origin);
    await git(dir, 'init', '--quiet', '--initial-branch=main', work);
    await writeFile(join(work, 'app.ts'), 'export const original = true;\n');
    await writeFile(join(work, 'old.md'), 'to be removed\n');
    await git(work, 'add', '.');
    await git(work, 'commit', '--quiet', '-m', 'start');
    startedAt = await git(work, 'rev-parse', 'HEAD');
    await git(work, 'push', '--quiet', origin, 'main');
    await git(dir, 'clone', '--quiet', origin, clone);
    // The clone names GitHub; git reads the bare repository for it.
    await git(clone, 'remote', 'set-url', 'origin', 'https://github.com/acme/app.git');
    await git(clone, 'config', `url.${origin}.insteadOf`, 'https://github.com/acme/app.git');
    // The session's work: a change, a new file and a deletion on its branch; main moves on after it started.
    await git(work, 'checkout', '--quiet', '-b', BRANCH);
    await writeFile(join(work, 'app.ts'), 'export const original = false;\n');
    await writeFile(join(work, 'why.ts'), 'export const why = "retired";\n');
    await git(work, 'rm', '--quiet', 'old.md');
    await git(work, 'add', '.');
    await git(work, 'commit', '--quiet', '-m', 'flip');
    await git(work, 'push', '--quiet', origin, BRANCH);
    await git(work, 'checkout', '--quiet', 'main');
    await writeFile(join(work, 'later.md'), 'after the session started\n');
    await git(work, 'add', '.');
    await git(work, 'commit', '--quiet', '-m', 'later');
    await git(work, 'push', '--quiet', origin, 'main');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('lists and diffs what the branch changed since it left main, in refs of our own, the clone untouched', async () => {
    const before = await Promise.all([git(clone, 'status', '--porcelain'), git(clone, 'branch', '--all'), git(clone, 'rev-parse', 'HEAD')]);
    const changes = await readBranchChanges(context(), clone);
    assert.equal(changes.base, startedAt, 'the merge base with main, not main as it is now');
    assert.deepEqual(
      [...changes.files].sort((a, b) => a.path.localeCompare(b.path)),
      [
        { path: 'app.ts', status: 'modified' },
        { path: 'old.md', status: 'deleted' },
        { path: 'why.ts', status: 'added' },
      ],
    );
    assert.match(changes.diff, /-export const original = true;\n\+export const original = false;/);
    assert.doesNotMatch(changes.diff, /later\.md/, 'main moving on is not the session’s change');
    assert.equal(changes.head, await git(clone, 'rev-parse', `refs/ultraplan/claude-web/outcome/${BRANCH}`));
    assert.deepEqual(
      await Promise.all([git(clone, 'status', '--porcelain'), git(clone, 'branch', '--all'), git(clone, 'rev-parse', 'HEAD')]),
      before,
    );
  });

  it('starts from the remote’s default branch when the session named no revision', async () => {
    const changes = await readBranchChanges(context(BRANCH, undefined), clone);
    assert.equal(changes.base, startedAt);
    assert.equal(changes.files.length, 3);
  });

  it('a branch not pushed yet, another repository and a hostile branch name each say so', async () => {
    await assert.rejects(readBranchChanges(context('claude/not-pushed-00000'), clone), (err: unknown) => {
      assert.ok(err instanceof BranchChangesError);
      assert.match(err.message, /has not pushed claude\/not-pushed-00000 to github\.com\/acme\/app yet/);
      return true;
    });
    const other = sessionContextFor({ httpsUrl: 'https://github.com/acme/other', owner: 'acme', name: 'other', revision: 'main' }, BRANCH);
    await assert.rejects(
      readBranchChanges(other, clone),
      /worked on github\.com\/acme\/other, and this folder is a clone of github\.com\/acme\/app/,
    );
    for (const branch of ['--upload-pack=touch /tmp/x', 'claude/../../etc', 'a b']) {
      assert.throws(() => sessionOutcome(context(branch)), /names no branch/);
    }
    assert.throws(() => sessionOutcome({}), /names no branch/);
  });

  it('runs none of the clone’s own programs (fsmonitor, filters) while it fetches and diffs', async () => {
    const marker = join(dir, 'ran');
    const hook = join(dir, 'hook.sh');
    await writeFile(hook, `#!/bin/sh\necho ran >> ${marker}\ncat\n`);
    await chmod(hook, 0o755);
    await git(clone, 'config', 'core.fsmonitor', hook);
    await git(clone, 'config', 'filter.evil.clean', hook);
    await git(clone, 'config', 'filter.evil.smudge', hook);
    await git(clone, 'config', 'diff.evil.textconv', hook);
    await writeFile(join(clone, '.gitattributes'), '* filter=evil diff=evil\n');
    const changes = await readBranchChanges(context(), clone);
    assert.equal(changes.files.length, 3);
    const ran = await readFile(marker, 'utf8').catch(() => null);
    assert.equal(ran, null, 'a program of the clone ran');
  });
});

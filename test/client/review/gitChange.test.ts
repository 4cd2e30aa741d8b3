import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { collectChange, ReviewChangeError } from '../../../src/client/review/gitChange';
import { ReviewRepo, git } from '../../support/review/gitRepo';

async function refusal(promise: Promise<unknown>): Promise<ReviewChangeError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ReviewChangeError, String(error));
    return error;
  }
  assert.fail('expected a refusal');
}

describe('collecting the change to review, from a real git repository', function () {
  this.timeout(30_000);
  const repo = new ReviewRepo();
  before(() => repo.open());
  after(() => repo.close());

  it('by default: the branch against its merge-base with main plus staged and unstaged work; the secret withheld; untracked left out', async () => {
    const change = await collectChange(path.join(repo.root, 'src'), { kind: 'branch', includeUntracked: false });
    assert.equal(change.root, repo.root);
    assert.deepEqual(change.files.map((f) => f.path).sort(), ['README.md', 'src/app.ts', 'src/login.ts']);
    assert.deepEqual(change.withheld, ['.env']);
    assert.ok(!change.files.some((f) => f.patch.includes('do-not-send')));
    const app = change.files.find((f) => f.path === 'src/app.ts')!;
    // Line 3 changed and lines 6-9 were added on the branch.
    assert.deepEqual(app.ranges, [
      { start: 3, end: 3 },
      { start: 6, end: 9 },
    ]);
    // The README diff is against main's merge-base, so main's own "Sums prices." commit is not in it as new.
    const readme = change.files.find((f) => f.path === 'README.md')!;
    assert.match(readme.patch, /^-Sums prices\.$/m);
  });

  it('untracked files only when asked', async () => {
    const change = await collectChange(repo.root, { kind: 'branch', includeUntracked: true });
    assert.ok(change.files.some((f) => f.path === 'notes.txt' && f.status === 'added'));
  });

  it('staged only, and a commit range', async () => {
    const staged = await collectChange(repo.root, { kind: 'staged' });
    assert.deepEqual(
      staged.files.map((f) => f.path),
      ['src/login.ts'],
    );
    assert.deepEqual(staged.withheld, ['.env']);
    const range = await collectChange(repo.root, { kind: 'range', from: 'main', to: 'feature' });
    assert.deepEqual(
      range.files.map((f) => f.path),
      ['src/app.ts'],
    );
  });

  it('every side of a range is a commit: a blob (rev:.env) or a tree on either side is refused, and the secret never read', async () => {
    const secrets = new ReviewRepo();
    await secrets.open();
    try {
      git(secrets.root, 'commit', '-qm', 'with the secret');
      for (const [from, to] of [
        ['HEAD:.env', 'HEAD:README.md'],
        ['main', 'HEAD:.env'],
      ]) {
        const error = await refusal(collectChange(secrets.root, { kind: 'range', from: from!, to: to! }));
        assert.equal(error.reason, 'bad_scope');
        assert.doesNotMatch(error.message, /do-not-send/);
      }
      const tree = await refusal(collectChange(secrets.root, { kind: 'range', from: 'main', to: 'HEAD^{tree}' }));
      assert.equal(tree.reason, 'bad_scope');
      assert.match(tree.message, /is not a commit of this repository/);
    } finally {
      await secrets.close();
    }
  });

  it('a secret renamed to a harmless name, and a harmless file renamed to a secret name: both sides withheld', async () => {
    const renames = new ReviewRepo();
    await renames.open();
    try {
      await renames.write('notes/plain.txt', 'nothing secret\n');
      git(renames.root, 'add', 'notes/plain.txt');
      git(renames.root, 'commit', '-qm', 'with the secret');
      git(renames.root, 'checkout', '-qb', 'renames');
      git(renames.root, 'mv', '.env', 'settings.txt');
      git(renames.root, 'mv', 'notes/plain.txt', 'prod.env');
      await renames.write('src/app.ts', '// still reviewed\n');
      git(renames.root, 'commit', '-qam', 'renames');
      const change = await collectChange(renames.root, { kind: 'range', from: 'HEAD~1', to: 'HEAD' });
      assert.deepEqual(change.withheld.sort(), ['.env', 'notes/plain.txt', 'prod.env', 'settings.txt']);
      assert.deepEqual(change.files.map((f) => f.path).sort(), ['README.md', 'src/app.ts']);
      assert.ok(!change.files.some((f) => f.patch.includes('do-not-send') || f.patch.includes('nothing secret')));
    } finally {
      await renames.close();
    }
  });

  it('a change over the limits is refused with its numbers, not cut', async () => {
    const error = await refusal(
      collectChange(repo.root, { kind: 'branch', includeUntracked: false }, { maxFiles: 2, maxChangedLines: 5, maxDiffBytes: 1_000_000 }),
    );
    assert.equal(error.reason, 'too_large');
    assert.match(error.message, /3 files \(limit 2\), \d+ changed lines \(limit 5\)\. Nothing was sent/);
  });

  it('an option-looking revision never reaches git; a folder outside git says so', async () => {
    assert.equal((await refusal(collectChange(repo.root, { kind: 'range', from: '--output=/tmp/pwned', to: 'HEAD' }))).reason, 'bad_scope');
    const plain = await mkdtemp(path.join(tmpdir(), 'ultraplan-no-git-'));
    try {
      assert.equal((await refusal(collectChange(plain, { kind: 'staged' }))).reason, 'not_a_repository');
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });

  it('nothing staged is "nothing to review", and a pull request without gh says gh is needed', async () => {
    const clean = new ReviewRepo();
    await clean.open();
    try {
      git(clean.root, 'reset', '-q');
      assert.equal((await refusal(collectChange(clean.root, { kind: 'staged' }))).reason, 'empty');
      // A PATH with git and no gh, whether or not this machine has gh.
      const bin = await mkdtemp(path.join(tmpdir(), 'ultraplan-no-gh-'));
      await symlink(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), path.join(bin, 'git'));
      const savedPath = process.env.PATH;
      process.env.PATH = bin;
      try {
        const error = await refusal(collectChange(clean.root, { kind: 'pr', number: 7 }));
        assert.equal(error.reason, 'gh_missing');
        assert.equal(
          error.message,
          'Reviewing a pull request needs the GitHub CLI (gh), logged in with `gh auth login`; it is not installed here.',
        );
      } finally {
        process.env.PATH = savedPath;
        await rm(bin, { recursive: true, force: true });
      }
    } finally {
      await clean.close();
    }
  });
});

import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ChangesSinceApprovalSchema } from '../../../src/core/changesSinceApproval';
import { changesSinceApproval, NOT_A_REPOSITORY, recordApproval } from '../../../src/service/changes/approvalSnapshot';
import { git as sh } from '../../support/review/gitRepo';

/** Everything the person keeps in git that a record must leave alone, byte for byte. */
function personalState(repo: string): string {
  return [
    sh(repo, 'status', '--porcelain=v2', '--branch', '--untracked-files=all'),
    sh(repo, 'stash', 'list'),
    sh(repo, 'diff', '--cached'),
    sh(repo, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/stash'),
    sh(repo, 'rev-parse', 'HEAD'),
    sh(repo, 'symbolic-ref', 'HEAD'),
  ].join('\n--\n');
}

describe('approvalSnapshot (real git)', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ultraplan-snapshot-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function repoWithWork(): Promise<string> {
    const repo = path.join(dir, 'repo');
    await fs.mkdir(repo);
    sh(repo, 'init', '-q', '-b', 'main');
    await fs.writeFile(path.join(repo, '.gitignore'), 'build/\n');
    await fs.writeFile(path.join(repo, 'a.txt'), 'one\ntwo\n');
    await fs.writeFile(path.join(repo, 'gone.txt'), 'to be deleted\n');
    await fs.writeFile(path.join(repo, 'kept.txt'), 'unchanged\n');
    sh(repo, 'add', '-A');
    sh(repo, 'commit', '-q', '-m', 'base');
    // What the person has in flight: a staged change, an unstaged one, an untracked file, a stash, a branch.
    await fs.writeFile(path.join(repo, 'kept.txt'), 'stashed\n');
    sh(repo, 'stash', '-q');
    sh(repo, 'branch', 'feature');
    await fs.writeFile(path.join(repo, 'a.txt'), 'one\ntwo\nstaged\n');
    sh(repo, 'add', 'a.txt');
    await fs.writeFile(path.join(repo, 'a.txt'), 'one\ntwo\nstaged\nunstaged\n');
    await fs.writeFile(path.join(repo, 'draft.txt'), 'untracked before approval\n');
    return repo;
  }

  it('records the workspace, and the diff since shows exactly the edit, the new file and the deleted file, the ignored one not', async () => {
    const repo = await repoWithWork();
    const before = personalState(repo);
    const record = await recordApproval(repo, 'session_1');
    assert.equal(record.kind, 'recorded');
    assert.equal(personalState(repo), before, 'recording changed the index, stash, branches or HEAD');
    const commit = (record as { commit: string }).commit;
    assert.equal(sh(repo, 'rev-parse', 'refs/ultraplan/approved/session_1').trim(), commit);
    assert.equal(sh(repo, 'rev-parse', `${commit}^`).trim(), sh(repo, 'rev-parse', 'HEAD').trim(), 'HEAD is the parent');
    // The record holds the workspace as it was: the unstaged line and the untracked file included.
    assert.equal(sh(repo, 'show', `${commit}:a.txt`), 'one\ntwo\nstaged\nunstaged\n');
    assert.equal(sh(repo, 'show', `${commit}:draft.txt`), 'untracked before approval\n');

    // The agent's work: an edit, a new file, a deleted file, and a build output the ignore rule covers.
    await fs.writeFile(path.join(repo, 'a.txt'), 'one\nTWO\nstaged\nunstaged\n');
    await fs.writeFile(path.join(repo, 'new.txt'), 'made by the agent\n');
    await fs.rm(path.join(repo, 'gone.txt'));
    await fs.mkdir(path.join(repo, 'build'));
    await fs.writeFile(path.join(repo, 'build', 'out.js'), 'ignored\n');
    const afterWork = personalState(repo);

    const outcome = await changesSinceApproval(repo, 'session_1');
    assert.equal(outcome.kind, 'changes', JSON.stringify(outcome));
    const changes = ChangesSinceApprovalSchema.parse((outcome as { changes: unknown }).changes);
    assert.deepEqual(changes.files, [
      { path: 'a.txt', status: 'modified' },
      { path: 'gone.txt', status: 'deleted' },
      { path: 'new.txt', status: 'added' },
    ]);
    assert.equal(changes.approved_commit, commit);
    assert.match(changes.diff, /^-two\n\+TWO$/m);
    assert.match(changes.diff, /^\+made by the agent$/m);
    assert.match(changes.diff, /^-to be deleted$/m);
    assert.doesNotMatch(changes.diff, /build\/out\.js|draft\.txt|kept\.txt/);
    assert.equal(personalState(repo), afterWork, 'taking the diff changed the index, stash, branches or HEAD');
  });

  it('records a repository with no commit yet (no parent), and a later approval replaces the record', async () => {
    const repo = path.join(dir, 'fresh');
    await fs.mkdir(repo);
    sh(repo, 'init', '-q', '-b', 'main');
    await fs.writeFile(path.join(repo, 'x.txt'), 'x\n');
    const first = await recordApproval(repo, 'session_2');
    assert.equal(first.kind, 'recorded');
    assert.equal(sh(repo, 'rev-list', '--count', 'refs/ultraplan/approved/session_2').trim(), '1');
    assert.equal(sh(repo, 'status', '--porcelain'), '?? x.txt\n', 'the index stays empty');
    await fs.writeFile(path.join(repo, 'x.txt'), 'x2\n');
    const second = await recordApproval(repo, 'session_2');
    assert.notEqual((second as { commit: string }).commit, (first as { commit: string }).commit);
    const outcome = await changesSinceApproval(repo, 'session_2');
    assert.equal(outcome.kind === 'changes' && outcome.changes.files.length, 0);
  });

  it('says there is no record in a folder that is not a git repository, or before any approval', async () => {
    const plain = path.join(dir, 'plain');
    await fs.mkdir(plain);
    assert.deepEqual(await recordApproval(plain, 'session_3'), { kind: 'not_recorded', reason: NOT_A_REPOSITORY });
    assert.deepEqual(await changesSinceApproval(plain, 'session_3'), { kind: 'no_record', reason: NOT_A_REPOSITORY });
    assert.deepEqual(await changesSinceApproval(path.join(dir, 'missing'), 'session_3'), { kind: 'no_record', reason: NOT_A_REPOSITORY });
    const repo = await repoWithWork();
    const outcome = await changesSinceApproval(repo, 'session_3');
    assert.equal(outcome.kind, 'no_record');
    assert.match((outcome as { reason: string }).reason, /no plan of this session was approved/);
  });

  it('refuses a diff over its bound with a clear reason', async () => {
    const repo = await repoWithWork();
    assert.equal((await recordApproval(repo, 'session_5')).kind, 'recorded');
    await fs.writeFile(path.join(repo, 'big.txt'), 'a line of the agent\n'.repeat(2_000));
    const outcome = await changesSinceApproval(repo, 'session_5', { maxDiffBytes: 10_000 });
    assert.equal(outcome.kind, 'failed');
    assert.equal((outcome as { tooLarge: boolean }).tooLarge, true);
    assert.match((outcome as { reason: string }).reason, /the diff since approval is too large/);
    const whole = await changesSinceApproval(repo, 'session_5');
    assert.equal(whole.kind === 'changes' && whole.changes.files.some((f) => f.path === 'big.txt'), true);
  });

  it('runs none of the repository programs: fsmonitor, hooks, external diff, textconv', async () => {
    const repo = await repoWithWork();
    const marker = path.join(dir, 'ran');
    const program = path.join(dir, 'program.sh');
    await fs.writeFile(program, `#!/bin/sh\necho ran >> ${marker}\n`, { mode: 0o755 });
    sh(repo, 'config', 'core.fsmonitor', program);
    sh(repo, 'config', 'diff.external', program);
    sh(repo, 'config', 'diff.txt.textconv', program);
    await fs.writeFile(path.join(repo, '.git', 'info', 'attributes'), '*.txt diff=txt\n');
    await fs.mkdir(path.join(repo, '.git', 'hooks'), { recursive: true });
    await fs.writeFile(path.join(repo, '.git', 'hooks', 'post-index-change'), `#!/bin/sh\necho ran >> ${marker}\n`, { mode: 0o755 });
    assert.equal((await recordApproval(repo, 'session_4')).kind, 'recorded');
    await fs.writeFile(path.join(repo, 'a.txt'), 'changed\n');
    const outcome = await changesSinceApproval(repo, 'session_4');
    assert.equal(outcome.kind, 'changes', JSON.stringify(outcome));
    assert.match((outcome as { changes: { diff: string } }).changes.diff, /^\+changed$/m);
    await assert.rejects(fs.stat(marker), 'a program of the repository ran');
  });

  it('runs no clean, smudge or process filter the repository names, from .gitattributes or .git/info/attributes', async () => {
    const repo = await repoWithWork();
    const marker = path.join(dir, 'filtered');
    const program = path.join(dir, 'filter.sh');
    // A filter that passes the content through (so git would succeed) and leaves a mark.
    await fs.writeFile(program, `#!/bin/sh\necho "$@" >> ${marker}\ncat\n`, { mode: 0o755 });
    sh(repo, 'config', 'filter.evil.clean', `${program} clean %f`);
    sh(repo, 'config', 'filter.evil.smudge', `${program} smudge %f`);
    sh(repo, 'config', 'filter.lfs2.process', `${program} process`);
    sh(repo, 'config', 'filter.lfs2.required', 'true');
    await fs.writeFile(path.join(repo, '.gitattributes'), '*.txt filter=evil\n');
    await fs.writeFile(path.join(repo, '.git', 'info', 'attributes'), '*.md filter=lfs2\n');
    await fs.writeFile(path.join(repo, 'notes.md'), 'a note\n');
    assert.equal((await recordApproval(repo, 'session_6')).kind, 'recorded');
    await fs.writeFile(path.join(repo, 'a.txt'), 'after\n');
    await fs.writeFile(path.join(repo, 'notes.md'), 'a note, edited\n');
    const outcome = await changesSinceApproval(repo, 'session_6');
    assert.equal(outcome.kind, 'changes', JSON.stringify(outcome));
    const files = (outcome as { changes: { files: { path: string }[] } }).changes.files.map((f) => f.path);
    assert.deepEqual(files.sort(), ['a.txt', 'notes.md']);
    await assert.rejects(fs.readFile(marker, 'utf8'), 'a filter of the repository ran');
  });
});

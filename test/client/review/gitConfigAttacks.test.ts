// A repository whose own git config names programs (core.fsmonitor, a clean filter, a textconv
// driver, an external diff, a hook, a pager): each probe first proves plain git in that repository
// runs the program (its marker file appears), then that collecting the change to review, or git
// under the neutral config, runs none of them. Real git, real repositories in temp folders.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { collectChange } from '../../../src/client/review/gitChange';
import { NEUTRAL_GIT_CONFIG, SafeGit, filterOverrides, neutralGitEnv } from '../../../src/core/node/safeGit';
import { ReviewRepo, git } from '../../support/review/gitRepo';

describe('git on a hostile repository: its config runs nothing of ours', function () {
  this.timeout(60_000);
  let repo: ReviewRepo;
  let markers = '';

  beforeEach(async () => {
    repo = await new ReviewRepo().open();
    markers = await mkdtemp(path.join(tmpdir(), 'ultraplan-git-markers-'));
  });
  afterEach(async () => {
    await repo.close();
    await rm(markers, { recursive: true, force: true });
  });

  /** A program that writes `name` in the markers folder and passes its input through. */
  async function program(name: string): Promise<{ script: string; marker: string }> {
    const marker = path.join(markers, name);
    const script = path.join(markers, `${name}.sh`);
    await writeFile(script, `#!/bin/sh\ntouch '${marker}'\nif [ -n "$1" ] && [ -f "$1" ]; then cat "$1"; else cat; fi\n`);
    await chmod(script, 0o755);
    return { script, marker };
  }

  /** Plain git would run it: the marker appears, and is removed again for the real check. */
  async function provePlainGitRuns(marker: string, ...args: string[]): Promise<void> {
    try {
      git(repo.root, ...args);
    } catch {
      // Some drivers make git fail; what counts is whether they ran.
    }
    assert.ok(existsSync(marker), `plain git ${args.join(' ')} did not run the program: the probe would prove nothing`);
    await rm(marker);
  }

  it('core.fsmonitor: plain git status runs it; collecting the change does not', async () => {
    const { script, marker } = await program('fsmonitor');
    git(repo.root, 'config', 'core.fsmonitor', script);
    await provePlainGitRuns(marker, 'status', '--porcelain');
    const change = await collectChange(repo.root, { kind: 'branch', includeUntracked: true });
    assert.ok(change.files.some((f) => f.path === 'src/app.ts'));
    assert.equal(existsSync(marker), false, 'the repository’s fsmonitor ran during the review');
  });

  it('a clean filter in .git/config chosen by a committed .gitattributes: plain git diff runs it; the review does not, and sees the real text', async () => {
    const { script, marker } = await program('clean');
    await repo.write('.gitattributes', '*.ts filter=evil\n');
    git(repo.root, 'add', '.gitattributes');
    git(repo.root, 'config', 'filter.evil.clean', script);
    git(repo.root, 'config', 'filter.evil.required', 'true');
    await repo.write('src/app.ts', '// edited in the working tree\n');
    await provePlainGitRuns(marker, 'diff', 'HEAD');
    const change = await collectChange(repo.root, { kind: 'branch', includeUntracked: true });
    assert.equal(existsSync(marker), false, 'the clean filter ran during the review');
    assert.match(change.files.find((f) => f.path === 'src/app.ts')!.patch, /^\+\/\/ edited in the working tree$/m);
  });

  it('the same filter chosen by .git/info/attributes, and one named with dots: blanked all the same', async () => {
    const { script, marker } = await program('info-clean');
    await mkdir(path.join(repo.root, '.git', 'info'), { recursive: true });
    await writeFile(path.join(repo.root, '.git', 'info', 'attributes'), '*.md filter=a.b\n');
    git(repo.root, 'config', 'filter.a.b.clean', script);
    await provePlainGitRuns(marker, 'diff', 'HEAD');
    await collectChange(repo.root, { kind: 'staged' });
    await collectChange(repo.root, { kind: 'branch', includeUntracked: true });
    assert.equal(existsSync(marker), false, 'the clean filter ran during the review');
  });

  it('a textconv driver and diff.external: plain git diff runs them; the review of a commit range does not', async () => {
    const textconv = await program('textconv');
    const external = await program('external');
    await repo.write('.gitattributes', '*.ts diff=evil\n');
    git(repo.root, 'config', 'diff.evil.textconv', textconv.script);
    await provePlainGitRuns(textconv.marker, 'diff', 'main', 'feature');
    git(repo.root, 'config', 'diff.external', external.script);
    await provePlainGitRuns(external.marker, 'diff', 'main', 'feature');
    const change = await collectChange(repo.root, { kind: 'range', from: 'main', to: 'feature' });
    assert.deepEqual(
      change.files.map((f) => f.path),
      ['src/app.ts'],
    );
    assert.equal(existsSync(textconv.marker), false, 'the textconv driver ran during the review');
    assert.equal(existsSync(external.marker), false, 'the external diff ran during the review');
  });

  it('a hook (post-index-change, which a refreshed index runs): plain git status runs it; the review does not', async () => {
    const { script, marker } = await program('hook');
    const hooks = path.join(markers, 'hooks');
    await mkdir(hooks);
    await writeFile(path.join(hooks, 'post-index-change'), `#!/bin/sh\nexec '${script}' </dev/null >/dev/null\n`);
    await chmod(path.join(hooks, 'post-index-change'), 0o755);
    git(repo.root, 'config', 'core.hooksPath', hooks);
    // A touched file makes git refresh the index and write it, which runs the hook.
    execFileSync('touch', ['-d', '2001-01-01', path.join(repo.root, 'README.md')]);
    await provePlainGitRuns(marker, 'status', '--porcelain');
    execFileSync('touch', ['-d', '2002-02-02', path.join(repo.root, 'README.md')]);
    await new SafeGit(repo.root).run(['status', '--porcelain']);
    await collectChange(repo.root, { kind: 'branch', includeUntracked: true });
    assert.equal(existsSync(marker), false, 'the hook ran');
  });

  it('a pager: plain git on a terminal runs it; git under the neutral config on a terminal does not', async () => {
    const { script, marker } = await program('pager');
    git(repo.root, 'config', 'core.pager', script);
    const onTerminal = (command: string, env: NodeJS.ProcessEnv) =>
      execFileSync('script', ['-qec', command, '/dev/null'], { cwd: repo.root, env, encoding: 'utf8' });
    const plainEnv = { ...process.env };
    delete plainEnv.GIT_PAGER;
    delete plainEnv.PAGER;
    onTerminal('git log -1 --oneline', plainEnv);
    assert.ok(existsSync(marker), 'plain git on a terminal did not page: the probe would prove nothing');
    await rm(marker);
    const neutral = NEUTRAL_GIT_CONFIG.map((arg) => `'${arg}'`).join(' ');
    onTerminal(`git ${neutral} log -1 --oneline`, neutralGitEnv(plainEnv));
    assert.equal(existsSync(marker), false, 'the pager ran under the neutral config');
  });

  it('filter names are read from the listing; a name -c cannot spell is refused', () => {
    assert.deepEqual(filterOverrides('filter.lfs.clean\ngit-lfs clean\0filter.lfs.required\ntrue\0filter.x.y.smudge\ncat\0').length, 16);
    assert.throws(() => filterOverrides('filter.a=b.clean\nx\0'), /cannot be told to skip/);
    assert.deepEqual(filterOverrides(''), []);
  });
});

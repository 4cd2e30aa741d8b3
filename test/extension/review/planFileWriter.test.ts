import * as assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPlanFile, PlansFolderOutsideError, realPlansFolder } from '../../../src/extension/review/planFileWriter';

describe('createPlanFile: teleported plans never overwrite each other', () => {
  const date = new Date(2026, 10, 30, 12, 0, 0);
  let folder: string;
  beforeEach(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'ultraplan-plans-'));
  });
  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('takes the next free name when the first is held, leaving the existing file as it was', async () => {
    await writeFile(path.join(folder, '2026-11-30-add-a-flag.plan.md'), 'earlier plan\n');
    const file = await createPlanFile(folder, date, 'add-a-flag', 'new plan\n');
    assert.equal(path.basename(file), '2026-11-30-add-a-flag-2.plan.md');
    assert.equal(await readFile(path.join(folder, '2026-11-30-add-a-flag.plan.md'), 'utf8'), 'earlier plan\n');
    assert.equal(await readFile(file, 'utf8'), 'new plan\n');
  });

  it('gives simultaneous saves of the same name a file each, with its own text', async () => {
    const texts = Array.from({ length: 8 }, (_, i) => `plan ${i}\n`);
    const files = await Promise.all(texts.map((text) => createPlanFile(folder, date, 'same-title', text)));
    assert.equal(new Set(files).size, texts.length);
    assert.equal((await readdir(folder)).length, texts.length);
    for (const [i, file] of files.entries()) assert.equal(await readFile(file, 'utf8'), texts[i]);
  });

  it('reports a folder it cannot write to instead of trying other names', async () => {
    await assert.rejects(createPlanFile(path.join(folder, 'missing'), date, 'x', 'y'), { code: 'ENOENT' });
  });
});

describe('realPlansFolder: a plans folder that links out of the workspace is refused', () => {
  let workspace: string;
  let home: string;
  beforeEach(async () => {
    workspace = await mkdtemp(path.join(os.tmpdir(), 'ultraplan-ws-'));
    home = await mkdtemp(path.join(os.tmpdir(), 'ultraplan-home-'));
    // Fedora's ~/.bashrc sources every file in ~/.bashrc.d: a plan saved there runs at the next shell.
    await mkdir(path.join(home, '.bashrc.d'));
  });
  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });

  it('refuses a committed .ultraplan/plans symlink to ~/.bashrc.d, and creates nothing there', async () => {
    await mkdir(path.join(workspace, '.ultraplan'));
    await symlink(path.join(home, '.bashrc.d'), path.join(workspace, '.ultraplan', 'plans'));
    await assert.rejects(realPlansFolder(path.join(workspace, '.ultraplan', 'plans'), [workspace]), (err: unknown) => {
      assert.ok(err instanceof PlansFolderOutsideError);
      assert.match(err.message, /resolves to .*\.bashrc\.d, which is outside the workspace/);
      assert.match(err.message, /remove the link, or set ultraplan\.plansDirectory/);
      return true;
    });
    assert.deepEqual(await readdir(path.join(home, '.bashrc.d')), []);
  });

  it('refuses a symlinked parent (.ultraplan -> ~) before mkdir can create plans/ outside', async () => {
    await symlink(home, path.join(workspace, '.ultraplan'));
    await assert.rejects(realPlansFolder(path.join(workspace, '.ultraplan', 'plans'), [workspace]), PlansFolderOutsideError);
    assert.deepEqual((await readdir(home)).sort(), ['.bashrc.d']);
  });

  it('refuses a dangling symlink and an absolute folder outside the workspace', async () => {
    await symlink(path.join(home, 'missing'), path.join(workspace, 'plans'));
    await assert.rejects(realPlansFolder(path.join(workspace, 'plans'), [workspace]), /a symbolic link to a place that does not exist/);
    await assert.rejects(realPlansFolder(path.join(home, '.bashrc.d'), [workspace]), PlansFolderOutsideError);
  });

  it('creates a missing folder inside the workspace, and accepts a symlink that stays inside', async () => {
    const created = await realPlansFolder(path.join(workspace, '.ultraplan', 'plans'), [workspace]);
    assert.equal(created, path.join(await realpath(workspace), '.ultraplan', 'plans'));
    await mkdir(path.join(workspace, 'docs', 'plans'), { recursive: true });
    await symlink(path.join(workspace, 'docs', 'plans'), path.join(workspace, 'plans'));
    const linked = await realPlansFolder(path.join(workspace, 'plans'), [workspace]);
    assert.match(linked, /docs\/plans$/);
  });
});

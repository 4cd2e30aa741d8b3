import * as assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPlanFile } from '../../../src/extension/review/planFileWriter';

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
    await writeFile(path.join(folder, '2026-11-30-add-a-flag.md'), 'earlier plan\n');
    const file = await createPlanFile(folder, date, 'add-a-flag', 'new plan\n');
    assert.equal(path.basename(file), '2026-11-30-add-a-flag-2.md');
    assert.equal(await readFile(path.join(folder, '2026-11-30-add-a-flag.md'), 'utf8'), 'earlier plan\n');
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

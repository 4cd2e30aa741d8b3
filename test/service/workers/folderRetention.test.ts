// Retention on a worker's disk, on real folders and a throwaway PostgreSQL: the folders of a
// session archived longer than the retention, or no longer in the database, are deleted (a folder
// its agent made unwritable included); a recent archive's, a live session's, a link and a folder
// of another name are not.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { buildSync } from 'esbuild';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { PostgresServerStore } from '../../../src/service/store/postgres/postgresStore';
import { retentionCutoffs } from '../../../src/service/store/retention';
import { SessionFolderSweep, removeTree } from '../../../src/service/workers/folderRetention';
import { SessionWorker } from '../../../src/service/workers/worker';
import { createRequest } from '../hostTestKit';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { tempDir } from '../../support/serverProcess';
import { waitFor } from '../../support/wait';

const DAY_MS = 24 * 60 * 60 * 1000;
const POLICY = { archivedDays: 30, auditDays: null };

/** A session's folders as a worker leaves them: its clone, its sandbox HOME and temp folder. */
function sessionFolders(scratch: string, sandboxes: string, id: string): string[] {
  const clone = path.join(scratch, id);
  const home = path.join(sandboxes, id, 'home');
  const tmp = path.join(sandboxes, id, 'tmp');
  for (const dir of [clone, home, tmp]) mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(clone, 'README.md'), `# ${id}\n`);
  writeFileSync(path.join(home, '.credentials.json'), '{"token":"the agent login"}\n');
  return [clone, path.join(sandboxes, id)];
}

describe('worker folder retention (real folders, PostgreSQL)', function () {
  this.timeout(60_000);
  let root: string;
  let store: PostgresServerStore | undefined;
  let url: string;

  beforeEach(async () => {
    root = tempDir('ultraplan-folder-retention-');
    url = await (await sharedPostgresCluster()).createDatabase();
    store = await PostgresServerStore.open({ connectionString: url });
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
    // The hostile folder is made writable by the sweep; a failed test may leave it as it was.
    await rm(root, { recursive: true, force: true }).catch(() => undefined);
  });

  async function archivedDaysAgo(days: number): Promise<string> {
    const id = (await (store as PostgresServerStore).createSession(createRequest('plan it'))).id;
    await (store as PostgresServerStore).archive(id);
    await (store as PostgresServerStore).pool.query('UPDATE sessions SET archived_at = $2 WHERE id = $1', [
      id,
      new Date(Date.now() - days * DAY_MS),
    ]);
    return id;
  }

  it("deletes an old archive's clone, HOME and temp folder and a deleted session's, and keeps the rest", async () => {
    const scratch = path.join(root, 'scratch');
    const sandboxes = path.join(scratch, 'sandboxes');
    const old = await archivedDaysAgo(31);
    const recent = await archivedDaysAgo(29);
    const live = (await (store as PostgresServerStore).createSession(createRequest('still planning'))).id;
    const deleted = 'session_0123456789abcdef0123456789abcdef';
    const oldFolders = sessionFolders(scratch, sandboxes, old);
    const deletedFolders = sessionFolders(scratch, sandboxes, deleted);
    const kept = [...sessionFolders(scratch, sandboxes, recent), ...sessionFolders(scratch, sandboxes, live)];
    // A clone left half-done beside the old one's, and a folder its agent made unwritable.
    const partial = path.join(scratch, `${old}.partial-0badc0de`);
    mkdirSync(partial);
    const locked = path.join(sandboxes, old, 'home', 'locked');
    mkdirSync(path.join(locked, 'inner'), { recursive: true });
    writeFileSync(path.join(locked, 'inner', 'file'), 'x');
    chmodSync(path.join(locked, 'inner'), 0o500);
    chmodSync(locked, 0o500);
    // Not a session's: another name, and a link named like one pointing at a folder outside.
    const outside = path.join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'precious'), 'keep me');
    mkdirSync(path.join(scratch, 'cache'));
    symlinkSync(outside, path.join(scratch, 'session_aaaaaaaaaaaaaaaa'));

    const sweep = new SessionFolderSweep((store as PostgresServerStore).pool, [scratch, sandboxes]);
    // Before the cutoff nothing of the old one goes; the deleted session's go at once.
    assert.deepEqual(await sweep.sweep(retentionCutoffs(POLICY, new Date(Date.now() - 2 * DAY_MS))), { sessions: 1, auditRows: 0 });
    for (const dir of deletedFolders) assert.equal(existsSync(dir), false, dir);
    for (const dir of oldFolders) assert.equal(existsSync(dir), true, dir);

    assert.deepEqual(await sweep.sweep(retentionCutoffs(POLICY, new Date())), { sessions: 1, auditRows: 0 });
    for (const dir of [...oldFolders, partial]) assert.equal(existsSync(dir), false, `${dir} was kept`);
    for (const dir of kept) assert.equal(existsSync(dir), true, `${dir} was deleted`);
    assert.equal(existsSync(path.join(outside, 'precious')), true, 'the link was followed');
    assert.deepEqual(readdirSync(scratch).sort(), ['cache', live, recent, 'sandboxes', 'session_aaaaaaaaaaaaaaaa'].sort());
    // Nothing left to do: the next sweep deletes nothing.
    assert.deepEqual(await sweep.sweep(retentionCutoffs(POLICY, new Date())), { sessions: 0, auditRows: 0 });
  });

  it('a worker with --retain-archived-days sweeps its folders when it starts', async () => {
    const scratch = path.join(root, 'scratch');
    const sandboxes = path.join(root, 'sandboxes');
    const old = await archivedDaysAgo(40);
    const folders = sessionFolders(scratch, sandboxes, old);
    const lines: string[] = [];
    const worker = new SessionWorker({
      connectionString: url,
      agentFor: () => Promise.reject(new Error('no session is claimed here')),
      folderRetention: { parents: [scratch, sandboxes], archivedDays: 30 },
      log: (line) => lines.push(line),
    });
    try {
      await worker.start();
      await waitFor(() => folders.every((dir) => !existsSync(dir)), { message: 'the old folders deleted', timeoutMs: 10_000 });
      await waitFor(() => lines.some((line) => /deleted the folders of 1 archived or deleted session/.test(line)), {
        message: 'the sweep logged',
        timeoutMs: 20_000,
      });
    } finally {
      await worker.close();
    }
  });

  it('removeTree deletes a tree whose folders an agent made read-only, where a plain recursive delete fails', async function () {
    // Root passes every mode check: the delete runs as an unprivileged user (nobody) when we are root.
    const asRoot = process.getuid?.() === 0;
    if (asRoot && !existsSync('/usr/bin/setpriv')) this.skip();
    const base = path.join(root, 'owned');
    const tree = (name: string): string => {
      const dir = path.join(base, name);
      mkdirSync(path.join(dir, 'a', 'b'), { recursive: true });
      writeFileSync(path.join(dir, 'a', 'b', 'f'), 'x');
      chmodSync(path.join(dir, 'a', 'b'), 0o500);
      chmodSync(path.join(dir, 'a'), 0o500);
      return dir;
    };
    const plain = tree('plain');
    const ours = tree('ours');
    if (asRoot) {
      chmodSync(root, 0o755); // this test's own folder: nobody may pass through it to theirs
      execFileSync('chown', ['-R', '65534:65534', base]);
    }
    // The module bundled into this test's own folder: nobody may not be able to read the checkout
    // (a clone in a 0700 `mktemp -d` folder), and needs neither it nor tsx.
    const module = path.join(root, 'folderRetention.cjs');
    buildSync({
      entryPoints: ['src/service/workers/folderRetention.ts'],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: module,
      logLevel: 'error',
    });
    chmodSync(module, 0o644);
    const run = (code: string): string =>
      execFileSync(
        asRoot ? '/usr/bin/setpriv' : process.execPath,
        [
          ...(asRoot ? ['--reuid', '65534', '--regid', '65534', '--clear-groups', process.execPath] : []),
          '--input-type=module',
          '-e',
          code,
        ],
        { encoding: 'utf8', cwd: root },
      );
    const outcome = (call: string) =>
      `import(${JSON.stringify(module)}).then((m) => ${call}).then(() => console.log('deleted'), (e) => console.log(e.code))`;
    assert.equal(
      run(outcome(`import('node:fs/promises').then((fs) => fs.rm(${JSON.stringify(plain)}, { recursive: true, force: true }))`)).trim(),
      'EACCES',
    );
    assert.equal(run(outcome(`(m.removeTree ?? m.default.removeTree)(${JSON.stringify(ours)})`)).trim(), 'deleted');
    assert.equal(existsSync(ours), false);
    await removeTree(path.join(root, 'missing'));
  });
});

// The service against another user on the same machine, for real: run as root, a second account
// is made and the attacker's code runs under its uid. It must not connect to the socket, read the
// token or list the runtime folder; a runtime folder that user made first in a shared /tmp, with
// a listener waiting for a token in it, is refused before anything is sent.
import { strict as assert } from 'node:assert';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connectOrStartService } from '../../../src/client/localService/serviceLauncher';
import { ServiceSetupError } from '../../../src/core/node/privateFiles';
import { servicePaths } from '../../../src/core/node/servicePaths';
import { SERVER_JS, ensureServerBuilt } from '../../support/serverProcess';
import { cleanUpServices, launcherOptions, serviceDir } from './serviceKit';
import { waitFor } from '../../support/wait';

const ATTACKER = 'ultraplan-attacker';

/** The attacker's uid and gid, making the account when it is missing. */
function attackerAccount(): { uid: number; gid: number } {
  const lookup = () => spawnSync('id', ['-u', ATTACKER], { encoding: 'utf8' });
  if (lookup().status !== 0) {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', ATTACKER]);
  }
  const uid = Number(lookup().stdout.trim());
  const gid = Number(execFileSync('id', ['-g', ATTACKER], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** What each attempt gave: "ok" or the error code. */
const PROBE = `
const net = require('node:net'); const fs = require('node:fs');
const [socket, token, runtime] = process.argv.slice(1);
const attempt = (f) => { try { f(); return 'ok'; } catch (e) { return e.code || String(e); } };
const results = { token: attempt(() => fs.readFileSync(token, 'utf8')), list: attempt(() => fs.readdirSync(runtime)) };
const c = net.connect(socket);
c.on('connect', () => { results.connect = 'ok'; c.end(); console.log(JSON.stringify(results)); });
c.on('error', (e) => { results.connect = e.code; console.log(JSON.stringify(results)); });
`;

function probe(args: string[], as?: { uid: number; gid: number }): Record<string, string> {
  const run = spawnSync(process.execPath, ['-e', PROBE, ...args], { encoding: 'utf8', cwd: '/', ...(as ?? {}), timeout: 10_000 });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as Record<string, string>;
}

describe('local session service against a second user (uid)', function () {
  this.timeout(60_000);
  let account: { uid: number; gid: number };

  before(function () {
    if (process.getuid?.() !== 0) this.skip(); // switching users needs root (the test machines run as root)
    account = attackerAccount();
  });
  afterEach(cleanUpServices);

  it('the other user cannot connect to the socket, read the token or list the folder; this user can', async () => {
    const dir = serviceDir();
    // Only the service's own folders guard it: everything above them is open to everyone.
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const connection = await connectOrStartService(launcherOptions(dir));
    const args = [connection.place.socket, connection.place.paths.tokenFile, connection.place.paths.runtimeDir];
    assert.deepEqual(probe(args), { token: 'ok', list: 'ok', connect: 'ok' }, 'the probe works for the owner');
    assert.deepEqual(probe(args, account), { token: 'EACCES', list: 'EACCES', connect: 'EACCES' });
  });

  it('a runtime folder another user made first in a shared /tmp is refused, and its planted socket is never sent the token', async () => {
    ensureServerBuilt();
    const shared = mkdtempSync(path.join(os.tmpdir(), 'up-shared-'));
    chmodSync(shared, 0o1777);
    try {
      const paths = servicePaths({ env: {}, tmpdir: shared, uid: 0, home: path.join(shared, 'home') });
      const captured = path.join(shared, 'captured.txt');
      // The attacker makes the folder root's service would use, open to all, and listens in it.
      const trap = spawn(
        process.execPath,
        [
          '-e',
          `const fs=require('node:fs'),net=require('node:net');const [dir,sock,out]=process.argv.slice(1);
           fs.mkdirSync(dir,{mode:0o777});fs.chmodSync(dir,0o777);fs.writeFileSync(out,'');fs.chmodSync(out,0o666);
           net.createServer((c)=>c.on('data',(d)=>fs.appendFileSync(out,d))).listen(sock,()=>{fs.chmodSync(sock,0o777);console.log('ready')});`,
          paths.runtimeDir,
          path.join(paths.runtimeDir, 'service-1.0.0.sock'),
          captured,
        ],
        { ...account, cwd: '/', stdio: ['ignore', 'pipe', 'inherit'] },
      );
      try {
        await new Promise<void>((resolve, reject) => {
          trap.stdout.once('data', () => resolve());
          trap.once('exit', (code) => reject(new Error(`the trap exited (${code})`)));
        });
        const error = await connectOrStartService({ paths, version: '1.0.0', serverScript: SERVER_JS, idleExitSeconds: 0 }).then(
          () => assert.fail('the launcher used a folder another user owns'),
          (err: unknown) => err,
        );
        assert.ok(error instanceof ServiceSetupError, String(error));
        assert.match(error.message, new RegExp(`${paths.runtimeDir} belongs to another user \\(uid ${account.uid}\\)`));
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.equal(readFileSync(captured, 'utf8'), '', 'nothing reached the planted socket');
        assert.ok(!existsSync(paths.tokenFile), 'no token was written into that folder');
      } finally {
        trap.kill('SIGKILL');
        await waitFor(() => trap.exitCode !== null || trap.signalCode !== null, { message: 'the trap to end', timeoutMs: 15_000 });
      }
    } finally {
      rmSync(shared, { recursive: true, force: true });
    }
  });
});

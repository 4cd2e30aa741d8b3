// Two windows, two environments, one real local service (dist/server.mjs, detached, on its socket):
// the second window sees which variables differ (never their values), a restart with nothing live
// brings up a service with the second window's environment, and one with a live plan keeps running.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connectOrStartService, readServiceStatus } from '../../../src/client/localService/serviceLauncher';
import { LocalService } from '../../../src/client/localService/localService';
import { describeMismatch, environmentMismatch } from '../../../src/client/localService/windowEnvironment';
import { isAlive } from '../../support/processes';
import { cleanUpServices, clientOf, createSession, launcherOptions, scripted, serviceDir } from './serviceKit';
import { waitFor } from '../../support/wait';

const FIRST_KEY = 'sk-first-window-key-1111';
const SECOND_KEY = 'sk-second-window-key-2222';
const firstEnv = { ...process.env, ANTHROPIC_API_KEY: FIRST_KEY, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' };
const secondEnv = { ...process.env, ANTHROPIC_API_KEY: SECOND_KEY, OPENAI_BASE_URL: undefined };

describe('local session service: a window with another environment', function () {
  this.timeout(60_000);
  afterEach(cleanUpServices);

  it('publishes a fingerprint, not values; a window with the same environment sees no difference, another sees the names', async () => {
    const dir = serviceDir();
    const first = await connectOrStartService(launcherOptions(dir, '1.0.0', { env: firstEnv }));
    assert.ok(first.status.environment, 'the service publishes its fingerprint');
    const raw = JSON.stringify(await readServiceStatus(first.place, first.token));
    assert.ok(!raw.includes(FIRST_KEY) && !raw.includes('127.0.0.1:9'), 'no value in the status');

    assert.equal(await environmentMismatch(first.status, firstEnv), null);
    const second = await connectOrStartService(launcherOptions(dir, '1.0.0', { env: secondEnv }));
    assert.equal(second.status.pid, first.status.pid, 'the second window reaches the running service');
    const mismatch = await environmentMismatch(second.status, secondEnv);
    assert.deepEqual(mismatch, { differing: ['ANTHROPIC_API_KEY', 'OPENAI_BASE_URL'], home: false, liveSessions: 0 });
    const text = describeMismatch(mismatch);
    assert.match(text, /different: ANTHROPIC_API_KEY, OPENAI_BASE_URL/);
    assert.ok(!text.includes(SECOND_KEY) && !text.includes(FIRST_KEY));
  });

  it('flags another HOME: the service keeps its sessions under the HOME it was started for', async () => {
    const dir = serviceDir();
    const first = await connectOrStartService(launcherOptions(dir, '1.0.0', { env: firstEnv }));
    const otherHome = mkdtempSync(path.join(os.tmpdir(), 'up-home-'));
    const mismatch = await environmentMismatch(first.status, { ...firstEnv, HOME: otherHome });
    rmSync(otherHome, { recursive: true, force: true });
    assert.deepEqual(mismatch?.differing, ['HOME']);
    assert.equal(mismatch?.home, true);
    assert.match(describeMismatch(mismatch), /stored under the HOME it was started for/);
  });

  it("restarts with nothing live: the old service stops and the new one reports the window's fingerprint", async () => {
    const dir = serviceDir();
    const first = await connectOrStartService(launcherOptions(dir, '1.0.0', { env: firstEnv }));
    const connected: number[] = [];
    const window = new LocalService(launcherOptions(dir, '1.0.0', { env: secondEnv }), (c) => connected.push(c.status.pid));
    const before = await window.connect();
    assert.equal(before.status.pid, first.status.pid);
    assert.notEqual(await environmentMismatch(before.status, secondEnv), null);

    const outcome = await window.restart();
    assert.equal(outcome.restarted, true);
    assert.ok(outcome.restarted);
    assert.notEqual(outcome.connection.status.pid, first.status.pid);
    assert.equal(isAlive(first.status.pid), false, 'the old service stopped');
    assert.equal(outcome.connection.spawned, true);
    assert.equal(
      await environmentMismatch(outcome.connection.status, secondEnv),
      null,
      "the new service runs with the window's environment",
    );
    assert.deepEqual((await environmentMismatch(outcome.connection.status, firstEnv))?.differing, ['ANTHROPIC_API_KEY', 'OPENAI_BASE_URL']);
    assert.deepEqual(connected, [first.status.pid, outcome.connection.status.pid], 'the window is told of each connection');
  });

  it('keeps a service with a live plan running and says how many are live; restarts once nothing is', async () => {
    const dir = serviceDir();
    const first = await connectOrStartService(launcherOptions(dir, '1.0.0', { env: firstEnv }));
    const client = clientOf(first);
    const id = await createSession(client, scripted('approve.json'));
    await waitFor(() => client.getStatus(id), { message: 'the plan', timeoutMs: 15_000, until: (status) => status === 'requires_action' });

    const window = new LocalService(launcherOptions(dir, '1.0.0', { env: secondEnv }));
    const connection = await window.connect();
    const mismatch = await environmentMismatch(connection.status, secondEnv);
    assert.equal(mismatch?.liveSessions, 1);
    assert.match(describeMismatch(mismatch!), /agents started from this window would run with that other environment/);
    assert.deepEqual(await window.restart(), { restarted: false, liveSessions: 1 });
    assert.equal(isAlive(first.status.pid), true, 'the service with a live plan keeps running');

    await client.archive(id);
    await waitFor(async () => (await readServiceStatus(first.place, first.token))?.live_sessions, {
      message: 'nothing live',
      timeoutMs: 15_000,
      until: (live) => live === 0,
    });
    const outcome = await window.restart();
    assert.ok(outcome.restarted);
    assert.equal(await environmentMismatch(outcome.connection.status, secondEnv), null);
  });
});

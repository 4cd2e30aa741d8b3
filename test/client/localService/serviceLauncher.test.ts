// The local session service as windows meet it, with the real built server as a detached process
// on a Unix socket: started on demand and found again, private folders and files, racing starts,
// a stale socket after kill -9, two versions, idle exit, a start that fails, each session's agent.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { promises as fs, statSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { controlResponseEvent, userMessageEvent } from '../../../src/core/protocol';
import { SessionsClient } from '../../../src/client/sessionsClient';
import { HttpBackend } from '../../../src/client/httpBackend';
import { ServiceBackend } from '../../../src/client/localService/serviceBackend';
import {
  connectOrStartService,
  readServiceStatus,
  ServiceStartError,
  type ServiceConnection,
} from '../../../src/client/localService/serviceLauncher';
import { LocalService } from '../../../src/client/localService/localService';
import { servicePlace } from '../../../src/core/node/servicePaths';
import { isAlive, processesRunning, waitGone } from '../../support/processes';
import { EXAMPLES_DIR, SERVER_JS, startServer } from '../../support/serverProcess';
import { killService, servicePids } from '../../support/serviceProcess';
import { cleanUpServices, clientOf, createSession, launcherOptions, scripted, serviceDir } from './serviceKit';
import { waitFor } from '../../support/wait';
import { socketFetch } from '../../../src/client/localService/socketFetch';

const mode = (file: string) => statSync(file).mode & 0o777;

/** A service of `version` (started) with a session whose plan waits for its decision. */
async function planWaitingOn(dir: string, version: string): Promise<{ service: ServiceConnection; id: string }> {
  const service = await connectOrStartService(launcherOptions(dir, version));
  const id = await createSession(clientOf(service), scripted('approve.json'));
  await waitFor(() => clientOf(service).getStatus(id), {
    message: 'the plan',
    timeoutMs: 15_000,
    until: (status) => status === 'requires_action',
  });
  return { service, id };
}

describe('local session service: start, find, race, replace, exit', function () {
  this.timeout(60_000);
  afterEach(cleanUpServices);

  it('starts on demand in private folders, is found again by the next window, and runs the agent the session names', async () => {
    const dir = serviceDir();
    const first = await connectOrStartService(launcherOptions(dir));
    assert.equal(first.spawned, true);
    assert.equal(mode(first.place.paths.runtimeDir), 0o700);
    assert.equal(mode(first.place.paths.stateDir), 0o700);
    assert.equal(mode(first.place.paths.tokenFile), 0o600);
    assert.equal(mode(first.place.socket), 0o600);
    assert.ok(statSync(first.place.socket).isSocket());

    const second = await connectOrStartService(launcherOptions(dir));
    assert.equal(second.spawned, false, 'the running service is used');
    assert.equal(second.status.pid, first.status.pid);

    const client = clientOf(second);
    const id = await createSession(client, scripted('approve.json'));
    await waitFor(() => client.getStatus(id), { message: 'the plan', timeoutMs: 15_000, until: (status) => status === 'requires_action' });
    assert.equal((await readServiceStatus(first.place, first.token))?.live_sessions, 1);
    const read = await client.readEvents(id, null);
    const request = read.events.find((e) => (e as { request?: { subtype?: string } }).request?.subtype === 'can_use_tool') as {
      request_id: string;
    };
    await client.sendEvents(id, [controlResponseEvent(request.request_id, { behavior: 'allow', updatedInput: {} })]);
    await waitFor(() => client.getStatus(id), {
      message: 'the approved plan to run',
      timeoutMs: 15_000,
      until: (status) => status === 'idle',
    });
  });

  it('refuses a session that names no agent, and a malformed launch, with the reason', async () => {
    const connection = await connectOrStartService(launcherOptions(serviceDir()));
    const client = clientOf(connection);
    await assert.rejects(createSession(client, null), /needs the session's agent in session_context\.ultraplan_agent/);
    await assert.rejects(
      createSession(client, { kind: 'scripted', file: 'relative.json', label: 'x' }),
      /ultraplan_agent\.file: must be an absolute path/,
    );
    assert.equal((await client.listSessions()).length, 0, 'nothing was created');
  });

  it('a service started with its own --agent runs it for a session that names none', async () => {
    const dir = serviceDir();
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    const socket = path.join(dir, 'agent.sock');
    const tokenFile = path.join(dir, 'token');
    await fs.writeFile(tokenFile, 'service-token\n', { mode: 0o600 });
    const start = () => {
      const args = ['--socket', socket, '--token-file', tokenFile, '--data-dir', path.join(dir, 'data'), '--idle-exit-seconds', '0'];
      const child = spawn(process.execPath, [SERVER_JS, ...args, '--agent', `scripted:${path.join(EXAMPLES_DIR, 'approve.json')}`], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.once('exit', (code) => {
        if (!out.includes('listening')) console.error(`the service exited (${code}) before listening: ${err}`);
      });
      return {
        listening: waitFor(() => out.includes('listening on unix:') || undefined, { message: 'the service listening', timeoutMs: 30_000 }),
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      };
    };
    const first = start();
    try {
      await first.listening;
      const client = new SessionsClient({ baseUrl: 'http://localhost', getToken: async () => 'service-token', fetch: socketFetch(socket) });
      const id = await createSession(client, null);
      await waitFor(async () => ((await client.getSession(id)).session_status === 'requires_action' ? true : undefined), {
        message: "the service's own agent to propose its plan",
        timeoutMs: 30_000,
      });
    } finally {
      await first.stop();
    }
  });

  it('ultraplan-server on a port runs its own agent: a request naming one is refused, nothing is created', async () => {
    const server = await startServer({ scenario: path.join(EXAMPLES_DIR, 'approve.json') });
    try {
      const response = await fetch(`${server.url}/v1/code/sessions`, {
        method: 'POST',
        headers: server.headers({ 'content-type': 'application/json' }),
        body: JSON.stringify({
          title: 'x',
          events: [{ payload: userMessageEvent('plan') }],
          config: {
            ultraplan_agent: {
              kind: 'acp',
              argv: ['/bin/sh', '-c', 'touch /tmp/owned'],
              cwd: '/',
              label: 'x',
              afterApproval: 'default',
              outsideAccess: 'ask',
            },
          },
        }),
      });
      assert.equal(response.status, 400);
      assert.match(await response.text(), /this server runs its own agent; session_context\.ultraplan_agent is not taken/);
      const list = await fetch(`${server.url}/v1/code/sessions`, { headers: server.headers() });
      assert.deepEqual(((await list.json()) as { data: unknown[] }).data, []);
    } finally {
      await server.stop();
    }
  });

  it('two windows starting it at once: one service wins, every window connects to it', async () => {
    const dir = serviceDir();
    const all = await Promise.all([1, 2, 3].map(() => connectOrStartService(launcherOptions(dir))));
    const pids = new Set(all.map((c) => c.status.pid));
    assert.equal(pids.size, 1, `one service answers every window (got pids ${[...pids].join(', ')})`);
    assert.deepEqual(servicePids(dir), [...pids]);
    // The other starts give way on their own time, after the winner already answered.
    const losers = all.filter((c) => c.spawned).length - 1;
    const gaveWay = async () => ((await fs.readFile(all[0]!.place.logFile, 'utf8')).match(/is already running/g) ?? []).length;
    await waitFor(gaveWay, { message: `each of the ${losers} other starts to give way`, timeoutMs: 15_000, until: (n) => n >= losers });
    assert.equal(await gaveWay(), losers);
    await createSession(clientOf(all[2]!), scripted('approve.json'));
  });

  it('a start that finds the lock held by a service on its way out starts again once it is gone', async () => {
    const dir = serviceDir();
    const options = launcherOptions(dir);
    const place = servicePlace(options.paths, options.version);
    // A process holding this version's lock, answering nothing: a service that is stopping.
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    await fs.mkdir(place.dataDir, { recursive: true, mode: 0o700 });
    await fs.writeFile(path.join(place.dataDir, 'server.lock'), `${holder.pid}\n`);
    const connecting = connectOrStartService(options);
    await waitFor(async () => /is already running/.test(await fs.readFile(place.logFile, 'utf8').catch(() => '')), {
      message: 'the first start to give way',
      timeoutMs: 15_000,
    });
    holder.kill('SIGKILL');
    const connection = await connecting;
    assert.notEqual(connection.status.pid, holder.pid);
    assert.deepEqual(servicePids(dir), [connection.status.pid]);
  });

  it('after kill -9 the stale socket is replaced by a new service that still has the sessions', async () => {
    const dir = serviceDir();
    const first = await connectOrStartService(launcherOptions(dir));
    const id = await createSession(clientOf(first), scripted('approve.json'));
    await waitFor(() => clientOf(first).getStatus(id), {
      message: 'the plan',
      timeoutMs: 15_000,
      until: (status) => status === 'requires_action',
    });
    killService(first.status.pid);
    assert.ok(await waitGone(first.status.pid));
    assert.ok(statSync(first.place.socket).isSocket(), 'the crash left its socket file');

    const service = new LocalService(launcherOptions(dir));
    const client = clientOf(await service.connect());
    const again = await service.connect();
    assert.notEqual(again.status.pid, first.status.pid);
    assert.equal(await client.getStatus(id), 'requires_action', 'the waiting plan is still waiting');
    const log = await fs.readFile(first.place.logFile, 'utf8');
    assert.match(log, /removing the stale socket/);
  });

  it('a window whose service went away meanwhile starts it again on its next request', async () => {
    const dir = serviceDir();
    const service = new LocalService(launcherOptions(dir));
    const first = await service.connect();
    killService(first.status.pid);
    await waitGone(first.status.pid);
    await fs.rm(first.place.socket);
    const client = clientOf(first);
    await assert.rejects(client.listSessions(), /ENOENT/, 'a plain socket client sees it gone');
    const restarting = new SessionsClient({ baseUrl: 'http://localhost', getToken: () => service.token(), fetch: service.fetch });
    assert.deepEqual(await restarting.listSessions(), []);
    assert.notEqual((await service.connect()).status.pid, first.status.pid);
  });

  it('a newer version beside an older one with a live session; an older one with none live makes way and hands over its sessions', async () => {
    const dir = serviceDir();
    const { service: old, id: live } = await planWaitingOn(dir, '1.0.0');

    const beside = await connectOrStartService(launcherOptions(dir, '1.1.0'));
    assert.notEqual(beside.place.socket, old.place.socket, 'versioned names');
    assert.ok(isAlive(old.status.pid), 'the older service keeps its live session');
    assert.equal(await clientOf(old).getStatus(live), 'requires_action');
    assert.equal((await clientOf(beside).listSessions()).length, 0);

    // The live session ends (archived); a yet newer version now replaces both idle ones.
    await clientOf(old).archive(live);
    const newest = await connectOrStartService(launcherOptions(dir, '2.0.0'));
    assert.ok(await waitGone(old.status.pid), 'the idle 1.0.0 stopped');
    assert.ok(await waitGone(beside.status.pid), 'the idle 1.1.0 stopped');
    const sessions = await clientOf(newest).listSessions();
    assert.deepEqual(
      sessions.map((s) => s.id),
      [live],
      "the stopped versions' sessions moved to the new one",
    );
    assert.deepEqual(servicePids(dir), [newest.status.pid]);
  });

  it("a newer extension's window follows and decides a session that lives on the older service running beside its own", async () => {
    const dir = serviceDir();
    const { service: old, id } = await planWaitingOn(dir, '1.0.0');

    // The window of version 1.1.0, as the extension makes it (backends.ts), over its own LocalService.
    const service = new LocalService(launcherOptions(dir, '1.1.0'));
    const backend = new ServiceBackend({
      service,
      label: 'Embedded',
      lifecycle: { archiveOnApprove: false, archiveOnTeleport: true, archiveOnStop: true, archiveOnFailure: true },
      connect: (fetch, getToken) =>
        new HttpBackend({
          client: new SessionsClient({ baseUrl: 'http://localhost', getToken, fetch }),
          preferStream: false,
          kind: 'embedded',
        }),
    });
    try {
      assert.equal((await backend.getSession(id)).id, id, 'found on the older service');
      // The record of the changes since approval is asked of the service holding the session.
      const holder = await backend.clientFor(id);
      assert.ok(holder, 'a client for the session');
      assert.deepEqual(
        (await holder.listSessions()).map((s) => s.id),
        [id],
        "the older service's client",
      );
      const own = await service.connect();
      assert.notEqual(own.status.pid, old.status.pid, 'its own version runs beside the older one, which keeps its live session');
      assert.ok(isAlive(old.status.pid));
      const read = await backend.transport.readEvents(id, null);
      const request = read.events.find((e) => (e as { request?: { subtype?: string } }).request?.subtype === 'can_use_tool') as {
        request_id: string;
      };
      await backend.sendEvents(id, [controlResponseEvent(request.request_id, { behavior: 'allow', updatedInput: {} })]);
      await waitFor(() => clientOf(old).getStatus(id), {
        message: 'the decision to reach the older service',
        timeoutMs: 15_000,
        until: (status) => status === 'idle',
      });
      assert.equal((await clientOf(own).listSessions()).length, 0, 'nothing was moved to or made on the new service');
    } finally {
      await backend.dispose();
    }
  });

  it('an older version never stops a newer one, even an idle one: they run side by side', async () => {
    const dir = serviceDir();
    const newer = await connectOrStartService(launcherOptions(dir, '2.0.0'));
    const older = await connectOrStartService(launcherOptions(dir, '1.9.0'));
    assert.notEqual(older.status.pid, newer.status.pid);
    assert.ok(isAlive(newer.status.pid), 'the newer service runs on');
    assert.deepEqual(servicePids(dir).sort(), [newer.status.pid, older.status.pid].sort());
  });

  it('exits after the idle time with no live session and no client, removing its socket', async () => {
    const dir = serviceDir();
    const connection = await connectOrStartService(launcherOptions(dir, '1.0.0', { idleExitSeconds: 1 }));
    assert.ok(await waitGone(connection.status.pid, 15_000), 'the idle service exited');
    await assert.rejects(fs.stat(connection.place.socket), /ENOENT/);
    assert.match(await fs.readFile(connection.place.logFile, 'utf8'), /stopping \(idle for 1 s\)/);
  });

  it('keeps running past the idle time while a session is live', async () => {
    const dir = serviceDir();
    const connection = await connectOrStartService(launcherOptions(dir, '1.0.0', { idleExitSeconds: 1 }));
    const client = clientOf(connection);
    const id = await createSession(client, scripted('approve.json'));
    await waitFor(() => client.getStatus(id), { message: 'the plan', timeoutMs: 15_000, until: (status) => status === 'requires_action' });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.ok(isAlive(connection.status.pid), 'a plan waits for its decision: the service stays');
    await client.archive(id);
    assert.ok(await waitGone(connection.status.pid, 15_000), 'then it exits');
  });

  /** A server script that writes `lines` log lines 300 ms apart, then runs the real server (or, with `hang`, nothing, deaf to SIGTERM). */
  async function slowStart(dir: string, lines: number, hang = false): Promise<string> {
    const parent = path.dirname(dir);
    const script = path.join(parent, 'slow-start.mjs');
    await fs.writeFile(
      script,
      [
        hang ? `process.on('SIGTERM', () => {});` : '',
        `for (let i = 0; i < ${lines}; i++) { console.log('resuming session ' + i); await new Promise((r) => setTimeout(r, 300)); }`,
        hang ? `setInterval(() => {}, 1 << 30);` : `await import(${JSON.stringify(pathToFileURL(SERVER_JS).href)});`,
      ].join('\n'),
    );
    return script;
  }

  it('a start that keeps writing to its log (resuming many sessions) is waited for past the quiet bound', async () => {
    const dir = serviceDir();
    // 3 s of log lines, past a quiet bound of 2.5 s that still leaves the real server time to load.
    const script = await slowStart(dir, 10);
    const connection = await connectOrStartService(launcherOptions(dir, '1.0.0', { serverScript: script, startTimeoutMs: 2_500 }));
    assert.deepEqual(servicePids(dir), [connection.status.pid]);
    assert.match(await fs.readFile(connection.place.logFile, 'utf8'), /resuming session 9/);
  });

  it('a start that neither answers nor writes to its log fails after the quiet bound, naming its log, and is stopped', async () => {
    const dir = serviceDir();
    // It also ignores SIGTERM, as a truly hung process would: the launcher has to kill its group.
    const script = await slowStart(dir, 1, true);
    const error = await connectOrStartService(launcherOptions(dir, '1.0.0', { serverScript: script, startTimeoutMs: 2_000 })).then(
      () => assert.fail('the start should fail'),
      (err: unknown) => err,
    );
    assert.ok(error instanceof ServiceStartError, String(error));
    assert.match(error.message, /did not answer on .* \(nothing in its log for [2-4] s; it was stopped\)\. Its log: /);
    assert.deepEqual(processesRunning(script), [], 'no process of the hung start is left');
  });

  it('a start that fails says why and names the log file', async () => {
    const dir = serviceDir();
    const options = launcherOptions(dir);
    // Data in the way of the service's data folder: a file where the folder should be.
    const place = servicePlace(options.paths, options.version);
    await fs.mkdir(path.dirname(place.dataDir), { recursive: true, mode: 0o700 });
    await fs.writeFile(place.dataDir, 'not a folder');
    const error = await connectOrStartService(options).then(
      () => assert.fail('the start should fail'),
      (err: unknown) => err,
    );
    assert.ok(error instanceof ServiceStartError, String(error));
    assert.equal(error.logFile, place.logFile);
    assert.match(error.message, /did not start: it exited with code 1: .*(EEXIST|ENOTDIR|not a folder)/);
    assert.match(error.message, new RegExp(`Its log: ${place.logFile.replace(/[.+]/g, '\\$&')}`));
  });
});

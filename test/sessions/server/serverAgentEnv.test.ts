// An agent plans from text nobody vetted (a prompt-injected README can steer it), so it must not
// hold our token: the real server, given its token in the environment, starts a real ACP agent
// process (the fake agent through the real spawn path), and the test reads that process's
// environment from /proc while it is waiting for a decision.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { agentEnvironment } from '../../../src/sessions/acp/agentProcess';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { serversPerTest, startWorker, type WorkerProcess } from '../../support/serverProcess';
import { fakeRun, readAgentRecord, type FakeRun } from '../../support/fakeAcpAgent';
import { createRequest } from '../hostTestKit';
import { call, waitForStatus } from './serverTestKit';

describe('agents get no token of ours', function () {
  this.timeout(40_000);
  let run: FakeRun | undefined;

  let worker: WorkerProcess | undefined;

  const servers = serversPerTest();
  afterEach(async () => {
    await worker?.stop().catch(() => undefined);
    worker = undefined;
    await run?.cleanup();
  });

  it('an ACP agent started by the server has no ULTRAPLAN_SERVER_TOKEN, nor the token under any name', async function () {
    if (process.platform !== 'linux') this.skip(); // reads the agent's environment from /proc
    run = await fakeRun('claude-plan.json');
    const server = await servers.start({
      agent: `acp:${run.argv.map((arg) => JSON.stringify(arg)).join(' ')}`,
      extraArgs: ['--workspace', run.workspace],
    });
    const token = server.token as string;
    const created = await call(server, 'POST', '/v1/sessions', createRequest('Plan a greeting feature'));
    assert.equal(created.status, 200);
    await waitForStatus(server, created.body.id, 'requires_action', 20_000); // the agent is alive, waiting
    const started = readAgentRecord(run.record).find((entry) => entry.kind === 'started');
    const pid = Number(started?.pid);
    assert.ok(pid > 0);
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    assert.ok(
      environ.some((entry) => entry.startsWith('PATH=')),
      'the agent still gets the ordinary environment',
    );
    assert.ok(!environ.some((entry) => entry.startsWith('ULTRAPLAN_SERVER_TOKEN=')));
    assert.ok(!environ.join('\n').includes(token), 'the token reached the agent');
  });

  it('an agent run by a worker holds neither the database URL nor the shared token the worker was started with', async function () {
    if (process.platform !== 'linux') this.skip();
    run = await fakeRun('claude-plan.json');
    const database = await (await sharedPostgresCluster()).createDatabase();
    const server = await servers.start({ store: database });
    const token = server.token as string;
    // As a deployment hands them over: the database URL and the token in the environment.
    worker = await startWorker({
      store: database,
      storeInEnv: true,
      agent: `acp:${run.argv.map((arg) => JSON.stringify(arg)).join(' ')}`,
      extraArgs: ['--workspace', run.workspace],
      env: { ULTRAPLAN_SERVER_TOKEN: token },
    });
    const created = await call(server, 'POST', '/v1/sessions', createRequest('Plan a greeting feature'));
    assert.equal(created.status, 200);
    await waitForStatus(server, created.body.id, 'requires_action', 20_000);
    const pid = Number(readAgentRecord(run.record).find((entry) => entry.kind === 'started')?.pid);
    assert.ok(pid > 0);
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
    assert.match(environ, /(^|\0)PATH=/, 'the agent still gets the ordinary environment');
    for (const name of ['ULTRAPLAN_DATABASE_URL', 'ULTRAPLAN_SERVER_TOKEN']) assert.doesNotMatch(environ, new RegExp(`(^|\0)${name}=`));
    assert.ok(!environ.includes(database), 'the database URL reached the agent');
    assert.ok(!environ.includes(token), 'the token reached the agent');
  });

  it('agentEnvironment drops our secrets and keeps the rest, without touching its input', () => {
    const env = { PATH: '/usr/bin', HOME: '/home/me', ULTRAPLAN_SERVER_TOKEN: 'secret' };
    assert.deepEqual(agentEnvironment(env), { PATH: '/usr/bin', HOME: '/home/me' });
    assert.equal(env.ULTRAPLAN_SERVER_TOKEN, 'secret');
  });
});

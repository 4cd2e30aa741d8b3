// An agent plans from text nobody vetted (a prompt-injected README can steer it), so it must not
// hold our token: the real server starts a real ACP agent process (the fake agent through the
// real spawn path, in its sandbox where the machine has one), and the test reads the environment
// and command line of every process of the service and its agents from /proc while the agent
// waits for a decision.
import { strict as assert } from 'node:assert';
import { agentEnvironment } from '../../../src/agents/acp/agentProcess';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { runServerCli, serversPerTest, startWorker, type WorkerProcess } from '../../support/serverProcess';
import { fakeRun, type FakeRun } from '../../support/fakeAcpAgent';
import { loggedAgentPid, processTree, procExposure } from '../../support/processes';
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
      extraArgs: ['--workspace', run.workspace, '--sandbox-share', run.recordDir],
    });
    const token = server.token as string;
    const created = await call(server, 'POST', '/v1/sessions', createRequest('Plan a greeting feature'));
    assert.equal(created.status, 200);
    await waitForStatus(server, created.body.id, 'requires_action', 20_000); // the agent is alive, waiting
    // The agent and whatever runs it (bubblewrap, the proxy bridge), by their host pids.
    const agentProcesses = processTree(loggedAgentPid(server.stderr()));
    assert.ok(agentProcesses.length >= 1);
    for (const pid of agentProcesses) {
      const environ = procExposure(pid)?.environ.split('\0') ?? [];
      assert.ok(
        environ.some((entry) => entry.startsWith('PATH=')),
        `agent process ${pid} still gets the ordinary environment`,
      );
      assert.ok(!environ.some((entry) => entry.startsWith('ULTRAPLAN_SERVER_TOKEN=')));
      assert.ok(!environ.join('\n').includes(token), `the token reached agent process ${pid}`);
    }
  });

  it('with its secrets in files, no process of the service or its agents shows the database URL or the token in /proc', async function () {
    if (process.platform !== 'linux') this.skip();
    run = await fakeRun('claude-plan.json');
    const database = await (await sharedPostgresCluster()).createDatabase();
    // A replica given its token in a 0400 --token-file; a worker its database URL in a --database-url-file.
    const server = await servers.start({ store: database, storeInFile: true });
    const token = server.token as string;
    worker = await startWorker({
      store: database,
      storeInFile: true,
      agent: `acp:${run.argv.map((arg) => JSON.stringify(arg)).join(' ')}`,
      extraArgs: ['--workspace', run.workspace, '--sandbox-share', run.recordDir],
    });
    const created = await call(server, 'POST', '/v1/sessions', createRequest('Plan a greeting feature'));
    assert.equal(created.status, 200);
    await waitForStatus(server, created.body.id, 'requires_action', 20_000);
    const agentPid = loggedAgentPid(worker.stderr());
    const serviceProcesses = [...processTree(server.pid), ...processTree(worker.pid)];
    assert.ok(serviceProcesses.includes(agentPid), 'the agent runs under the worker');
    assert.ok(serviceProcesses.length >= 3, `the replica, the worker and the agent: ${serviceProcesses.join(' ')}`);
    for (const pid of serviceProcesses) {
      const shown = procExposure(pid);
      if (!shown) continue; // ended between the two looks
      for (const [what, text] of Object.entries(shown)) {
        assert.ok(!text.includes(database), `the database URL is in /proc/${pid}/${what}`);
        assert.ok(!text.includes(token), `the token is in /proc/${pid}/${what}`);
        assert.doesNotMatch(text, /(^|\0)ULTRAPLAN_(DATABASE_URL|SERVER_TOKEN)=/, `/proc/${pid}/${what}`);
      }
    }
  });

  it('refuses the database URL and a multi-user token from the environment, and a password in --store', async () => {
    const database = 'postgres://ultraplan:hunter2@127.0.0.1:1/none';
    const fromEnv = await runServerCli(['--insecure-no-auth'], { env: { ULTRAPLAN_DATABASE_URL: database } });
    assert.equal(fromEnv.code, 2);
    assert.match(fromEnv.stderr, /ULTRAPLAN_DATABASE_URL is not read: pass the URL in a file \(--database-url-file FILE/);
    const inArgv = await runServerCli(['worker', '--store', database, '--agent', 'scripted:examples/approve.json']);
    assert.equal(inArgv.code, 2);
    assert.match(inArgv.stderr, /--store holds a password, which every user of this machine can read in `ps`/);
    const tokenEnv = await runServerCli(['--store', 'postgres://ultraplan@127.0.0.1:1/none'], {
      env: { ULTRAPLAN_SERVER_TOKEN: 'a-token-in-the-environment' },
    });
    assert.equal(tokenEnv.code, 2);
    assert.match(tokenEnv.stderr, /ULTRAPLAN_SERVER_TOKEN is not read with --store or OIDC/);
  });

  it('agentEnvironment drops our secrets and keeps the rest, without touching its input', () => {
    const env = { PATH: '/usr/bin', HOME: '/home/me', ULTRAPLAN_SERVER_TOKEN: 'secret' };
    assert.deepEqual(agentEnvironment(env), { PATH: '/usr/bin', HOME: '/home/me' });
    assert.equal(env.ULTRAPLAN_SERVER_TOKEN, 'secret');
  });
});

// An agent plans from text nobody vetted (a prompt-injected README can steer it), so it must not
// hold our token: the real server, given its token in the environment, starts a real ACP agent
// process (the fake agent through the real spawn path), and the test reads that process's
// environment from /proc while it is waiting for a decision.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { agentEnvironment } from '../../../src/sessions/acp/agentProcess';
import { serversPerTest } from '../../support/serverProcess';
import { fakeRun, readAgentRecord, type FakeRun } from '../../support/fakeAcpAgent';
import { createRequest } from '../hostTestKit';
import { call, waitForStatus } from './serverTestKit';

describe('agents get no token of ours', function () {
  this.timeout(40_000);
  let run: FakeRun | undefined;

  const servers = serversPerTest();
  afterEach(async () => {
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

  it('agentEnvironment drops our secrets and keeps the rest, without touching its input', () => {
    const env = { PATH: '/usr/bin', HOME: '/home/me', ULTRAPLAN_SERVER_TOKEN: 'secret' };
    assert.deepEqual(agentEnvironment(env), { PATH: '/usr/bin', HOME: '/home/me' });
    assert.equal(env.ULTRAPLAN_SERVER_TOKEN, 'secret');
  });
});

// The session server (dist/server.mjs, a real child process) with `--agent acp:<command…>` and
// `--workspace DIR`, followed over HTTP by the real client and poller.
import { strict as assert } from 'node:assert';
import { pollForApprovedPlan } from '../../src/core/poller';
import { controlResponseEvent } from '../../src/core/protocol';
import { SessionsClient } from '../../src/client/sessionsClient';
import { HttpBackend } from '../../src/client/httpBackend';
import { runServerCli, startServer, type ServerProcess } from '../support/serverProcess';
import { fakeRun, readAgentRecord, waitForRecord, type FakeRun, permissionOutcomes } from '../support/fakeAcpAgent';
import { loggedAgentPid, waitGone } from '../support/processes';
import { sandboxSupport } from '../../src/agents/sandbox';
import { createRequest } from '../service/hostTestKit';
import { watchPhases } from '../support/pollPhases';
import { waitFor } from '../support/wait';

describe('ultraplan-server with an ACP agent', function () {
  this.timeout(40000);
  let run: FakeRun;
  let server: ServerProcess | undefined;

  afterEach(async () => {
    await server?.stop().catch(() => undefined);
    server = undefined;
    await run?.cleanup();
  });

  function agentSpec(argv: string[]): string {
    return `acp:${argv.map((arg) => JSON.stringify(arg)).join(' ')}`;
  }

  it('plans in --workspace: reject with feedback, then approve; the agent received both; SIGTERM leaves no agent behind', async () => {
    run = await fakeRun('claude-plan.json');
    server = await startServer({ agent: agentSpec(run.argv), extraArgs: ['--workspace', run.workspace, '--sandbox-share', run.recordDir] });
    const token = server.token;
    const client = new SessionsClient({ baseUrl: server.url, getToken: async () => token ?? '' });
    const backend = new HttpBackend({ client, preferStream: true });
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    let decisions = 0;
    const approved = await pollForApprovedPlan({
      sessionId: session.id,
      transport: backend.transport,
      pollIntervalMs: 100,
      timeoutMs: 20000,
      ...watchPhases((phase, detail) => {
        if (phase !== 'plan_ready' || !detail.pendingPlan?.requestId) return;
        decisions += 1;
        const decision =
          decisions === 1
            ? ({ behavior: 'deny', message: 'Name the function hello().' } as const)
            : ({ behavior: 'allow', updatedInput: { plan: detail.pendingPlan.plan ?? '' } } as const);
        void backend.sendEvents(session.id, [controlResponseEvent(detail.pendingPlan.requestId, decision)]);
      }),
    });
    assert.equal(approved.executionTarget, 'remote');
    assert.match(approved.plan, /v2/);
    assert.equal(approved.rejectCount, 1);

    // `--sandbox auto`: where this machine can, the agent plans in a read-only sandbox, and Approve
    // starts it again in a writable one to carry the plan out (this fake cannot load a session:
    // a fresh one, told the plan).
    const sandboxed = sandboxSupport().supported;
    // The approval reaches the log before the fake has written its own record of the answer.
    if (sandboxed) {
      await waitFor(() => readAgentRecord(run.record).filter((entry) => entry.kind === 'prompt'), {
        message: 'the carry-out prompt',
        timeoutMs: 8000,
        until: (prompts) => prompts.some((entry) => /Carry it out now/.test(String(entry.text))),
      });
    } else await waitForRecord(run.record, 'permission_outcome', 2);
    const record = readAgentRecord(run.record);
    const started = record.find((entry) => entry.kind === 'started');
    assert.equal(started?.cwd, run.workspace);
    assert.equal(record.find((entry) => entry.kind === 'session_new')?.cwd, run.workspace);
    assert.deepEqual(permissionOutcomes(record), sandboxed ? ['plan'] : ['plan', 'default']);
    assert.equal(record.filter((entry) => entry.kind === 'started').length, sandboxed ? 2 : 1);
    assert.match(String(record.filter((entry) => entry.kind === 'prompt')[1]?.text), /Name the function hello\(\)\./);
    assert.match(server.stderr(), /agent fake-acp-agent\.mjs \(ACP\)/);
    // The pid the agent sees of itself is its sandbox's; the server's log names the host's.
    const agentPid = loggedAgentPid(server.stderr());
    if (sandboxed) {
      assert.match(server.stderr(), /started .* \(pid \d+, sandboxed, workspace read-only\)/);
      assert.match(server.stderr(), /started .* \(pid \d+, sandboxed, workspace writable\)/);
    }

    await server.stop();
    server = undefined;
    assert.ok(await waitGone(agentPid), 'the agent outlived the server');
    await backend.dispose();
  });

  it('a server killed with SIGKILL does not leave its agent running (the agent sees its stdin close)', async () => {
    // No grandchild here: a SIGKILLed server cannot signal the group, only close the agent's stdin.
    run = await fakeRun({
      modes: { currentModeId: 'default', availableModes: [{ id: 'plan', name: 'Plan' }] },
      turns: [[{ chunk: 'Working…' }, { waitForCancel: true }]],
    });
    server = await startServer({ agent: agentSpec(run.argv), extraArgs: ['--workspace', run.workspace, '--sandbox-share', run.recordDir] });
    const token = server.token;
    const client = new SessionsClient({ baseUrl: server.url, getToken: async () => token ?? '' });
    await client.createSession(createRequest());
    await waitForRecord(run.record, 'prompt');
    const agentPid = loggedAgentPid(server.stderr());
    await server.kill();
    server = undefined;
    assert.ok(await waitGone(agentPid, 8000), 'the agent outlived a killed server');
  });

  it('refuses a --workspace that is not a directory, and an empty acp command, with usage errors', async () => {
    const missing = await runServerCli([
      '--data-dir',
      '/tmp/ultraplan-unused',
      '--agent',
      'acp:claude',
      '--workspace',
      '/nonexistent/ws',
      '--insecure-no-auth',
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--workspace \/nonexistent\/ws is not a directory/);
    const empty = await runServerCli(['--data-dir', '/tmp/ultraplan-unused', '--agent', 'acp:', '--insecure-no-auth']);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /--agent: acp needs a command or one of claude, gemini, codex, qwen/);
  });
});

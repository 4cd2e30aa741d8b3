// The fake ACP agent through the real SessionHost, InProcessBackend and pollForApprovedPlan: the
// path the editor takes with the embedded default, scanner and poller unchanged.
import { strict as assert } from 'node:assert';
import { pollForApprovedPlan, type PollPhase } from '../../src/core/poller';
import { UltraplanPollError } from '../../src/core/errors';
import { controlResponseEvent, teleportDenyMessage } from '../../src/core/protocol';
import { createAcpAgentFactory } from '../../src/agents/acp/acpAgentFactory';
import { InProcessBackend } from '../../src/service/inProcessBackend';
import { SessionHost } from '../../src/service/host/sessionHost';
import { fakeRun, readAgentRecord, received, waitForRecord, type FakeRun, permissionOutcomes } from '../support/fakeAcpAgent';
import { waitGone } from '../support/processes';
import { allEvents, createRequest, decideFirstPlan, replyThenApprove as replyAndApprove } from '../service/hostTestKit';
import { watchPhases, type PollPhaseDetail } from '../support/pollPhases';

const FAST = { pollIntervalMs: 50, timeoutMs: 15000 };

describe('ACP agents through SessionHost and the poller', function () {
  this.timeout(25000);
  let run: FakeRun;
  let backend: InProcessBackend;
  let host: SessionHost;

  async function open(scenario: string, options: { firstEventTimeoutMs?: number } = {}): Promise<void> {
    run = await fakeRun(scenario);
    host = new SessionHost({
      agentFactory: await createAcpAgentFactory({ argv: run.argv, cwd: run.workspace, label: 'Fake (ACP)', stopGraceMs: 500, ...options }),
    });
    backend = new InProcessBackend({ host, label: 'Embedded · Fake (ACP)' });
  }

  async function agentPid(): Promise<number> {
    const [started] = await waitForRecord(run.record, 'started');
    return started?.pid as number;
  }

  /** Plans on `scenario`, replies `reply` to the agent's first question, approves the plan as shown. */
  async function replyThenApprove(
    scenario: string,
    reply: string,
  ): Promise<{ question: string | null; result: Awaited<ReturnType<typeof pollForApprovedPlan>> }> {
    await open(scenario);
    const session = await backend.createSession(createRequest());
    return replyAndApprove(backend, session.id, reply, FAST);
  }

  afterEach(async () => {
    await backend?.dispose();
    if (run) {
      const started = readAgentRecord(run.record).filter((entry) => entry.kind === 'started');
      for (const entry of started) assert.ok(await waitGone(entry.pid as number), `agent ${String(entry.pid)} left behind`);
      await run.cleanup();
    }
  });

  it('plan, reject with feedback, revised plan, approve: the poller sees it all and the agent received both decisions', async () => {
    await open('claude-plan.json');
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    const phases: Array<{ phase: PollPhase; detail: PollPhaseDetail }> = [];
    let decisions = 0;
    const approved = await pollForApprovedPlan({
      sessionId: session.id,
      transport: backend.transport,
      ...FAST,
      ...watchPhases((phase, detail) => {
        phases.push({ phase, detail });
        if (phase !== 'plan_ready' || !detail.pendingPlan?.requestId) return;
        const requestId = detail.pendingPlan.requestId;
        decisions += 1;
        const decision =
          decisions === 1
            ? ({ behavior: 'deny', message: 'Handle an empty name too.' } as const)
            : ({ behavior: 'allow', updatedInput: { plan: detail.pendingPlan.plan ?? '' } } as const);
        void backend.sendEvents(session.id, [controlResponseEvent(requestId, decision)]);
      }),
    });
    assert.equal(approved.executionTarget, 'remote');
    assert.equal(approved.plan, '# Add a greeting (v2)\n\n1. Write greet(name)\n2. Test it');
    assert.equal(approved.rejectCount, 1);
    const ready = phases.filter((entry) => entry.phase === 'plan_ready');
    assert.equal(ready[0]?.detail.pendingPlan?.plan, '# Add a greeting\n\n1. Write greet()\n2. Test it');
    assert.equal(ready.length, 2);

    // The approval reaches the log before the fake has written its own record of the answer.
    await waitForRecord(run.record, 'permission_outcome', 2);
    const record = readAgentRecord(run.record);
    assert.deepEqual(permissionOutcomes(record), ['plan', 'default']);
    const prompts = record.filter((entry) => entry.kind === 'prompt').map((entry) => String(entry.text));
    assert.match(prompts[1] ?? '', /Handle an empty name too\./);

    const pid = await agentPid();
    await backend.archive(session.id);
    assert.ok(await waitGone(pid), 'archive left the agent running');
  });

  it('teleport: the poller returns a local plan and the agent received the reject and a cancel', async () => {
    await open('claude-plan.json');
    const session = await backend.createSession(createRequest());
    const result = await decideFirstPlan(backend, session.id, FAST, (plan) => ({ behavior: 'deny', message: teleportDenyMessage(plan) }));
    assert.equal(result.executionTarget, 'local');
    assert.equal(result.plan, '# Add a greeting\n\n1. Write greet()\n2. Test it');
    await waitForRecord(run.record, 'turn_end');
    const record = readAgentRecord(run.record);
    assert.equal(received(record, 'session/cancel').length, 1);
    assert.deepEqual(permissionOutcomes(record), ['plan']);
  });

  it('a question: needs_input with the question, the answer reaches the agent, then a plan', async () => {
    const { question, result } = await replyThenApprove('question.json', 'SQLite, please.');
    assert.equal(question, 'Which database should I use: Postgres or SQLite?');
    assert.equal(result.plan, 'Use SQLite.');
    const prompts = readAgentRecord(run.record)
      .filter((entry) => entry.kind === 'prompt')
      .map((entry) => entry.text);
    assert.deepEqual(prompts, ['Plan the change', 'SQLite, please.']);
  });

  it("a question asked as an elicitation (Claude's AskUserQuestion) is needs_input; the reply answers it in-turn", async () => {
    const { question, result } = await replyThenApprove('ask-question.json', 'sqlite');
    assert.equal(question, 'Which database should the service use?\n- Postgres\n- SQLite');
    assert.equal(result.plan, 'Use SQLite.');
    const record = readAgentRecord(run.record);
    assert.deepEqual(record.find((entry) => entry.kind === 'elicitation_response')?.response, {
      action: 'accept',
      content: { question_0: 'SQLite' },
    });
    // Answered in the same turn: no second prompt.
    assert.equal(record.filter((entry) => entry.kind === 'prompt').length, 1);
  });

  it('a crash fails the poll as terminated; the log holds the readable message with the stderr tail', async () => {
    await open('crash.json');
    const session = await backend.createSession(createRequest());
    await assert.rejects(
      pollForApprovedPlan({ sessionId: session.id, transport: backend.transport, ...FAST }),
      (error: unknown) =>
        error instanceof UltraplanPollError && error.reason === 'terminated' && /error_during_execution/.test(error.message),
    );
    const result = allEvents(host, session.id).find((event) => event.type === 'result') as { result?: string } | undefined;
    assert.match(result?.result ?? '', /exited with code 3 unexpectedly[\s\S]*fatal: the model backend went away/);
    assert.equal(host.getSession(session.id).session_status, 'idle');
  });

  it('a prompt that never answers ends the poll with the bounded message', async () => {
    await open('hang.json', { firstEventTimeoutMs: 700 });
    const session = await backend.createSession(createRequest());
    await assert.rejects(
      pollForApprovedPlan({ sessionId: session.id, transport: backend.transport, ...FAST }),
      (error: unknown) => error instanceof UltraplanPollError && error.reason === 'terminated',
    );
    const result = allEvents(host, session.id).find((event) => event.type === 'result') as { result?: string } | undefined;
    assert.match(result?.result ?? '', /sent nothing for 1 s after the prompt/);
  });

  it('writes while planning are refused and logged in the session log', async () => {
    await open('write-while-planning.json');
    const session = await backend.createSession(createRequest());
    await waitForRecord(run.record, 'turn_end');
    const refused = allEvents(host, session.id).filter(
      (event) => event.type === 'system' && (event as { subtype?: string }).subtype === 'acp_refused',
    );
    assert.equal(refused.length, 3);
    const record = readAgentRecord(run.record);
    assert.equal(record.find((entry) => entry.kind === 'write_outcome')?.ok, false);
  });

  it('closing the host (extension deactivation) ends every agent process', async () => {
    await open('cancelled.json');
    await backend.createSession(createRequest());
    const pid = await agentPid();
    const [grandchild] = await waitForRecord(run.record, 'grandchild');
    await backend.dispose();
    assert.ok(await waitGone(pid), 'agent left behind');
    assert.ok(await waitGone(grandchild?.pid as number), 'grandchild left behind');
  });
});

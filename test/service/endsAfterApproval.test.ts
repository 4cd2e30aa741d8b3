// The service's ACP agent process ends with the approved plan's result (real SessionHost, real
// AcpAgent, the fake ACP agent as a real child process), and not before: a rejected plan's turn
// also ends with a result, and the agent must keep running for the revision.
import { strict as assert } from 'node:assert';
import { readFile } from 'node:fs/promises';
import { approvalWithNotesEvents, notesPrompt } from '../../src/core/approvalNotes';
import { AGENT_RESTARTED_SUBTYPE, controlResponseEvent, userMessageEvent, type AnyEvent } from '../../src/core/protocol';
import { endsAfterApprovedResult } from '../../src/service/local/endsAfterApproval';
import { createAcpAgentFactory } from '../../src/agents/acp/acpAgentFactory';
import { SessionHost } from '../../src/service/host/sessionHost';
import { FileSessionStore } from '../../src/service/store/sessionStore';
import { tempDir } from '../support/serverProcess';
import { fakeAgentScenario, fakeRun, readAgentRecord, waitForRecord, type FakeRun } from '../support/fakeAcpAgent';
import { isAlive, waitGone } from '../support/processes';
import { allEvents, createRequest } from './hostTestKit';
import { waitFor } from '../support/wait';
import { endFakeRun, fakeAgentFactory } from '../agents/fakeAgentKit';

async function waitForEvent(
  host: SessionHost,
  id: string,
  match: (e: AnyEvent & { id: string }) => boolean,
  what: string,
  count = 1,
): Promise<Array<AnyEvent & { id: string }>> {
  return waitFor(() => (allEvents(host, id) as Array<AnyEvent & { id: string }>).filter(match), {
    message: what,
    until: (found) => found.length >= count,
  });
}

function requestId(event: AnyEvent | undefined): string {
  const id = (event as { request_id?: unknown } | undefined)?.request_id;
  if (typeof id !== 'string') throw new Error(`no request_id on ${JSON.stringify(event)}`);
  return id;
}

const isPlanRequest = (e: AnyEvent): boolean =>
  e.type === 'control_request' && (e as { request?: { tool_name?: string } }).request?.tool_name === 'ExitPlanMode';

describe('embedded ACP agent lifetime', function () {
  this.timeout(25_000);
  let run: FakeRun | undefined;
  let host: SessionHost | undefined;

  afterEach(async () => {
    await host?.close();
    await endFakeRun(run);
  });

  /** The fake agent behind the real host, its process ended by endsAfterApprovedResult; one session started. */
  async function startSession(scenario: string | object, dataDir?: string) {
    run = await fakeRun(scenario);
    const lines: string[] = [];
    const sessionHost = new SessionHost({
      agentFactory: endsAfterApprovedResult(await fakeAgentFactory(run), (line) => lines.push(line)),
      ...(dataDir ? { store: new FileSessionStore(dataDir) } : {}),
    });
    host = sessionHost;
    const session = await sessionHost.createSession(createRequest('Plan a greeting feature'));
    const [started] = await waitForRecord(run.record, 'started');
    return { host: sessionHost, lines, session, pid: started?.pid as number, record: run.record };
  }

  it('keeps the agent through a rejection, then ends its process once the approved plan has its result', async () => {
    const { host, lines, session, pid } = await startSession('claude-plan.json');

    const [first] = await waitForEvent(host, session.id, isPlanRequest, 'the first plan');
    await host.appendEvents(session.id, [controlResponseEvent(requestId(first), { behavior: 'deny', message: 'Greet someone.' })]);
    await waitForEvent(host, session.id, (e) => e.type === 'result', 'the rejected turn to end');
    const second = (await waitForEvent(host, session.id, isPlanRequest, 'the revised plan', 2))[1];
    assert.equal(isAlive(pid), true, 'a rejected turn ends with a result, but the agent must keep running');

    await host.appendEvents(session.id, [
      controlResponseEvent(requestId(second), { behavior: 'allow', updatedInput: { plan: '# Add a greeting (v2)' } }),
    ]);
    const results = await waitForEvent(host, session.id, (e) => e.type === 'result', 'the approved turn to end', 2);
    assert.equal((results[1] as { subtype?: string }).subtype, 'success');
    assert.ok(await waitGone(pid), "the agent process ended after the approved plan's result");
    assert.deepEqual(lines, [`session ${session.id}: the approved plan's turn ended; stopping Fake (ACP)`]);
    // Stopping after the result adds nothing to the session's log: the outcome stays the last word.
    const last = allEvents(host, session.id).at(-1) as AnyEvent;
    assert.equal(last.type, 'result');
  });

  it('a message after the process ended with the approved outcome (Continue) starts a fresh turn that carries on, in the same session', async () => {
    const planned = JSON.parse(await readFile(fakeAgentScenario('claude-plan.json'), 'utf8')) as Record<string, unknown>;
    const continued = 'Carry out step 3 now: it was not done.';
    const scenario = { ...planned, routes: [{ promptIncludes: [continued], steps: [{ chunk: 'Step 3 is done.' }] }] };
    const { host, lines, session, pid, record } = await startSession(scenario);
    const [plan] = await waitForEvent(host, session.id, isPlanRequest, 'the plan');
    await host.appendEvents(session.id, [controlResponseEvent(requestId(plan), { behavior: 'allow', updatedInput: {} })]);
    await waitForEvent(host, session.id, (e) => e.type === 'result', 'the approved turn to end');
    assert.ok(await waitGone(pid), 'the agent process ended with the outcome');

    await host.appendEvents(session.id, [userMessageEvent(continued)]);
    const started = await waitForRecord(record, 'started', 2);
    const prompts = (await waitForRecord(record, 'prompt', 2)).filter((e) => e.pid === started[1]?.pid);
    assert.equal(prompts.length, 1, 'the new process was prompted once');
    assert.match(String(prompts[0]?.text), /Carry out step 3 now: it was not done\./, 'the message reached the new turn');
    const results = await waitForEvent(host, session.id, (e) => e.type === 'result', 'the continued turn to end', 2);
    assert.equal((results[1] as { subtype?: string }).subtype, 'success');
    assert.ok(
      allEvents(host, session.id).some((e) => e.type === 'system' && (e as { subtype?: string }).subtype === AGENT_RESTARTED_SUBTYPE),
      'the session says a new agent turn started',
    );
    assert.equal(host.listSessions().length, 1, 'the same session, no new one');
    assert.ok(await waitGone(started[1]?.pid as number), 'the new process ends with its outcome too');
    assert.equal(lines.filter((line) => line.includes("the approved plan's turn ended")).length, 2);
  });

  /** Plans once, is approved with notes in one batch; returns the results and the fake agent's prompts. */
  async function approveWithNotes(scenario: string | object, results: number) {
    const { host, lines, session, pid, record } = await startSession(scenario);
    const [plan] = await waitForEvent(host, session.id, isPlanRequest, 'the plan');
    const planText = String((plan as { request?: { input?: { plan?: unknown } } }).request?.input?.plan ?? '');
    await host.appendEvents(session.id, approvalWithNotesEvents('next_message', requestId(plan), planText, 'Keep greet() pure.'));
    const ended = await waitForEvent(host, session.id, (e) => e.type === 'result', 'the turns to end', results);
    const prompts = await waitForRecord(record, 'prompt', 2);
    assert.ok(await waitGone(pid), 'the agent process ended once the notes were answered');
    assert.deepEqual(lines, [`session ${session.id}: the approved plan's turn ended; stopping Fake (ACP)`]);
    // Nothing after the stop: the last result stays the last word, and no other turn ended.
    assert.equal(allEvents(host, session.id).filter((e) => e.type === 'result').length, results);
    return { ended, prompts };
  }

  it('approved with notes (an agent that takes no message mid-turn): the notes are the next prompt; the process ends after that turn', async () => {
    const claudeShaped = JSON.parse(await readFile(fakeAgentScenario('claude-0101-plan.json'), 'utf8')) as Record<string, unknown>;
    const { ended, prompts } = await approveWithNotes({ ...claudeShaped, agentInfo: { name: 'fake-generic-agent', version: '1.0.0' } }, 2);
    assert.deepEqual(
      ended.map((r) => (r as { subtype?: string }).subtype),
      ['success', 'success'],
    );
    assert.equal(prompts[1]?.text, notesPrompt('Keep greet() pure.'));
  });

  it("approved with notes (Claude's adapter): the notes join the running turn, which ends once, then the process ends", async () => {
    const { ended, prompts } = await approveWithNotes('claude-0101-plan.json', 1);
    assert.equal(prompts[1]?.text, notesPrompt('Keep greet() pure.'));
    assert.equal(ended.length, 1, 'one result for the turn');
  });

  it('a finished session stays finished across a restart of its host: no agent is started again, no notice is added', async () => {
    const dataDir = tempDir('ultraplan-ends-data-');
    const { host: first, session, pid, record } = await startSession('claude-plan.json', dataDir);
    const [plan] = await waitForEvent(first, session.id, isPlanRequest, 'the plan');
    await first.appendEvents(session.id, [controlResponseEvent(requestId(plan), { behavior: 'allow', updatedInput: {} })]);
    await waitForEvent(first, session.id, (e) => e.type === 'result', 'the approved turn to end');
    assert.ok(await waitGone(pid), 'the agent process ended');
    const logged = allEvents(first, session.id).length;
    await first.close();

    const again = new SessionHost({
      agentFactory: endsAfterApprovedResult(await createAcpAgentFactory({ argv: run!.argv, cwd: run!.workspace, label: 'Fake (ACP)' })),
      store: new FileSessionStore(dataDir),
    });
    host = again;
    // load() resumes every live session's agent before it returns: a resumed agent would be started by now.
    await again.load();
    assert.equal(readAgentRecord(record).filter((e) => e.kind === 'started').length, 1, 'the agent was started once, before the restart');
    assert.equal(allEvents(again, session.id).length, logged, 'no agent_lost or resumed notice on a finished session');
    assert.equal(again.getSession(session.id).session_status, 'idle');
  });
});

// Continue after the execution ended, on the real session host with the fake ACP agent (a real
// process): a two-step plan carried out without its second step, the session completed; Continue
// (what the verification's Continue and a thread's Fix send) goes to the same session, which the
// followed session (the real FollowedSession) shows executing again from the cursor it read last,
// its checklist filling in for the continued step, until that turn's result: completed again, the
// verification's start rule sees a new end, and verifying the workspace again finds every step
// done. Each event is read once, also through a dropped read; a reload in the middle of the turn
// (the follower made again from its persisted form) follows it to the same end, and the finished
// session made again from its persisted form shows the same checklist.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { createAcpAgentFactory } from '../../../src/agents/acp/acpAgentFactory';
import { bindingFor } from '../../../src/core/decision';
import { endedExecutions } from '../../../src/core/execution/verificationWords';
import { toPersisted } from '../../../src/core/sessionRecord';
import type { SessionBackend } from '../../../src/core/sessionBackend';
import type { SessionSnapshot } from '../../../src/core/sessionSnapshot';
import type { SessionTransport } from '../../../src/core/transport';
import { continueAfterExecution } from '../../../src/extension/sessions/continueAfterExecution';
import { FollowedSession, type FollowedSessionOptions } from '../../../src/extension/sessions/followedSession';
import { loadPlanSteps } from '../../../src/extension/sessions/planSteps';
import type { SessionNotifier } from '../../../src/extension/sessions/sessionNotifier';
import { SessionHost } from '../../../src/service/host/sessionHost';
import { InProcessBackend } from '../../../src/service/inProcessBackend';
import { allEvents, createRequest } from '../../service/hostTestKit';
import { recordWorkspace, verifyWorkspace } from '../../agents/executionKit';
import { fakeAgentScenario, fakeRun, readAgentRecord, type FakeRun } from '../../support/fakeAcpAgent';
import { quietLog } from '../../support/followedSession';
import { waitGone } from '../../support/processes';
import { waitFor } from '../../support/wait';

/** These sessions were followed live: a Continue never needs them attached again. */
const notRestored = {
  isDetached: () => false,
  sendReattached: async (): Promise<never> => assert.fail('a live session was attached again'),
};

const OLD_PLAN = '# Update app.ts\n\n1. Set original to false\n2. Document the change in the README\n';
const PLAN = '# Update app.ts\n\n1. Set original to false in `src/app.ts`.\n2. Document the change in `README.md`.\n';
const CONTINUE = 'Verification against the approved plan found step 2 missing. Carry out step 2 now.';
const README = '# Demo project\n\n`original` is false now.\n';

const permission = (id: string, title: string) => ({
  toolCall: { toolCallId: id, title, kind: 'edit' },
  options: [
    { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
    { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
  ],
});

/** execute-with-progress.json with a plan naming its files, and a second turn: step 2 done with an edit of README.md. */
function scenario(): object {
  const base = JSON.parse(
    readFileSync(fakeAgentScenario('execute-with-progress.json'), 'utf8').split(JSON.stringify(OLD_PLAN)).join(JSON.stringify(PLAN)),
  ) as {
    turns: unknown[][];
  };
  const second = [
    { chunk: 'Carrying out step 2.' },
    {
      plan: [
        { content: 'Set original to false', status: 'completed', priority: 'medium' },
        { content: 'Documenting the change in the README', status: 'in_progress', priority: 'medium' },
      ],
    },
    {
      toolCall: {
        toolCallId: 'edit-2',
        title: 'Edit README.md',
        kind: 'edit',
        status: 'pending',
        locations: [{ path: '{{cwd}}/README.md' }],
      },
    },
    {
      permission: permission('edit-2', 'Edit README.md'),
      then: {
        allow: [
          { toolCallUpdate: { toolCallId: 'edit-2', status: 'in_progress' } },
          { writeFile: { path: '{{cwd}}/README.md', content: README } },
          { toolCallUpdate: { toolCallId: 'edit-2', status: 'completed' } },
          {
            plan: [
              { content: 'Set original to false', status: 'completed', priority: 'medium' },
              { content: 'Document the change in the README', status: 'completed', priority: 'medium' },
            ],
          },
          { chunk: 'Step 2 is done: README.md documents the change.' },
        ],
        '*': [{ chunk: 'The edit was not made.' }],
      },
    },
  ];
  return { ...base, turns: [...base.turns, second] };
}

/** A transport that keeps every event id it returned, and drops the reads it is told to (a connection lost). */
class CountingTransport implements SessionTransport {
  readonly ids: string[] = [];
  drops = 0;
  constructor(private readonly inner: SessionTransport) {}
  async readEvents(sessionId: string, afterId: string | null, signal?: AbortSignal) {
    if (this.drops > 0) {
      this.drops--;
      throw new TypeError('fetch failed: socket hang up');
    }
    const read = await this.inner.readEvents(sessionId, afterId, signal);
    for (const event of read.events) this.ids.push(String((event as { id?: unknown }).id));
    return read;
  }
  getStatus(sessionId: string, signal?: AbortSignal) {
    return this.inner.getStatus(sessionId, signal);
  }
}

/** Allows every tool permission the agent asks, as the person would. */
const allowing: SessionNotifier = {
  say() {},
  showReview() {},
  openExternal() {},
  isReviewShowing: () => true,
  askPermission: async (asker, request, binding) => {
    await asker.answerPermission(binding, request.requestId, 'allow');
  },
};

describe('Continue after the execution ended (real session host, fake ACP agent)', function () {
  this.timeout(60_000);
  let run: FakeRun | undefined;
  let backend: InProcessBackend | undefined;
  const sessions: FollowedSession[] = [];

  afterEach(async () => {
    for (const s of sessions.splice(0)) {
      s.dispose();
      await s.settled();
    }
    await backend?.dispose();
    backend = undefined;
    if (run) {
      for (const entry of readAgentRecord(run.record).filter((e) => e.kind === 'started')) {
        assert.ok(await waitGone(entry.pid as number), `agent ${String(entry.pid)} left behind`);
      }
      await run.cleanup();
      run = undefined;
    }
  });

  async function executed() {
    await loadPlanSteps();
    run = await fakeRun(scenario());
    recordWorkspace(run.workspace);
    const host = new SessionHost({
      agentFactory: await createAcpAgentFactory({
        argv: run.argv,
        cwd: run.workspace,
        label: 'Fake (ACP)',
        afterApproval: 'default',
        stopGraceMs: 500,
      }),
    });
    backend = new InProcessBackend({ host, label: 'Embedded · Fake (ACP)' });
    const created = await backend.createSession(createRequest('Update app.ts'));
    const transport = new CountingTransport(backend.transport);
    const live: SessionBackend = Object.assign(Object.create(backend) as InProcessBackend, { transport });
    const phases: string[] = [];
    const snapshots: SessionSnapshot[] = [];
    const options = (from: FollowedSessionOptions['from']): FollowedSessionOptions => ({
      backend: live,
      log: quietLog,
      notifier: allowing,
      pollIntervalMs: 20,
      timeoutMs: 30_000,
      onSnapshot: (_s, snapshot) => {
        snapshots.push(snapshot);
        if (phases.at(-1) !== snapshot.state.phase) phases.push(snapshot.state.phase);
      },
      from,
    });
    const session = new FollowedSession(
      options({ fresh: { key: `embedded:${created.id}`, sessionId: created.id, title: 'app.ts', demo: false } }),
    );
    sessions.push(session);
    session.start();
    await waitFor(() => session.canDecide, { message: 'the plan to decide', timeoutMs: 20_000 });
    const pending = session.pendingPlan!;
    assert.equal(pending.plan, PLAN);
    assert.deepEqual(await session.decisions.approve(bindingFor(created.id, pending.toolUseId, pending.plan)), { sent: true });
    await waitFor(() => session.phase === 'completed', { message: 'the execution to end', timeoutMs: 20_000 });
    const steps = () => session.snapshot.panel.execution?.steps.map((s) => [s.status, s.files]);
    assert.deepEqual(steps(), [
      ['done', ['src/app.ts']],
      ['pending', []],
    ]);
    return { host, session, transport, phases, snapshots, steps, options, id: created.id, workspace: run.workspace };
  }

  it('follows the continued turn from the cursor to its result: executing again, the step filled in, completed, verified clean; each event read once through a dropped read', async () => {
    const { host, session, transport, phases, snapshots, steps, id, workspace } = await executed();
    const seen = new Map<string, string>();
    endedExecutions(seen, [{ key: session.key, phase: session.phase, planHash: 'h' }]);
    const readBefore = transport.ids.length;
    transport.drops = 1;

    assert.deepEqual(await continueAfterExecution(session, CONTINUE, notRestored), { sent: true, followed: true });
    assert.equal(session.phase, 'executing', 'executing again at once');
    assert.equal(session.snapshot.inbox.attention, 'executing');
    assert.match(session.snapshot.inbox.progress ?? '', /^Executing: 1 of 2 steps done/);
    assert.equal(endedExecutions(seen, [{ key: session.key, phase: session.phase, planHash: 'h' }]).length, 0);

    await waitFor(() => steps()?.[1]?.[0] === 'in_progress' || session.phase === 'completed', {
      message: 'step 2 under way',
      timeoutMs: 20_000,
    });
    await waitFor(() => session.phase === 'completed', { message: 'the continued turn to end', timeoutMs: 20_000 });
    assert.deepEqual(steps(), [
      ['done', ['src/app.ts']],
      ['done', ['README.md']],
    ]);
    assert.equal(session.snapshot.panel.execution?.summary, 'Completed: 2 of 2 steps reported done');
    assert.match(session.state.outcome?.text ?? '', /Step 2 is done: README\.md documents the change\./);
    assert.deepEqual(phases.slice(-3), ['completed', 'executing', 'completed']);
    // The verification's start rule (verificationSetup.ts) sees a new end.
    assert.deepEqual(
      endedExecutions(seen, [{ key: session.key, phase: session.phase, planHash: 'h' }]).map((e) => e.key),
      [session.key],
    );
    assert.ok(
      snapshots.some((s) => s.panel.execution?.steps[1]?.status === 'in_progress'),
      'the checklist showed step 2 in progress',
    );

    // Every event of the log read once: none twice, none skipped (the dropped read was tried again).
    const log = allEvents(host, id).map((e) => String(e.id));
    assert.equal(new Set(transport.ids).size, transport.ids.length, 'no event read twice');
    assert.deepEqual(transport.ids, log.slice(0, transport.ids.length));
    assert.equal(transport.ids.length, log.length, 'every event read');
    assert.ok(transport.ids.length > readBefore);
    assert.equal(transport.drops, 0, 'the dropped read happened');
    assert.equal(readFileSync(`${workspace}/README.md`, 'utf8'), README);
    assertAllStepsDoneWithoutStray(await verifyWorkspace(workspace, PLAN, { done: 2, total: 2 }));
  });

  it('a reload during the continued turn: the follower made again from its persisted form replays the log and ends at that turn’s result, not the first', async () => {
    const { session, options, host, id } = await executed();
    assert.deepEqual(await continueAfterExecution(session, CONTINUE, notRestored), { sent: true, followed: true });
    const persisted = toPersisted(session.snapshot);
    assert.equal(persisted.finished, false);
    assert.equal(persisted.phase, 'executing');
    // The window closes mid-turn (its follower stops), and the next one restores it.
    session.dispose();
    await session.settled();
    const restored = new FollowedSession(options({ restored: persisted }));
    sessions.push(restored);
    restored.start();
    await waitFor(() => allEvents(host, id).filter((e) => e.type === 'result').length === 2, {
      message: 'the continued turn’s result',
      timeoutMs: 20_000,
    });
    await waitFor(() => restored.phase === 'completed', { message: 'the restored follower to see it end', timeoutMs: 20_000 });
    assert.match(restored.state.outcome?.text ?? '', /Step 2 is done/);
    assert.deepEqual(
      restored.snapshot.panel.execution?.steps.map((s) => [s.status, s.files]),
      [
        ['done', ['src/app.ts']],
        ['done', ['README.md']],
      ],
    );
    // And once more, from the finished form: the outcome and the plan are what the next window shows.
    const again = new FollowedSession(options({ restored: toPersisted(restored.snapshot) }));
    sessions.push(again);
    assert.equal(again.phase, 'completed');
    assert.match(again.state.outcome?.text ?? '', /Step 2 is done/);
    assert.equal(again.snapshot.revisions.at(-1)?.status, 'approved');
    assert.deepEqual(again.snapshot.panel.execution, restored.snapshot.panel.execution, 'the checklist as it was');
    assert.equal(again.snapshot.inbox.progress, 'Completed: 2 of 2 steps reported done');
  });
});

/** Every step done; this execution changed no file outside the plan. */
function assertAllStepsDoneWithoutStray(verified: Awaited<ReturnType<typeof verifyWorkspace>>): void {
  assert.deepEqual(verified.files, ['README.md', 'src/app.ts']);
  const { outcome } = verified;
  assert.equal(outcome.kind, 'verified');
  if (outcome.kind !== 'verified') return;
  assert.deepEqual(
    outcome.steps.map((s) => [s.id, s.verdict]),
    [
      ['1', 'done'],
      ['2', 'done'],
    ],
  );
  assert.deepEqual(outcome.outOfPlan, []);
}

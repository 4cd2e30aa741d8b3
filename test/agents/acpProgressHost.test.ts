// The execution's progress end to end: the fake ACP agent (a real process, scenario
// execute-with-progress.json) reports a todo list while planning and after Approve, and edits a
// file with permission; the session host writes ultraplan_progress events, and a session model fed
// the session's log, as the editor feeds it, shows the approved plan's checklist with the file
// under its step. Nothing while planning is progress.
import { strict as assert } from 'node:assert';
import { planHash } from '../../src/core/decision';
import { PROGRESS_SUBTYPE } from '../../src/core/execution';
import { permissionResponseEvent, ToolPermissionTracker } from '../../src/core/permissionRequests';
import { followUntilResult } from '../../src/core/poller';
import { InProcessBackend } from '../../src/service/inProcessBackend';
import { SessionHost } from '../../src/service/host/sessionHost';
import { allEvents, approveAsShown, createRequest, decideFirstPlan } from '../service/hostTestKit';
import { fakeRun, type FakeRun } from '../support/fakeAcpAgent';
import { endFakeRun, fakeAgentFactory, modelOfLog } from './fakeAgentKit';

const FAST = { pollIntervalMs: 50, timeoutMs: 15000 };
const PLAN = '# Update app.ts\n\n1. Set original to false\n2. Document the change in the README\n';

describe('ACP: the approved plan’s progress through the session host', function () {
  this.timeout(25000);
  let run: FakeRun | undefined;
  let backend: InProcessBackend | undefined;

  afterEach(async () => {
    await backend?.dispose();
    await endFakeRun(run);
  });

  it('writes the todo lists and the edited file after approval, bound to the approved plan, and the model shows them as its checklist', async () => {
    run = await fakeRun('execute-with-progress.json');
    const host = new SessionHost({
      agentFactory: await fakeAgentFactory(run, { afterApproval: 'default' }),
    });
    backend = new InProcessBackend({ host, label: 'Embedded · Fake (ACP)' });
    const session = await backend.createSession(createRequest('Update app.ts'));
    const tracker = new ToolPermissionTracker();
    const answers: Array<Promise<void>> = [];
    const allow = (batch: Parameters<ToolPermissionTracker['ingestParsed']>[0]) => {
      for (const request of tracker.ingestParsed(batch).opened)
        answers.push(backend!.sendEvents(session.id, [permissionResponseEvent(request, 'allow')]));
    };
    const approved = await decideFirstPlan(backend, session.id, FAST, approveAsShown, undefined, (poll) => allow(poll.batch));
    const result = await followUntilResult({
      sessionId: session.id,
      transport: backend.transport,
      ...FAST,
      scanner: approved.scanner,
      initialCursor: approved.cursor,
      onPoll: (poll) => allow(poll.batch),
    });
    await Promise.all(answers);
    assert.equal(result.subtype, 'success');

    const events = allEvents(host, session.id);
    const progress = events.filter((e) => e.type === 'system' && e.subtype === PROGRESS_SUBTYPE);
    assert.equal(progress.length, 3, 'two todo lists and one file; the list sent while planning is not progress');
    for (const event of progress) assert.equal(event.plan_hash, planHash(PLAN));

    // The editor's path: the log parsed once, the scanner, the one reducer.
    const model = modelOfLog(events);
    const execution = model.snapshot.panel.execution;
    assert.deepEqual(
      execution?.steps.map((s) => [s.status, s.title, s.files]),
      [
        ['done', 'Set original to false', ['src/app.ts']],
        ['pending', 'Document the change in the README', []],
      ],
    );
    assert.equal(execution?.summary, 'Completed: 1 of 2 steps reported done');
    assert.equal(model.snapshot.inbox.progress, 'Completed: 1 of 2 steps reported done');
  });
});

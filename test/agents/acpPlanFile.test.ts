// A plan file carried out by an ACP agent (the fake agent, a real process, scenario
// execute-plan-file.json): the session host holds the file's plan until Approve, then starts the
// agent out of plan mode; the agent's todo list is written as ultraplan_progress bound to the
// approved plan's hash, and a session model fed the log shows the plan's checklist from it.
import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { planHash } from '../../src/core/decision';
import { PROGRESS_SUBTYPE } from '../../src/core/execution';
import { planFileOf, planFileSessionRequest } from '../../src/core/planFileSession';
import { controlResponseEvent } from '../../src/core/protocol';
import { SessionHost } from '../../src/service/host/sessionHost';
import { allEvents, pendingPlanRequest, types, waitForStatus } from '../service/hostTestKit';
import { fakeRun, readAgentRecord, type FakeRun } from '../support/fakeAcpAgent';
import { waitFor } from '../support/wait';
import { endFakeRun, fakeAgentFactory, modelOfLog } from './fakeAgentKit';

const PLAN = '# Update app.ts\n\n1. Set original to false\n2. Document the change in the README\n';

describe('ACP: a plan file carried out', function () {
  this.timeout(25000);
  let run: FakeRun | undefined;
  let host: SessionHost | undefined;

  afterEach(async () => {
    await host?.close();
    await endFakeRun(run);
  });

  it('starts no agent before Approve, then reports the progress bound to the reviewed plan', async () => {
    run = await fakeRun('execute-plan-file.json');
    host = new SessionHost({
      agentFactory: await fakeAgentFactory(run, { afterApproval: 'default' }),
    });
    const { id } = await host.createSession(
      planFileSessionRequest(planFileOf(PLAN, '.cursor/plans/app.plan.md'), 'ultraplan: app', randomUUID),
    );
    await waitForStatus(host, id, 'requires_action');
    assert.equal(readAgentRecord(run.record).filter((e) => e.kind === 'started').length, 0, 'no agent process before the decision');
    const pending = pendingPlanRequest(allEvents(host, id));
    await host.appendEvents(id, [controlResponseEvent(pending.requestId, { behavior: 'allow', updatedInput: { plan: pending.plan } })]);
    const live = host;
    const events = await waitFor(() => allEvents(live, id), {
      message: "the agent's turn to end",
      timeoutMs: 15000,
      until: (log) => types(log).includes('result:success'),
    });
    const progress = events.filter((e) => e.type === 'system' && e.subtype === PROGRESS_SUBTYPE);
    assert.equal(progress.length, 2, 'each todo list the agent reported');
    for (const event of progress) assert.equal(event.plan_hash, planHash(PLAN));

    const model = modelOfLog(events);
    assert.deepEqual(
      model.snapshot.panel.execution?.steps.map((s) => [s.status, s.title]),
      [
        ['done', 'Set original to false'],
        ['pending', 'Document the change in the README'],
      ],
    );
  });
});

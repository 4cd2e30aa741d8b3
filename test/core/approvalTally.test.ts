// The extension's reading of approvals by a quorum: `plan_approval` events (and this host's own
// approval answered 202) in, the pending plan's summary out, on the model, the panel, the inbox
// row and the status bar; a new revision or an edited text has a count of its own.
import * as assert from 'node:assert/strict';
import { ApprovalTally } from '../../src/core/approvalTally';
import { planHash } from '../../src/core/decision';
import { parseEventBatch } from '../../src/core/eventBatch';
import { inboxDescription, inboxTooltipLines } from '../../src/core/inbox';
import { approvalEvent, type ApprovalState } from '../../src/core/planApprovals';
import { SessionModel } from '../../src/core/sessionModel';
import { statusTooltipNotes } from '../../src/core/statusSummary';
import { TEST_IDENTITY, approve, exitPlan, reject, toolRequest } from '../support/sessionEvents';

const PLAN = '# Plan\n\n1. Add the toggle';

function state(requestId: string, plan: string, names: string[], over: Partial<ApprovalState> = {}): ApprovalState {
  return {
    request_id: requestId,
    plan_hash: planHash(plan),
    approvers: names.map((name) => ({ id: `user-${name}`, name })),
    required: 2,
    group: 'platform-reviewers',
    released: false,
    ...over,
  };
}

let cursors = 0;
function poll(model: SessionModel, raw: unknown[], status = 'requires_action') {
  const batch = parseEventBatch(raw);
  model.scanner.ingestParsed(batch);
  const cursor = raw.length > 0 ? `c${++cursors}` : model.state.cursor;
  return model.reduce({ type: 'poll', poll: { batch, status, cursor }, at: cursors });
}

/** Read through a call: an assert on the field before would narrow it for the compiler. */
function summaryOf(model: SessionModel): string {
  return model.state.approval?.summary ?? '';
}

function modelWithPlan(): SessionModel {
  const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
  poll(model, [exitPlan('toolu_1', PLAN), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: PLAN })]);
  return model;
}

const binding = { sessionId: 's1', toolUseId: 'toolu_1', planHash: planHash(PLAN) };

describe('approvals by a quorum, as the extension shows them', () => {
  it('the batch reads plan_approval events (a malformed one is counted, not read)', () => {
    const batch = parseEventBatch([
      approvalEvent(state('req_1', PLAN, ['alice'])),
      { type: 'system', subtype: 'plan_approval', approval: { request_id: 'req_1' } },
    ]);
    assert.equal(batch.approvals?.length, 1);
    assert.equal(batch.approvals?.[0]?.approvers[0]?.name, 'alice');
    assert.equal(batch.malformed, 1);
  });

  it('the pending plan carries the summary of its exact text until the quorum is reached', () => {
    const model = modelWithPlan();
    assert.equal(model.state.approval, undefined, 'nobody approved yet');
    const change = poll(model, [approvalEvent(state('req_1', PLAN, ['alice']))]);
    assert.equal(change.changed, true);
    assert.equal(change.state.phase, 'plan_ready', 'an approval short of the quorum decides nothing');
    assert.deepEqual(change.state.approval, {
      summary: '1 of 2 approvals: alice; waiting for one more from platform-reviewers',
      mine: false,
    });
    assert.deepEqual(change.snapshot.panel.approval, change.state.approval);
    assert.equal(change.snapshot.inbox.approval, '1 of 2 approvals: alice; waiting for one more from platform-reviewers');
    assert.equal(poll(model, []).changed, false, 'the same count is no change');
    // The releasing approval, then the agent's answer: the plan is approved and the line goes.
    poll(model, [approvalEvent(state('req_1', PLAN, ['alice', 'bob'], { released: true }))]);
    assert.equal(model.state.approval, undefined);
    assert.equal(model.snapshot.inbox.approval, undefined, 'released, but the agent has not taken the plan yet');
    assert.equal(poll(model, [approve('toolu_1', PLAN)], 'running').state.phase, 'executing');
    assert.equal(model.snapshot.inbox.approval, 'Approved by 2 of 2: alice, bob');
  });

  it('once the quorum released the plan, its revision says who approved it (the panel, a later revision, a replay)', () => {
    const model = modelWithPlan();
    poll(model, [approvalEvent(state('req_1', PLAN, ['alice']))]);
    assert.equal(model.snapshot.panel.revisions[0]?.approvedBy, undefined, 'a count short of the quorum approved nothing');
    poll(model, [approvalEvent(state('req_1', PLAN, ['alice', 'bob'], { released: true }))]);
    assert.equal(model.snapshot.panel.revisions[0]?.approvedBy, undefined, 'said once the agent has the plan, not before');
    poll(model, [approve('toolu_1', PLAN)], 'running');
    assert.equal(model.snapshot.panel.revisions[0]?.status, 'approved');
    assert.equal(model.snapshot.panel.revisions[0]?.approvedBy, 'Approved by 2 of 2: alice, bob');
    // A later plan request (a new turn) keeps the first revision's approvers and has none of its own.
    poll(model, [exitPlan('toolu_2', `${PLAN} v2`), toolRequest('req_2', 'toolu_2', 'ExitPlanMode', { plan: `${PLAN} v2` })]);
    assert.equal(model.snapshot.panel.revisions[0]?.approvedBy, 'Approved by 2 of 2: alice, bob');
    assert.equal(model.snapshot.panel.revisions[1]?.approvedBy, undefined);
    // A re-attached session replays its log into a fresh tally: the same words come back.
    model.reduce({ type: 'restarted', at: 50 });
    assert.equal(model.snapshot.panel.revisions[0]?.approvedBy, undefined);
    poll(
      model,
      [
        exitPlan('toolu_1', PLAN),
        toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: PLAN }),
        approvalEvent(state('req_1', PLAN, ['alice'])),
        approvalEvent(state('req_1', PLAN, ['alice', 'bob'], { released: true })),
        approve('toolu_1', PLAN),
      ],
      'running',
    );
    assert.equal(model.snapshot.panel.revisions[0]?.approvedBy, 'Approved by 2 of 2: alice, bob');
  });

  it('a released state names its approvers by name, else by id; a rejection after a count is no "approved by"', () => {
    const tally = new ApprovalTally();
    tally.note(
      state('req_1', PLAN, [], {
        approvers: [
          { id: 'user-alice', name: 'alice@example.com' },
          { id: 'user-bob', name: null },
        ],
        released: true,
      }),
    );
    assert.deepEqual([...tally.released], [['req_1', 'Approved by 2 of 2: alice@example.com, user-bob']]);
    const before = tally.released;
    tally.note(state('req_1', PLAN, ['alice', 'bob'], { released: true }));
    assert.equal(tally.released, before, 'the first release stands; the same map, so no change is announced');
    const model = modelWithPlan();
    poll(model, [approvalEvent(state('req_1', PLAN, ['alice']))]);
    poll(model, [reject('toolu_1', 'Not this way')], 'running');
    assert.equal(model.snapshot.panel.revisions[0]?.status, 'rejected');
    assert.equal(model.snapshot.panel.revisions[0]?.approvedBy, undefined);
  });

  it("another text's count (an edit) and an earlier request's are not the shown plan's; a new revision starts over", () => {
    const model = modelWithPlan();
    poll(model, [approvalEvent(state('req_1', `${PLAN}\n2. edited`, ['carol']))]);
    assert.equal(model.state.approval, undefined, "someone's edit is a count of its own");
    poll(model, [approvalEvent(state('req_1', PLAN, ['alice']))]);
    assert.match(summaryOf(model), /^1 of 2 approvals: alice;/);
    // The agent revises the plan: a new request whose count starts at zero.
    poll(model, [exitPlan('toolu_2', `${PLAN} v2`), toolRequest('req_2', 'toolu_2', 'ExitPlanMode', { plan: `${PLAN} v2` })]);
    assert.equal(model.state.pendingPlan?.requestId, 'req_2');
    assert.equal(model.state.approval, undefined);
    assert.equal(model.snapshot.panel.approval, undefined);
  });

  it("this host's approval answered 202 is counted, not sent: the plan stays pending and decidable, Approve says mine", () => {
    const model = modelWithPlan();
    const started = model.reduce({ type: 'decisionStarted', kind: 'approve', binding, at: 10 });
    assert.equal(started.refused, undefined);
    assert.equal(model.state.canDecide, false, 'claimed while in flight');
    const counted = model.reduce({ type: 'approvalCounted', approval: state('req_1', PLAN, ['alice']), binding, at: 11 });
    assert.equal(counted.state.phase, 'plan_ready', 'not approved: nothing went to the agent');
    assert.equal(counted.state.inFlight, undefined);
    assert.equal(counted.state.canDecide, true, 'released: a reject can still go out');
    assert.equal(counted.state.decided.size, 0);
    assert.equal(counted.snapshot.panel.revisions.at(-1)?.status, 'pending');
    assert.deepEqual(counted.snapshot.panel.approval, {
      summary: '1 of 2 approvals: alice; waiting for one more from platform-reviewers',
      mine: true,
    });
    assert.equal(counted.state.notice?.level, 'info');
    // The same approval read back from the log later keeps it ours; bob's next one adds to it.
    poll(model, [approvalEvent(state('req_1', PLAN, ['alice']))]);
    assert.equal(model.state.approval?.mine, true);
    poll(model, [approvalEvent(state('req_1', PLAN, ['alice', 'bob'], { required: 3, group: null }))]);
    assert.equal(model.state.approval?.summary, '2 of 3 approvals: alice, bob; waiting for one more');
  });

  it('an edited approval counted here shows its own count, marked as the edited text', () => {
    const tally = new ApprovalTally();
    const edited = `${PLAN}\n3. also docs`;
    tally.note(state('req_1', edited, ['alice']), true);
    assert.deepEqual(tally.view('req_1', PLAN), {
      summary: 'Your edited text: 1 of 2 approvals: alice; waiting for one more from platform-reviewers',
      mine: true,
    });
    tally.note(state('req_1', PLAN, ['bob']));
    assert.deepEqual(tally.view('req_1', PLAN), {
      summary: '1 of 2 approvals: bob; waiting for one more from platform-reviewers',
      mine: false,
    });
    assert.equal(tally.view('req_0', PLAN), undefined);
    // An older state read late does not undo a newer one.
    tally.note(state('req_1', PLAN, ['bob', 'dave'], { required: 3 }));
    tally.note(state('req_1', PLAN, ['bob'], { required: 3 }));
    assert.match(tally.view('req_1', PLAN)?.summary ?? '', /^2 of 3 approvals: bob, dave;/);
  });

  it('the inbox row and the status bar tooltip say the panel’s own line: waiting, then who approved, and a new revision drops it', () => {
    const model = modelWithPlan();
    const shown = () => {
      const entry = model.snapshot.inbox;
      return {
        description: inboxDescription(entry, 0),
        tooltip: inboxTooltipLines(entry).filter((line) => !/^(Phase|Backend|Agent|Agent mode|Revisions): /.test(line)),
        status: statusTooltipNotes(entry),
      };
    };
    assert.deepEqual(shown(), { description: 'Server · just now · 1 revision', tooltip: [], status: [] }, 'no quorum line before a count');

    poll(model, [approvalEvent(state('req_1', PLAN, ['alice']))]);
    const waiting = model.snapshot.panel.approval?.summary;
    assert.equal(waiting, '1 of 2 approvals: alice; waiting for one more from platform-reviewers');
    assert.deepEqual(shown(), { description: `Server · just now · ${waiting}`, tooltip: [waiting], status: [waiting] });

    poll(model, [approvalEvent(state('req_1', PLAN, ['alice', 'bob'], { released: true }))]);
    poll(model, [approve('toolu_1', PLAN)], 'running');
    const approvedBy = model.snapshot.panel.revisions[0]?.approvedBy;
    assert.equal(approvedBy, 'Approved by 2 of 2: alice, bob');
    assert.deepEqual(shown(), { description: `Server · just now · ${approvedBy}`, tooltip: [approvedBy], status: [approvedBy] });

    // A new plan request (a new turn): the new revision has no approvals yet, so no line.
    poll(model, [exitPlan('toolu_2', `${PLAN} v2`), toolRequest('req_2', 'toolu_2', 'ExitPlanMode', { plan: `${PLAN} v2` })]);
    assert.equal(model.snapshot.inbox.approval, undefined);
    assert.deepEqual(shown(), { description: 'Server · just now · 2 revisions', tooltip: [], status: [] });
  });
});

// The session model: one reducer from a parsed batch (or something this host did) to the state
// every projection reads, and the one Phase derived from it.
import * as assert from 'node:assert/strict';
import { parseEventBatch } from '../../src/core/eventBatch';
import { NO_ACTS, type LocalDecision } from '../../src/core/hostActs';
import { SessionModel, type SessionChange, type SessionInput } from '../../src/core/sessionModel';
import { TEST_IDENTITY, approve, assistantText, exitPlan, reject, toolRequest } from '../support/sessionEvents';

let cursors = 0;

/** This host's decision on a plan went out. */
function sent(toolUseId: string, decision: LocalDecision, at = 2): SessionInput {
  return { type: 'decisionSent', decision: { toolUseId, decision, decidedAt: new Date(at).toISOString() }, at };
}

/** Feeds a model like the follower does: the scanner first (the poller's), then the reduce. */
function poll(model: SessionModel, raw: unknown[], status = 'running', at = 1): SessionChange {
  const batch = parseEventBatch(raw);
  model.scanner.ingestParsed(batch);
  const cursor = raw.length > 0 ? `c${++cursors}` : model.state.cursor;
  return model.reduce({ type: 'poll', poll: { batch, status, cursor }, at });
}

describe('session model', () => {
  it('a plan arriving makes the phase plan_ready, once announced, with its revision', () => {
    const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
    assert.equal(model.state.phase, 'planning');
    const first = poll(
      model,
      [assistantText('Looking around'), exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: '# Plan' })],
      'requires_action',
      5,
    );
    assert.equal(first.state.phase, 'plan_ready');
    assert.equal(first.announce, 'plan_ready');
    assert.equal(first.changed, true);
    assert.equal(first.state.phaseChangedAt, 5);
    assert.deepEqual(first.state.pendingPlan, { toolUseId: 'toolu_1', plan: '# Plan', requestId: 'req_1' });
    const again = poll(model, [], 'requires_action', 6);
    assert.equal(again.announce, undefined, 'the same plan is announced once');
    assert.equal(again.changed, false, 'an empty poll that changes nothing is no change');
    assert.equal(again.state.phaseChangedAt, 5);
  });

  it('a decision sent here shows until the session confirms it; the approval then means executing', () => {
    const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
    const events: unknown[] = [exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode')];
    poll(model, events, 'requires_action');
    assert.equal(model.reduce(sent('toolu_1', 'approved')).state.phase, 'approved');
    // Still pending on the next poll (the tool_result has not landed): still approved, not plan_ready.
    assert.equal(poll(model, [], 'requires_action').state.phase, 'approved');
    events.push(approve('toolu_1', '# Plan'));
    assert.equal(poll(model, events.slice(2)).state.phase, 'executing');
  });

  it('a rejection shows as rejected, then planning, then the next plan is announced', () => {
    const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
    poll(model, [exitPlan('toolu_1', 'v1'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode')], 'requires_action');
    assert.equal(model.reduce(sent('toolu_1', 'rejected')).state.phase, 'rejected');
    assert.equal(poll(model, [reject('toolu_1', 'no')]).state.phase, 'planning');
    const next = poll(model, [exitPlan('toolu_2', 'v2')], 'requires_action');
    assert.equal(next.state.phase, 'plan_ready');
    assert.equal(next.announce, 'plan_ready');
    assert.equal(next.state.revisions.length, 2);
    assert.equal(next.state.rejectCount, 1);
  });

  it('a quiet agent asks a question; a reply makes it planning until it speaks again', () => {
    const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
    poll(model, [assistantText('Which database?')], 'running');
    const quiet = poll(model, [], 'idle');
    assert.equal(quiet.state.phase, 'needs_input');
    assert.equal(quiet.state.question, 'Which database?');
    const replied = model.reduce({ type: 'replied', at: 3 });
    assert.equal(replied.state.phase, 'planning');
    assert.equal(replied.state.question, undefined);
    assert.equal(poll(model, [], 'idle').state.phase, 'planning', 'the quiet right after a reply is the agent working');
    poll(model, [assistantText('And the port?')], 'running');
    assert.equal(poll(model, [], 'idle').state.question, 'And the port?');
  });

  it('an open permission request takes attention (not the phase), and closes when answered', () => {
    const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
    const opened = poll(model, [toolRequest('req_7', 'edit-1', 'Edit', { file_path: '/w/a.ts' })], 'requires_action', 4);
    assert.equal(opened.opened.length, 1);
    assert.equal(opened.state.attention, 'needs_permission');
    assert.equal(opened.state.attentionChangedAt, 4);
    assert.equal(opened.state.phase, 'planning', 'waiting on a permission is not a question');
    const quiet = poll(model, [], 'requires_action', 5);
    assert.equal(quiet.state.phase, 'planning');
    const answered = model.reduce({ type: 'permissionAnswered', requestId: 'req_7', at: 6 });
    assert.equal(answered.state.permissions.length, 0);
    assert.equal(answered.state.attention, answered.state.phase);
    assert.deepEqual(
      answered.closed.map((c) => [c.request.requestId, c.reason]),
      [['req_7', 'answered']],
      'the answer closes it, as the log would',
    );
    assert.ok(answered.changed);
    assert.equal(model.reduce({ type: 'permissionAnswered', requestId: 'req_7', at: 7 }).changed, false, 'a second answer changes nothing');
  });

  it('while reads fail the panel says it is reconnecting, over its own notice; the next poll takes that back', () => {
    const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
    poll(model, [exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode')], 'requires_action');
    const refusal = { level: 'warning' as const, text: 'This plan was decided elsewhere.' };
    model.reduce({ type: 'notice', notice: refusal, at: 2 });
    const lost = model.reduce({
      type: 'connectionLost',
      retry: { failures: 2, maxFailures: 5, retryInMs: 3000, message: 'connect ECONNREFUSED' },
      at: 3,
    });
    assert.equal(lost.changed, true);
    assert.equal(lost.state.phase, 'plan_ready', 'what is known stays shown');
    assert.equal(lost.state.notice?.level, 'warning');
    assert.match(lost.state.notice?.text ?? '', /^Reconnecting: .*ECONNREFUSED.*3 s .*2 of 5/);
    const again = model.reduce({
      type: 'connectionLost',
      retry: { failures: 3, maxFailures: 5, retryInMs: 3000, message: 'connect ECONNREFUSED' },
      at: 4,
    });
    assert.match(again.state.notice?.text ?? '', /3 of 5/);
    const failed = { level: 'error' as const, text: 'Sending the approval failed: connect ECONNREFUSED' };
    assert.deepEqual(
      model.reduce({ type: 'notice', notice: failed, at: 4 }).state.notice,
      failed,
      'what the person just did failed: said over it',
    );
    model.reduce({ type: 'notice', notice: refusal, at: 4 });
    const back = poll(model, [], 'requires_action', 5);
    assert.deepEqual(back.state.notice, refusal, "contact is back: the panel's own notice again");
    assert.equal(back.changed, true);
  });

  it('ending wins over everything, and a restart replays from the start', () => {
    const model = new SessionModel({
      identity: TEST_IDENTITY,
      initialPhase: 'plan_ready',
      cursor: '7',
      at: 0,
      restored: { acts: { ...NO_ACTS, decided: new Map([['toolu_1', 'rejected']]) } },
    });
    assert.equal(model.state.phase, 'plan_ready', 'a restored session shows its persisted phase until the first poll');
    assert.equal(model.reduce({ type: 'ended', by: 'stop', at: 1 }).state.phase, 'stopped');
    const restarted = model.reduce({ type: 'restarted', at: 2 });
    assert.equal(restarted.state.ended, undefined);
    assert.equal(restarted.state.phase, 'plan_ready');
    assert.equal(restarted.state.decided.get('toolu_1'), 'rejected', 'decisions made here survive a replay');
  });

  it('a restored question stays on screen through the replay of the log it was read from, then new events count', () => {
    const restore = () =>
      new SessionModel({
        identity: TEST_IDENTITY,
        initialPhase: 'needs_input',
        cursor: '6',
        at: 0,
        restored: { question: 'Node 20 or 22?' },
      });
    const log = () => parseEventBatch([assistantText('Looking at the build.'), assistantText('Node 20 or 22?')]);
    const model = restore();
    model.reduce({ type: 'restarted', at: 1 });
    const replay = log();
    model.scanner.ingestParsed(replay);
    // The replay reads back to the cursor the session was persisted with: nothing new happened.
    const replayed = model.reduce({ type: 'poll', poll: { batch: replay, status: undefined, cursor: '6' }, at: 2 });
    assert.equal(replayed.state.phase, 'needs_input', 'no flicker to planning while the log is read back');
    assert.equal(replayed.state.question, 'Node 20 or 22?');
    assert.equal(replayed.announce, undefined, 'the question is not announced again');
    assert.equal(
      model.reduce({ type: 'poll', poll: { batch: parseEventBatch([]), status: 'idle', cursor: '6' }, at: 3 }).state.phase,
      'needs_input',
    );
    // Events past the cursor are the agent now: it works again.
    const moved = model.reduce({
      type: 'poll',
      poll: { batch: parseEventBatch([assistantText('Going on.')]), status: undefined, cursor: '7' },
      at: 4,
    });
    assert.equal(moved.state.phase, 'planning');

    // Following again later (Retry after a failure) is no reload: the persisted phase is old news.
    model.reduce({ type: 'ended', by: 'failed', at: 5 });
    model.reduce({ type: 'restarted', at: 6 });
    const again = parseEventBatch([assistantText('Looking at the build.'), assistantText('Node 20 or 22?'), assistantText('Going on.')]);
    model.scanner.ingestParsed(again);
    assert.equal(model.reduce({ type: 'poll', poll: { batch: again, status: undefined, cursor: '7' }, at: 7 }).state.phase, 'planning');

    // A replay that reads past the persisted cursor has news in it: the agent is working.
    const other = restore();
    other.reduce({ type: 'restarted', at: 1 });
    const longer = parseEventBatch([assistantText('Node 20 or 22?'), assistantText('Never mind, 20.')]);
    other.scanner.ingestParsed(longer);
    assert.equal(other.reduce({ type: 'poll', poll: { batch: longer, status: undefined, cursor: '7' }, at: 2 }).state.phase, 'planning');
  });
});

describe('session model: an agent that stopped (agent_lost)', () => {
  const lost = {
    type: 'system',
    subtype: 'agent_lost',
    message: 'The session host restarted and this session’s agent could not continue.',
  };
  const restarted = { type: 'system', subtype: 'ultraplan_agent_restarted', message: 'A new agent turn carries out the approved plan.' };

  it('a waiting plan shows as agent stopped, not plan ready, and keeps its plan for a decision', () => {
    const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
    poll(model, [exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: '# Plan' })], 'requires_action');
    const change = poll(model, [lost], 'idle', 3);
    assert.equal(change.state.phase, 'agent_stopped');
    assert.equal(change.state.attention, 'agent_stopped');
    assert.equal(change.state.agentStopped, lost.message);
    assert.deepEqual(change.state.pendingPlan, { toolUseId: 'toolu_1', plan: '# Plan', requestId: 'req_1' });
    assert.equal(change.announce, 'agent_stopped', 'announced once, as an agent that stopped');
    // Approve (a fresh turn): shown as approved at once, then executing once the log says so.
    assert.equal(model.reduce(sent('toolu_1', 'approved', 4)).state.phase, 'approved');
    const after = poll(model, [approve('toolu_1', '# Plan'), restarted], 'running', 5);
    assert.equal(after.state.phase, 'executing');
    assert.equal(after.state.agentStopped, undefined);
  });

  it('open permission requests close with the agent; a question it left stays readable; a reply shows planning', () => {
    const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
    poll(model, [toolRequest('req_w', 'toolu_w', 'Write', { file_path: 'a.ts' })], 'requires_action');
    assert.equal(model.state.attention, 'needs_permission');
    const change = poll(model, [assistantText('Which file?'), lost], 'idle');
    assert.deepEqual(
      change.closed.map((c) => [c.request.requestId, c.reason]),
      [['req_w', 'agent_stopped']],
    );
    assert.equal(change.state.phase, 'agent_stopped');
    assert.equal(change.state.attention, 'agent_stopped');
    assert.equal(change.state.question, 'Which file?');
    assert.equal(model.reduce({ type: 'replied', at: 9 }).state.phase, 'planning');
  });

  it('an agent event after the notice (in the same batch or later) means an agent runs again', () => {
    const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
    assert.equal(poll(model, [lost, assistantText('Back at it')], 'running').state.phase, 'planning');
    assert.equal(poll(model, [lost], 'idle').state.phase, 'agent_stopped');
    assert.equal(poll(model, [{ type: 'system', subtype: 'init' }], 'running').state.phase, 'planning');
    // A result alone does not say an agent runs (the host writes one when a fresh agent fails to start).
    poll(model, [lost], 'idle');
    assert.equal(poll(model, [{ type: 'result', subtype: 'error_during_execution', is_error: true }], 'idle').state.phase, 'agent_stopped');
  });

  it('following that ended outranks it; a restart of following replays it from the log', () => {
    const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
    poll(model, [lost], 'idle');
    assert.equal(model.reduce({ type: 'ended', by: 'stop', at: 2 }).state.phase, 'stopped');
    model.reduce({ type: 'restarted', at: 3 });
    assert.equal(model.state.agentStopped, undefined);
    assert.equal(poll(model, [lost], 'idle').state.phase, 'agent_stopped');
  });
});

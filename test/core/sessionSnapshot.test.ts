// This host's acts as reducer inputs, the one frozen snapshot per change, and the persisted form
// mapped both ways: what a reload keeps is what the session showed before it.
import * as assert from 'node:assert/strict';
import { bindingFor } from '../../src/core/decision';
import { parseEventBatch } from '../../src/core/eventBatch';
import type { PanelState } from '../../src/core/panelMessages';
import { parsePersistedSessions } from '../../src/core/persistedSessions';
import { SessionModel } from '../../src/core/sessionModel';
import { samePanelState, withWebviewDraft } from '../../src/core/sessionProjection';
import { persistedPartChanged, restoredModelOptions, toPersisted } from '../../src/core/sessionRecord';
import type { SessionSnapshot } from '../../src/core/sessionSnapshot';
import { TEST_IDENTITY, exitPlan, reject, toolRequest } from '../support/sessionEvents';

let cursor = 0;
function poll(model: SessionModel, raw: unknown[], status = 'requires_action', at = 1) {
  const batch = parseEventBatch(raw);
  model.scanner.ingestParsed(batch);
  return model.reduce({ type: 'poll', poll: { batch, status, cursor: raw.length > 0 ? `c${++cursor}` : model.state.cursor }, at });
}

function followed(): { model: SessionModel; heard: SessionSnapshot[] } {
  const heard: SessionSnapshot[] = [];
  const model = new SessionModel({
    identity: TEST_IDENTITY,
    initialPhase: 'planning',
    cursor: null,
    at: 0,
    onSnapshot: (s) => heard.push(s),
  });
  return { model, heard };
}

const PLAN = '# Plan\n\n1. Add the toggle.';

describe("session model: this host's acts", () => {
  it('a decision is claimed when it starts: the lock shows, a second one is refused, a failure releases it', () => {
    const { model } = followed();
    poll(model, [exitPlan('toolu_1', PLAN), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: PLAN })]);
    assert.equal(model.state.canDecide, true);
    const binding = bindingFor('s1', 'toolu_1', PLAN);
    const started = model.reduce({ type: 'decisionStarted', kind: 'approve', binding, at: 2 });
    assert.equal(started.refused, undefined);
    assert.equal(started.snapshot.panel.pendingDecision, 'approve');
    assert.equal(started.state.canDecide, false);
    const second = model.reduce({ type: 'decisionStarted', kind: 'reject', binding, at: 3 });
    assert.match(second.refused ?? '', /being sent already/);
    assert.equal(second.state.notice?.level, 'warning', 'a refused decision is told in the panel');
    const failed = model.reduce({ type: 'decisionFailed', notice: { level: 'error', text: 'offline' }, release: binding, at: 4 });
    assert.equal(failed.state.inFlight, undefined);
    assert.equal(failed.state.canDecide, true, 'not delivered: it can be decided again');
    assert.deepEqual(failed.snapshot.panel.notice, { level: 'error', text: 'offline' });
    model.reduce({ type: 'decisionStarted', kind: 'approve', binding, at: 5 });
    // A conflict (409): the session took an answer; the claim stays.
    const conflict = model.reduce({ type: 'decisionFailed', notice: { level: 'error', text: 'decided elsewhere' }, at: 6 });
    assert.equal(conflict.state.canDecide, false);
    assert.match(model.refusal(binding) ?? '', /already decided/);
  });

  it('a decision sent keeps its feedback and comments on the revision, drops the draft, and shows until the session confirms', () => {
    const { model } = followed();
    poll(model, [exitPlan('toolu_1', PLAN), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: PLAN })]);
    const comments = [{ line: 3, quote: '1. Add the toggle.', text: 'where?' }];
    model.reduce({ type: 'draftSaved', draft: { toolUseId: 'toolu_1', feedback: 'half-typed', comments: [] }, at: 2 });
    assert.equal(model.snapshot.panel.draft?.feedback, 'half-typed');
    const binding = bindingFor('s1', 'toolu_1', PLAN);
    model.reduce({ type: 'decisionStarted', kind: 'reject', binding, at: 3 });
    const sent = model.reduce({
      type: 'decisionSent',
      decision: { toolUseId: 'toolu_1', decision: 'rejected', decidedAt: '2026-12-01T16:00:00.000Z', feedback: 'smaller', comments },
      at: 4,
    });
    assert.equal(sent.state.phase, 'rejected');
    assert.equal(sent.snapshot.panel.draft, undefined, 'the draft went with the decision');
    const revision = sent.snapshot.revisions[0]!;
    assert.equal(revision.status, 'rejected');
    assert.equal(revision.feedback, 'smaller');
    assert.deepEqual(revision.comments, comments);
    assert.equal(revision.decidedAt, '2026-12-01T16:00:00.000Z');
    poll(model, [reject('toolu_1', 'formatted feedback')], 'running');
    assert.equal(model.snapshot.revisions[0]?.feedback, 'smaller', "the person's words, not the wire's formatting");
  });

  it('an edited approval shows the reviewer’s plan, notes ride on the revision, an edit in progress shows as such', () => {
    const { model } = followed();
    poll(model, [exitPlan('toolu_1', PLAN), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: PLAN })]);
    assert.equal(model.reduce({ type: 'editing', toolUseId: 'toolu_1', at: 2 }).snapshot.panel.pendingDecision, 'edit');
    model.reduce({ type: 'decisionStarted', kind: 'edit', binding: bindingFor('s1', 'toolu_1', PLAN), at: 3 });
    const sent = model.reduce({
      type: 'decisionSent',
      decision: { toolUseId: 'toolu_1', decision: 'approved_edited', decidedAt: 'x', editedPlan: '# Mine', notes: 'go' },
      at: 4,
    });
    assert.equal(sent.state.editing, undefined);
    assert.equal(sent.snapshot.revisions[0]?.plan, '# Mine');
    assert.equal(sent.snapshot.revisions[0]?.status, 'approved_edited');
    assert.equal(sent.snapshot.revisions[0]?.notes, 'go');
  });

  it('notice, outcome and saved plans are state: an error outcome is also the notice; a new plan clears the notice', () => {
    const { model } = followed();
    model.reduce({ type: 'outcome', outcome: { text: 'Saved in plans/x.md.' }, at: 1 });
    assert.equal(model.snapshot.panel.notice, undefined);
    model.reduce({ type: 'outcome', outcome: { text: 'Opening failed.' }, level: 'error', at: 2 });
    assert.deepEqual(model.snapshot.panel.outcome, { text: 'Opening failed.' });
    assert.deepEqual(model.snapshot.panel.notice, { level: 'error', text: 'Opening failed.' });
    for (let i = 0; i < 12; i++) model.reduce({ type: 'planSaved', path: `/w/plans/p${i}.md`, at: 3 + i });
    assert.equal(model.state.savedPlans.length, 10, 'bounded, the newest kept');
    assert.equal(model.state.savedPlans.at(-1), '/w/plans/p11.md');
    poll(model, [exitPlan('toolu_1', PLAN)]);
    assert.equal(model.snapshot.panel.notice, undefined, 'a notice about the previous plan no longer applies');
  });
});

describe('session snapshot', () => {
  it('one frozen snapshot per change, heard once from the reducer; no change, no snapshot', () => {
    const { model, heard } = followed();
    const changes = [
      poll(model, [exitPlan('toolu_1', PLAN), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: PLAN })]),
      poll(model, [], 'requires_action', 2),
      model.reduce({ type: 'editing', toolUseId: undefined, at: 3 }),
      model.reduce({ type: 'notice', notice: undefined, at: 4 }),
      model.reduce({ type: 'draftSaved', draft: { toolUseId: 'toolu_1', feedback: 'x', comments: [] }, at: 5 }),
    ];
    assert.deepEqual(
      changes.map((c) => c.changed),
      [true, false, false, false, true],
    );
    assert.equal(heard.length, 2);
    assert.deepEqual(
      heard.map((s) => s.version),
      [2, 3],
    );
    assert.equal(heard[1], model.snapshot);
    assert.ok(Object.isFrozen(heard[1]) && Object.isFrozen(heard[1]!.panel) && Object.isFrozen(heard[1]!.inbox));
    assert.equal(model.revisionsDerived, 2, 'the first snapshot and the plan: once each, the draft reused them');
  });

  it('parts that did not change are the same objects: a cursor moving keeps the panel part', () => {
    const { model } = followed();
    poll(model, [exitPlan('toolu_1', PLAN), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: PLAN })]);
    const before = model.snapshot;
    // Events nobody shows (another tool's call) move the cursor: persisted, not painted.
    poll(model, [
      { type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id: 'r1', name: 'Read', input: {} }] } },
    ]);
    const after = model.snapshot;
    assert.notEqual(after, before);
    assert.equal(after.revisions, before.revisions);
    assert.equal(after.panel, before.panel);
    assert.equal(after.inbox, before.inbox, 'nor the inbox entry');
    assert.equal(persistedPartChanged(before, after), true, 'the cursor survives a reload');
  });

  it('a draft saved changes the panel part only: the inbox entry and the revisions are the same objects', () => {
    const { model } = followed();
    poll(model, [exitPlan('toolu_1', PLAN), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: PLAN })]);
    const before = model.snapshot;
    model.reduce({ type: 'draftSaved', draft: { toolUseId: 'toolu_1', feedback: 'half-typed', comments: [] }, at: 5 });
    const after = model.snapshot;
    assert.notEqual(after.panel, before.panel);
    assert.equal(after.inbox, before.inbox);
    assert.equal(after.revisions, before.revisions);
    // A change the inbox shows is a new entry.
    model.reduce({ type: 'planSaved', path: '/w/plans/a.md', at: 6 });
    model.reduce({ type: 'ended', by: 'teleport', at: 7 });
    assert.notEqual(model.snapshot.inbox, after.inbox);
    assert.equal(model.snapshot.inbox.finished, true);
  });

  it('the inbox entry and the mode are read from the same snapshot', () => {
    const { model } = followed();
    poll(model, [exitPlan('toolu_1', PLAN), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: PLAN })]);
    const s = model.snapshot;
    assert.equal(s.inbox.attention, 'plan_ready');
    assert.equal(s.inbox.revisionCount, s.revisions.length);
    assert.equal(s.inbox.modeText, 'plan (requested)');
    assert.equal(s.panel.agentMode, s.modeText);
  });

  it("a webview's own draft is what it shows: the session's next panel part is the same, so it is not posted back", () => {
    const { model } = followed();
    poll(model, [exitPlan('toolu_1', PLAN), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: PLAN })]);
    const shown: PanelState = model.snapshot.panel;
    const message = {
      type: 'saveDraft' as const,
      sessionKey: 'server:s1',
      toolUseId: 'toolu_1',
      feedback: 'typing',
      comments: [],
      notes: 'n',
    };
    const webview = withWebviewDraft(shown, message);
    model.reduce({ type: 'draftSaved', draft: { toolUseId: 'toolu_1', feedback: 'typing', comments: [], notes: 'n' }, at: 2 });
    assert.notEqual(model.snapshot.panel, shown);
    assert.equal(samePanelState(webview, model.snapshot.panel), true);
    assert.equal(samePanelState(shown, model.snapshot.panel), false, 'a panel that did not send it does get it');
    model.reduce({ type: 'notice', notice: { level: 'info', text: 'hi' }, at: 3 });
    assert.equal(samePanelState(webview, model.snapshot.panel), false);
  });
});

describe('persisted form (core/sessionRecord.ts)', () => {
  it('round-trips: what a session showed before the reload it shows after, and maps to the same entry again', () => {
    const { model } = followed();
    poll(model, [exitPlan('toolu_1', 'v1'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: 'v1' })]);
    model.reduce({ type: 'decisionStarted', kind: 'reject', binding: bindingFor('s1', 'toolu_1', 'v1'), at: 2 });
    model.reduce({
      type: 'decisionSent',
      decision: { toolUseId: 'toolu_1', decision: 'rejected', decidedAt: '2026-12-01T16:00:00.000Z', feedback: 'no', comments: [] },
      at: 3,
    });
    poll(
      model,
      [reject('toolu_1', 'no'), exitPlan('toolu_2', 'v2'), toolRequest('req_2', 'toolu_2', 'ExitPlanMode', { plan: 'v2' })],
      'requires_action',
      4,
    );
    model.reduce({
      type: 'draftSaved',
      draft: { toolUseId: 'toolu_2', feedback: 'hmm', comments: [{ line: 1, quote: 'v2', text: 'c' }] },
      at: 5,
    });
    model.reduce({ type: 'planSaved', path: '/w/plans/a.md', at: 6 });
    model.reduce({ type: 'outcome', outcome: { text: 'somewhere' }, at: 7 });
    const before = model.snapshot;
    const stored = toPersisted(before);
    // Through JSON and the schema, as workspaceState keeps it.
    const parsed = parsePersistedSessions(JSON.parse(JSON.stringify([stored])));
    assert.deepEqual(parsed.dropped, []);
    const back = new SessionModel(restoredModelOptions(parsed.sessions[0]!, undefined));
    const after = back.snapshot;
    assert.deepEqual(toPersisted(after), stored);
    assert.deepEqual(after.identity, before.identity);
    assert.deepEqual(after.revisions, before.revisions);
    assert.deepEqual(after.panel, { ...before.panel, canDecide: false }, 'the same panel, decided again only once followed');
    assert.deepEqual(after.inbox, before.inbox);
    assert.deepEqual([...after.state.drafts.values()], [...before.state.drafts.values()]);
    assert.deepEqual(after.state.announced, ['plan_ready:toolu_1', 'plan_ready:toolu_2']);
    assert.match(back.refusal(bindingFor('s1', 'toolu_1', 'v1')) ?? '', /already decided/, 'a used decision stays used');
  });
});

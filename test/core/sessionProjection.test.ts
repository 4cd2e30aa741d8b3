// The review panel's projection of a session: revision statuses (the session's word first, this
// host's decision until then), notes, plan hashes computed once, and the PanelState fields that
// depend on the phase and on what is in flight.
import * as assert from 'node:assert/strict';
import { planHash } from '../../src/core/decision';
import { parseEventBatch } from '../../src/core/eventBatch';
import { SessionModel } from '../../src/core/sessionModel';
import { PlanHashes, projectPanelState, projectRevisions, type PanelFacts, type RevisionNotes } from '../../src/core/sessionProjection';
import { TEST_IDENTITY, assistantText, exitPlan, reject } from '../support/sessionEvents';

function fed(...batches: unknown[][]): SessionModel {
  const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
  let n = 0;
  for (const raw of batches) {
    const batch = parseEventBatch(raw);
    model.scanner.ingestParsed(batch);
    model.reduce({ type: 'poll', poll: { batch, status: raw.length === 0 ? 'idle' : 'requires_action', cursor: `c${++n}` }, at: n });
  }
  return model;
}

const facts = (extra: Partial<PanelFacts> = {}): PanelFacts => ({
  sessionKey: 'server:s1',
  sessionId: 's1',
  title: 'dark mode',
  backendLabel: 'Server',
  agentLabel: undefined,
  agentMode: undefined,
  demo: false,
  sessionLink: undefined,
  canContinue: true,
  canDecide: true,
  inFlight: undefined,
  editing: undefined,
  notice: undefined,
  outcome: undefined,
  drafts: new Map(),
  ...extra,
});

describe('session projection (review panel)', () => {
  it("lists revisions with the session's outcome, this host's decision until then, and the notes", () => {
    const model = fed([exitPlan('toolu_1', 'v1')], [reject('toolu_1', 'too big')], [exitPlan('toolu_2', 'v2')]);
    const notes = new Map<string, RevisionNotes>([
      ['toolu_1', { feedback: 'split it', comments: [{ line: 1, quote: 'v1', text: 'smaller' }], decidedAt: '2026-11-30T12:00:00.000Z' }],
    ]);
    const hashes = new PlanHashes();
    let revisions = projectRevisions(model.state, notes, [], hashes);
    assert.deepEqual(
      revisions.map((r) => [r.revision, r.toolUseId, r.status, r.feedback]),
      [
        [1, 'toolu_1', 'rejected', 'split it'],
        [2, 'toolu_2', 'pending', undefined],
      ],
    );
    assert.equal(revisions[0]?.planHash, planHash('v1'));
    assert.equal(revisions[0]?.comments[0]?.text, 'smaller');
    model.reduce({ type: 'decisionSent', decision: { toolUseId: 'toolu_2', decision: 'approved', decidedAt: 'x' }, at: 9 });
    revisions = projectRevisions(model.state, notes, [], hashes);
    assert.equal(revisions[1]?.status, 'approved', 'shown as approved until the session says so');
    assert.equal(hashes.computed, 2, 'each plan hashed once, however often it is projected');
  });

  it('shows the restored revisions until the replay brings them back', () => {
    const restored = projectRevisions(
      fed([assistantText('exploring')]).state,
      new Map(),
      [{ revision: 1, toolUseId: 't', plan: 'p', planHash: planHash('p'), status: 'approved', comments: [] }],
      new PlanHashes(),
    );
    assert.equal(restored[0]?.toolUseId, 't');
  });

  it('the panel state: a decision only on the current pending plan, the question only when asked, what is in flight', () => {
    const model = fed([exitPlan('toolu_1', 'v1')]);
    const revisions = projectRevisions(model.state, new Map(), [], new PlanHashes());
    const open = projectPanelState(model.state, revisions, facts());
    assert.equal(open.canDecide, true);
    assert.equal(open.phase, 'plan_ready');
    assert.equal(open.question, undefined);
    assert.equal(open.agentMode, undefined);
    assert.equal(projectPanelState(model.state, revisions, facts({ agentMode: 'plan (read-only)' })).agentMode, 'plan (read-only)');
    assert.equal(projectPanelState(model.state, revisions, facts({ inFlight: 'approve' })).pendingDecision, 'approve');
    assert.equal(projectPanelState(model.state, revisions, facts({ editing: 'toolu_1' })).pendingDecision, 'edit');
    assert.equal(
      projectPanelState(model.state, revisions, facts({ editing: 'toolu_0' })).pendingDecision,
      undefined,
      'an edit of another plan is not shown',
    );
    const asking = fed([assistantText('Which database?')], []);
    const question = projectPanelState(asking.state, [], facts({ canDecide: false }));
    assert.equal(question.phase, 'needs_input');
    assert.equal(question.question, 'Which database?');
    assert.equal(question.canDecide, false);
  });

  it('clips what it shows to the panel limits', () => {
    const model = fed([exitPlan('toolu_1', 'v1')]);
    const state = projectPanelState(
      model.state,
      [],
      facts({ title: 't'.repeat(1000), notice: { level: 'error', text: 'n'.repeat(200_000) } }),
    );
    assert.equal(state.title.length, 500);
    assert.ok(state.notice!.text.length <= 100 * 1024);
  });
});

// Drafts as the session keeps them: the reply being typed to a question is a host act like a plan's
// draft (saved, shown in the panel part, cleared by the reply), a plan's draft keeps the comment
// being written and when it was typed, both survive the persisted round trip, and the webview's
// own copy is what it shows (so it is not posted back to it).
import * as assert from 'node:assert/strict';
import { parseEventBatch } from '../../src/core/eventBatch';
import { parsePersistedSessions } from '../../src/core/persistedSessions';
import { SessionModel } from '../../src/core/sessionModel';
import { samePanelState, withWebviewDraft } from '../../src/core/sessionProjection';
import { restoredModelOptions, toPersisted } from '../../src/core/sessionRecord';
import { TEST_IDENTITY, assistantText, exitPlan } from '../support/sessionEvents';

let cursor = 0;
function poll(model: SessionModel, raw: unknown[], status: string, at: number) {
  const batch = parseEventBatch(raw);
  model.scanner.ingestParsed(batch);
  return model.reduce({ type: 'poll', poll: { batch, status, cursor: raw.length > 0 ? `c${++cursor}` : model.state.cursor }, at });
}

/** A session whose agent asked a question and waits (a quiet poll after it). */
function asking(): SessionModel {
  const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
  poll(model, [assistantText('Node 20 or Node 22?')], 'running', 1);
  poll(model, [], 'idle', 2);
  assert.equal(model.state.phase, 'needs_input');
  return model;
}

describe('drafts in the session model', () => {
  it('keeps the reply being typed while the question waits, shows it in the panel part, and drops it once replied', () => {
    const model = asking();
    model.reduce({ type: 'replyDraftSaved', draft: { text: 'Node 2', at: 10 }, at: 3 });
    assert.deepEqual(model.snapshot.panel.replyDraft, { text: 'Node 2', at: 10 });
    model.reduce({ type: 'replyDraftSaved', draft: { text: '', at: 11 }, at: 4 });
    assert.equal(model.snapshot.panel.replyDraft, undefined, 'an emptied field is no draft');
    model.reduce({ type: 'replyDraftSaved', draft: { text: 'Node 20', at: 12 }, at: 5 });
    model.reduce({ type: 'replied', at: 6 });
    assert.equal(model.state.replyDraft, undefined);
    assert.equal(model.snapshot.panel.replyDraft, undefined);
  });

  it('survives the persisted round trip: the reply draft, and a plan draft with the comment being written and its time', () => {
    const model = asking();
    model.reduce({ type: 'replyDraftSaved', draft: { text: 'Node 20', at: 12 }, at: 3 });
    const question = toPersisted(model.snapshot);
    const back = new SessionModel(
      restoredModelOptions(parsePersistedSessions(JSON.parse(JSON.stringify([question]))).sessions[0]!, undefined),
    );
    assert.deepEqual(back.snapshot.panel.replyDraft, { text: 'Node 20', at: 12 });

    poll(model, [exitPlan('toolu_1', '# Plan\n\n1. One')], 'requires_action', 4);
    const draft = { toolUseId: 'toolu_1', feedback: 'f', comments: [], notes: 'n', comment: { line: 3, text: 'half' }, at: 20 };
    model.reduce({ type: 'draftSaved', draft, at: 5 });
    const stored = toPersisted(model.snapshot);
    const parsed = parsePersistedSessions(JSON.parse(JSON.stringify([stored])));
    assert.deepEqual(parsed.dropped, []);
    const restored = new SessionModel(restoredModelOptions(parsed.sessions[0]!, undefined));
    assert.deepEqual(restored.snapshot.panel.draft, draft);
  });

  it("a webview's own reply draft is what it shows: the next panel part is the same, so it is not posted back", () => {
    const model = asking();
    const shown = model.snapshot.panel;
    const webview = withWebviewDraft(shown, { type: 'saveReplyDraft', sessionKey: TEST_IDENTITY.key, text: 'Node 20', at: 7 });
    model.reduce({ type: 'replyDraftSaved', draft: { text: 'Node 20', at: 7 }, at: 3 });
    assert.equal(samePanelState(webview, model.snapshot.panel), true);
    assert.equal(samePanelState(shown, model.snapshot.panel), false);
  });
});

// The review panel's model without a browser: what is shown, the lock, the composer, the notes
// field, the status line, drafts and their write-out, and plan texts sent once by hash.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { splitPlanTexts, type PanelState, type PlanRevision, type SaveDraftMessage, type StateMessage } from '../../src/core/panelMessages';
import { planDraftKey, replyDraftKey } from '../../src/webview/panelDrafts';
import { PanelModel } from '../../src/webview/panelModel';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

function revision(n: number, plan: string, extra: Partial<PlanRevision> = {}): PlanRevision {
  return { revision: n, toolUseId: `toolu_${n}`, plan, planHash: sha256(plan), status: 'pending', comments: [], ...extra };
}

function panelState(revisions: PlanRevision[], extra: Partial<PanelState> = {}): PanelState {
  return {
    sessionKey: 'embedded:sess_1',
    sessionId: 'sess_1',
    title: 'Add a dark mode toggle',
    backendLabel: 'Embedded',
    phase: 'plan_ready',
    revisions,
    canDecide: true,
    ...extra,
  };
}

const PLAN_1 = '# Plan\n\n1. One\n2. Two\n';
const PLAN_2 = '# Plan\n\n1. One\n2. Two\n3. Three\n';

/** A model and a host that posts states to it as ReviewPanel does (texts once, by hash). */
function setUp() {
  let clock = 1_000;
  let ids = 0;
  const model = new PanelModel({ newRequestId: () => `req${++ids}`, now: () => clock });
  let sent: ReadonlySet<string> = new Set();
  const messages: StateMessage[] = [];
  return {
    model,
    messages,
    tick(ms: number) {
      clock += ms;
    },
    post(state: PanelState) {
      const { message, has } = splitPlanTexts(state, sent);
      sent = has;
      messages.push(message);
      return model.receiveState(message);
    },
    forget() {
      sent = new Set();
    },
  };
}

describe('panel model', () => {
  describe('plan texts by hash', () => {
    it('sends each text once, names it by hash after that, and rebuilds the full state in the webview', () => {
      const t = setUp();
      const first = panelState([revision(1, PLAN_1)]);
      assert.deepEqual(t.post(first), { shown: true });
      assert.deepEqual(
        t.messages[0]?.plans.map((p) => p.text),
        [PLAN_1],
      );
      assert.deepEqual(t.model.state, first);
      const second = panelState([revision(1, PLAN_1, { status: 'rejected' }), revision(2, PLAN_2)]);
      t.post(second);
      assert.deepEqual(
        t.messages[1]?.plans.map((p) => p.text),
        [PLAN_2],
        'only the new text goes',
      );
      assert.ok(!JSON.stringify(t.messages[1]?.state).includes('1. One'), 'the state itself carries no plan text');
      assert.deepEqual(t.model.state, second);
      t.post({ ...second, notice: { level: 'info', text: 'hello' } });
      assert.deepEqual(t.messages[2]?.plans, [], 'nothing resent');
      assert.equal(t.model.shown()?.plan, PLAN_2);
    });

    it('says which texts it lacks when the host thinks it has them (a recreated page), and shows nothing of that state', () => {
      const t = setUp();
      t.post(panelState([revision(1, PLAN_1)]));
      const fresh = new PanelModel({ newRequestId: () => 'x', now: () => 0 });
      const { message } = splitPlanTexts(panelState([revision(1, PLAN_1)]), new Set([sha256(PLAN_1)]));
      assert.deepEqual(fresh.receiveState(message), { shown: false, missing: [sha256(PLAN_1)] });
      assert.equal(fresh.state, undefined);
      // The host answers `ready` with every text.
      const full = splitPlanTexts(panelState([revision(1, PLAN_1)]), new Set()).message;
      assert.equal(fresh.receiveState(full).shown, true);
      assert.equal(fresh.shown()?.plan, PLAN_1);
    });

    it('keeps only the texts of the last state, as the host assumes', () => {
      const t = setUp();
      t.post(panelState([revision(1, PLAN_1)]));
      t.post(panelState([revision(2, PLAN_2)], { sessionKey: 'embedded:sess_2', sessionId: 'sess_2' }));
      const back = splitPlanTexts(panelState([revision(1, PLAN_1)]), new Set([sha256(PLAN_1)])).message;
      assert.deepEqual(t.model.receiveState(back), { shown: false, missing: [sha256(PLAN_1)] });
    });
  });

  describe('what is shown', () => {
    it('shows the current revision, an older one on request, and the diff base only when the diff is on', () => {
      const t = setUp();
      t.post(panelState([revision(1, PLAN_1, { status: 'rejected' }), revision(2, PLAN_2)]));
      assert.equal(t.model.shown()?.revision, 2);
      assert.equal(t.model.diffBase(), undefined);
      t.model.toggleDiff();
      assert.equal(t.model.diffBase()?.revision, 1);
      t.model.select(1);
      assert.equal(t.model.shown()?.revision, 1);
      assert.equal(t.model.buttonsEnabled(), false, 'no decision from an older revision');
      assert.match(t.model.statusText(), /viewing an older revision; decisions apply to revision 2/);
      t.model.select(2);
      assert.equal(t.model.viewingCurrent(), true);
      assert.equal(t.model.buttonsEnabled(), true);
    });

    it('words the status line from the state and the lock', () => {
      const t = setUp();
      const state = panelState([revision(1, PLAN_1)]);
      t.post(state);
      assert.equal(t.model.statusText(), '');
      t.post({ ...state, canDecide: false });
      assert.equal(t.model.statusText(), 'This plan cannot be decided right now.');
      t.post({ ...state, pendingDecision: 'approve' });
      assert.equal(t.model.statusText(), 'Approve: in progress…');
      t.post(panelState([revision(1, PLAN_1, { status: 'approved', notes: 'keep it' })], { canDecide: false }));
      assert.equal(t.model.statusText(), 'Revision 1 was approved with notes.');
    });
  });

  describe('the lock', () => {
    it('holds from a decision to its answer, through stale states, and ends when the session moves on', () => {
      const t = setUp();
      const state = panelState([revision(1, PLAN_1)]);
      t.post(state);
      const approve = t.model.decide('approve');
      assert.ok(approve.ok);
      assert.deepEqual(approve.message, {
        type: 'approve',
        requestId: 'req1',
        sessionKey: 'embedded:sess_1',
        binding: { sessionId: 'sess_1', toolUseId: 'toolu_1', planHash: sha256(PLAN_1) },
      });
      assert.equal(t.model.buttonsEnabled(), false);
      assert.equal(t.model.statusText(), 'Approve sent; waiting for the extension.');
      t.post(state);
      assert.equal(t.model.buttonsEnabled(), false, 'a stale state does not end it');
      assert.equal(t.model.receiveAnswer({ type: 'answer', requestId: 'other', result: 'sent' }), false);
      assert.ok(t.model.receiveAnswer({ type: 'answer', requestId: 'req1', result: 'refused', reason: 'offline' }));
      assert.equal(t.model.notice, 'offline');
      assert.equal(t.model.buttonsEnabled(), true);
      assert.ok(t.model.decide('teleport').ok);
      t.post(panelState([revision(1, PLAN_1, { status: 'rejected' }), revision(2, PLAN_2)]));
      assert.equal(t.model.lock, undefined, 'a new plan ends it');
      assert.equal(t.model.buttonsEnabled(), true);
    });

    it('refuses a decision that is not open, saying why', () => {
      const t = setUp();
      assert.deepEqual(t.model.decide('approve'), { ok: false, notice: 'Approve is not available right now.' });
      t.post(panelState([revision(1, PLAN_1, { status: 'rejected' }), revision(2, PLAN_2)]));
      t.model.select(1);
      const refused = t.model.decide('edit');
      assert.ok(!refused.ok);
      assert.match(refused.notice, /Switch to revision 2/);
      t.model.select(2);
      const reject = t.model.decide('reject');
      assert.ok(!reject.ok && reject.focus === 'feedback', 'a reject needs feedback or a comment');
      const blankNotes = t.model.decide('approve', '   ');
      assert.ok(!blankNotes.ok && blankNotes.focus === 'notes');
      assert.equal(t.model.lock, undefined);
    });
  });

  describe('comments, notes and drafts', () => {
    it('writes comments through the composer, keeps a half-written comment in the draft, and rejects with them', () => {
      const t = setUp();
      t.post(panelState([revision(1, PLAN_1)]));
      assert.ok(t.model.openComposer({ first: 2, last: 2 }));
      t.model.typeComment('Say why');
      const key = planDraftKey('embedded:sess_1', 'toolu_1');
      assert.ok(t.model.changedDrafts.has(key));
      const saved = t.model.takeChanged(key) as SaveDraftMessage;
      assert.deepEqual(saved.comment, { line: 3, text: 'Say why' }, 'the comment being written is a draft too');
      assert.equal(t.model.takeChanged(key), undefined, 'written once');
      assert.deepEqual(t.model.commitComment({ line: 3, quote: '1. One', text: 'Say why' }), { ok: true });
      assert.equal(t.model.composer, undefined);
      assert.ok(t.model.extendComposer({ first: 3, last: 3 }));
      assert.deepEqual(t.model.composer, { range: { first: 3, last: 3 }, text: '' });
      t.model.cancelComment();
      assert.equal(t.model.commentCountText(true), '1 line comment will be sent with Reject.');
      t.model.typeFeedback('Shorter, please.');
      const reject = t.model.decide('reject');
      assert.ok(reject.ok && reject.message.type === 'reject');
      assert.equal(reject.message.feedback, 'Shorter, please.');
      assert.deepEqual(reject.message.comments, [{ line: 3, quote: '1. One', text: 'Say why' }]);
      assert.equal(t.model.takeChanged(key), undefined, 'a write left waiting does not bring the decided draft back to the host');
      assert.equal(t.model.canComment(), false, 'locked');
    });

    it('closes the comment being written when another revision is shown or a decision goes out, and the draft says so', () => {
      const t = setUp();
      t.post(panelState([revision(1, PLAN_1, { status: 'rejected' }), revision(2, PLAN_2)]));
      const key = planDraftKey('embedded:sess_1', 'toolu_2');
      t.model.openComposer({ first: 4, last: 4 });
      t.model.typeComment('half');
      assert.deepEqual((t.model.takeChanged(key) as SaveDraftMessage).comment, { line: 5, text: 'half' });
      t.model.select(1);
      assert.equal(t.model.composer, undefined);
      assert.equal((t.model.takeChanged(key) as SaveDraftMessage).comment, undefined, 'no stale comment comes back after a reload');
      t.model.select(2);
      t.model.openComposer({ first: 2, last: 2 });
      t.model.typeFeedback('why');
      assert.ok(t.model.decide('reject').ok);
      assert.equal(t.model.composer, undefined);
      assert.equal(t.model.currentDraft()?.comment, undefined);
    });

    it('opens the notes field on request or when the plan has a notes draft, and sends the notes with Approve', () => {
      const t = setUp();
      t.post(panelState([revision(1, PLAN_1)]));
      assert.equal(t.model.notesShown(), false);
      assert.ok(t.model.openNotes().ok);
      assert.equal(t.model.notesShown(), true);
      t.model.typeNotes('Keep the names');
      t.model.closeNotes();
      assert.equal(t.model.notesShown(), false, 'closed, the text kept');
      assert.equal(t.model.currentDraft()?.notes, 'Keep the names');
      const approve = t.model.decide('approve', 'Keep the names');
      assert.ok(approve.ok && approve.message.type === 'approve');
      assert.equal(approve.message.notes, 'Keep the names');
    });

    it('takes the host copy of a draft when it is newer than its own (a reload cut the page save short), else keeps its own', () => {
      const t = setUp();
      t.model.restore({
        sessionKey: 'embedded:sess_1',
        drafts: [{ sessionKey: 'embedded:sess_1', toolUseId: 'toolu_1', feedback: 'old', comments: [], at: 500 }],
        replies: [{ sessionKey: 'embedded:sess_1', text: 'old reply', at: 500 }],
      });
      t.post(
        panelState([revision(1, PLAN_1)], {
          phase: 'needs_input',
          question: 'Which?',
          draft: {
            toolUseId: 'toolu_1',
            feedback: 'newer',
            comments: [],
            notes: 'n',
            comment: { line: 1, endLine: 2, text: 'half' },
            at: 900,
          },
          replyDraft: { text: 'newer reply', at: 900 },
        }),
      );
      assert.equal(t.model.currentDraft()?.feedback, 'newer');
      assert.equal(t.model.replyText(), 'newer reply');
      assert.deepEqual(t.model.composer, { range: { first: 0, last: 1 }, text: 'half' }, 'the half-written comment is open again');
      assert.equal(t.model.notesShown(), true, 'the notes field opens on its draft');
      t.tick(1);
      t.model.typeFeedback('mine');
      t.post(
        panelState([revision(1, PLAN_1)], { draft: { toolUseId: 'toolu_1', feedback: 'echo of an older write', comments: [], at: 950 } }),
      );
      assert.equal(t.model.currentDraft()?.feedback, 'mine', 'an older host copy never overwrites what was typed');
    });

    it('keeps the reply from its keystrokes, sends it once, and then forgets it', () => {
      const t = setUp();
      t.post(panelState([], { phase: 'needs_input', question: 'Which?', canDecide: false }));
      t.model.typeReply('The first');
      const key = replyDraftKey('embedded:sess_1');
      assert.deepEqual(t.model.takeChanged(key), {
        type: 'saveReplyDraft',
        sessionKey: 'embedded:sess_1',
        text: 'The first',
        at: 1_000,
      });
      assert.deepEqual(t.model.savedState().replies, [{ sessionKey: 'embedded:sess_1', text: 'The first', at: 1_000 }]);
      const reply = t.model.reply();
      assert.ok(reply.ok);
      assert.deepEqual(reply.message, { type: 'reply', requestId: 'req1', sessionKey: 'embedded:sess_1', text: 'The first' });
      assert.equal(t.model.replyText(), '');
      assert.equal(t.model.replyEnabled(), false, 'locked until the answer');
      assert.equal(t.model.savedState().replies, undefined);
    });

    it('saves drafts and the session shown, never the state or a plan text', () => {
      const t = setUp();
      t.post(panelState([revision(1, PLAN_1)]));
      t.model.typeFeedback('typed');
      const saved = t.model.savedState();
      assert.deepEqual(saved, {
        sessionKey: 'embedded:sess_1',
        drafts: [{ sessionKey: 'embedded:sess_1', toolUseId: 'toolu_1', feedback: 'typed', comments: [], at: 1_000 }],
      });
      assert.equal(t.model.sessionUnsaved(), false);
      t.post(panelState([revision(1, PLAN_2)], { sessionKey: 'embedded:sess_2', sessionId: 'sess_2' }));
      assert.equal(t.model.sessionUnsaved(), true);
    });
  });
});

import * as assert from 'node:assert/strict';
import {
  PANEL_LIMITS,
  currentRevision,
  isHttpUrl,
  parseHostToWebviewMessage,
  parsePanelState,
  parseWebviewSavedState,
  parseWebviewToHostMessage,
  splitPlanTexts,
  type PanelState,
} from '../../src/core/panelMessages';

const HASH = 'a'.repeat(64);
const binding = { sessionId: 'sess_1', toolUseId: 'toolu_1', planHash: HASH };

function state(extra: Partial<PanelState> = {}): PanelState {
  return {
    sessionKey: 'embedded:sess_1',
    sessionId: 'sess_1',
    title: 'Plan',
    backendLabel: 'Embedded',
    phase: 'plan_ready',
    revisions: [{ revision: 1, toolUseId: 'toolu_1', plan: '# Plan\n- step', planHash: HASH, status: 'pending', comments: [] }],
    canDecide: true,
    ...extra,
  };
}

/** The state message ReviewPanel posts for `full` to a page that has no plan text yet. */
function stateMessage(full: PanelState): unknown {
  return splitPlanTexts(full, new Set()).message;
}

function expectError(result: { ok: boolean; error?: string }, pattern: RegExp): void {
  assert.equal(result.ok, false);
  assert.match((result as { error: string }).error, pattern);
}

describe('panel messages', () => {
  describe('host -> webview', () => {
    it('accepts a full state and returns it typed', () => {
      const full = state({
        agentLabel: 'Claude (ACP)',
        sessionLink: 'https://example.com/s/1',
        question: 'Which database?',
        pendingDecision: 'approve',
        notice: { level: 'warning', text: 'Reconnecting' },
        outcome: { text: 'Done', link: 'https://example.com/s/1' },
        draft: {
          toolUseId: 'toolu_1',
          feedback: 'more tests',
          comments: [{ line: 2, quote: '- step', text: 'why?' }],
          comment: { line: 1, endLine: 2, text: 'half', editing: 0 },
          at: 1_700_000_000_000,
        },
        replyDraft: { text: 'Postgres', at: 1_700_000_000_000 },
        demo: true,
      });
      const message = stateMessage(full);
      const result = parseHostToWebviewMessage(message);
      assert.ok(result.ok, result.ok ? '' : result.error);
      assert.deepEqual(result.value, message);
      assert.deepEqual(result.value.type === 'state' && result.value.plans, [{ hash: HASH, text: '# Plan\n- step' }]);
      assert.equal(currentRevision(full)?.toolUseId, 'toolu_1');
    });

    it('names a plan text by its hash only, once the page has it', () => {
      const { message, has } = splitPlanTexts(state(), new Set([HASH]));
      assert.deepEqual(message.plans, []);
      assert.ok(!('plan' in (message.state.revisions[0] ?? {})), 'no text in the revision');
      assert.deepEqual([...has], [HASH]);
      assert.ok(parseHostToWebviewMessage(message).ok);
      // A revision carrying its text is refused on the wire: texts go only in `plans`.
      expectError(parseHostToWebviewMessage({ ...message, state: state() }), /plan/);
    });

    it('accepts invoke for the four decisions only', () => {
      assert.ok(parseHostToWebviewMessage({ type: 'invoke', action: 'reject' }).ok);
      expectError(parseHostToWebviewMessage({ type: 'invoke', action: 'reply' }), /action/);
    });

    it('refuses unknown types, unknown fields and bad enums with a readable error', () => {
      expectError(parseHostToWebviewMessage({ type: 'eval', code: 'alert(1)' }), /invalid message from the extension/);
      expectError(parseHostToWebviewMessage(stateMessage({ ...state(), extra: 1 } as PanelState)), /extra/);
      expectError(parseHostToWebviewMessage(stateMessage(state({ phase: 'done' as never }))), /phase/);
      expectError(parseHostToWebviewMessage(null), /invalid/);
    });

    it('refuses a session link or outcome link that is not http(s)', () => {
      expectError(parsePanelState(state({ sessionLink: 'command:workbench.action.terminal.new' })), /http\(s\)/);
      expectError(parsePanelState(state({ sessionLink: 'javascript:alert(1)' })), /http\(s\)/);
      expectError(parsePanelState(state({ outcome: { text: 'x', link: 'data:text/html,hi' } })), /http\(s\)/);
    });

    it('refuses a plan over 2 MB and a plan hash that is not sha256 hex', () => {
      const big = 'x'.repeat(PANEL_LIMITS.planChars + 1);
      const revisions = state().revisions.map((r) => ({ ...r, plan: big }));
      expectError(parsePanelState(state({ revisions })), /plan/);
      const atLimit = state().revisions.map((r) => ({ ...r, plan: 'x'.repeat(PANEL_LIMITS.planChars) }));
      assert.ok(parsePanelState(state({ revisions: atLimit })).ok);
      const badHash = state().revisions.map((r) => ({ ...r, planHash: 'A'.repeat(64) }));
      expectError(parsePanelState(state({ revisions: badHash })), /sha256/);
      // On the wire too: a text over the bound in `plans` is refused.
      expectError(parseHostToWebviewMessage(stateMessage(state({ revisions }))), /plans/);
    });

    it('accepts one answer per request: sent, or refused with its reason', () => {
      for (const message of [
        { type: 'answer', requestId: 'r1', result: 'sent' },
        { type: 'answer', requestId: 'r1', result: 'refused', reason: 'The plan changed since it was shown; nothing was sent.' },
      ]) {
        const result = parseHostToWebviewMessage(message);
        assert.ok(result.ok, result.ok ? '' : result.error);
        assert.deepEqual(result.value, message);
      }
      expectError(parseHostToWebviewMessage({ type: 'answer', requestId: 'r1', result: 'refused' }), /reason/);
      expectError(parseHostToWebviewMessage({ type: 'answer', requestId: 'r1', result: 'sent', reason: 'x' }), /reason|Unrecognized/);
      expectError(parseHostToWebviewMessage({ type: 'answer', requestId: 'r1', result: 'maybe' }), /result|Invalid/);
    });

    it('keeps the error short even for a huge invalid message', () => {
      const revisions = Array.from({ length: 300 }, (_, i) => ({
        revision: i + 1,
        toolUseId: '',
        plan: 1,
        planHash: 'x',
        status: 'nope',
        comments: 'no',
      }));
      const result = parseHostToWebviewMessage({ type: 'state', state: { ...state(), revisions }, plans: [] });
      assert.equal(result.ok, false);
      assert.ok(!result.ok && result.error.length < 700, 'error is clipped');
    });
  });

  describe('webview -> host', () => {
    /** Every decision and reply names its request and its session. */
    const req = { requestId: 'r1', sessionKey: 'k' };

    it('refuses a decision or reply without a request id or session key', () => {
      expectError(parseWebviewToHostMessage({ type: 'approve', sessionKey: 'k', binding }), /requestId/);
      expectError(parseWebviewToHostMessage({ type: 'reply', requestId: 'r1', text: 'x' }), /sessionKey/);
      expectError(parseWebviewToHostMessage({ type: 'edit', ...req, requestId: '', binding }), /requestId/);
    });

    it('accepts each message type', () => {
      const messages = [
        { type: 'ready' },
        { type: 'approve', ...req, binding },
        { type: 'reject', ...req, binding, feedback: 'Use SQLite', comments: [] },
        { type: 'reject', ...req, binding, feedback: '', comments: [{ line: 3, endLine: 5, quote: 'a\nb\nc', text: 'split this' }] },
        { type: 'edit', ...req, binding },
        { type: 'teleport', ...req, binding },
        { type: 'reply', ...req, text: 'Postgres' },
        { type: 'openLink', href: 'https://example.com/docs?a=1#b' },
        { type: 'saveDraft', sessionKey: 'k', toolUseId: 'toolu_1', feedback: '', comments: [] },
        {
          type: 'saveDraft',
          sessionKey: 'k',
          toolUseId: 'toolu_1',
          feedback: 'f',
          comments: [],
          notes: 'n',
          comment: { line: 2, text: 'being written' },
          at: 1_700_000_000_000,
        },
        { type: 'saveReplyDraft', sessionKey: 'k', text: 'Postg', at: 1_700_000_000_000 },
      ];
      for (const message of messages) {
        const result = parseWebviewToHostMessage(message);
        assert.ok(result.ok, `${message.type}: ${result.ok ? '' : result.error}`);
        assert.deepEqual(result.value, message);
      }
    });

    it('approve with notes: the notes travel in the approve message, bounded at 2,000 characters and never blank', () => {
      assert.equal(PANEL_LIMITS.notesChars, 2_000);
      const atBound = 'n'.repeat(PANEL_LIMITS.notesChars);
      const ok = parseWebviewToHostMessage({ type: 'approve', ...req, binding, notes: atBound });
      assert.ok(ok.ok && ok.value.type === 'approve' && ok.value.notes === atBound);
      expectError(
        parseWebviewToHostMessage({ type: 'approve', ...req, binding, notes: `${atBound}!` }),
        /notes are limited to 2000 characters/,
      );
      expectError(parseWebviewToHostMessage({ type: 'approve', ...req, binding, notes: ' \n\t ' }), /notes need text/);
      expectError(parseWebviewToHostMessage({ type: 'approve', ...req, binding, notes: 42 }), /notes/);
      // Notes belong to an approval: no other decision takes them.
      expectError(parseWebviewToHostMessage({ type: 'teleport', ...req, binding, notes: 'x' }), /notes/);
      // A notes draft is bounded the same way (it may be blank while typed).
      const draft = { type: 'saveDraft', sessionKey: 'k', toolUseId: 'toolu_1', feedback: '', comments: [] };
      assert.ok(parseWebviewToHostMessage({ ...draft, notes: '' }).ok);
      expectError(parseWebviewToHostMessage({ ...draft, notes: `${atBound}!` }), /notes/);
    });

    it('a revision approved with notes carries them in the state; a saved draft keeps unsent notes', () => {
      const approved = state({
        revisions: [{ ...state().revisions[0]!, status: 'approved', notes: 'Keep the API stable.' }],
        canDecide: false,
      });
      const parsed = parseHostToWebviewMessage(stateMessage(approved));
      assert.ok(parsed.ok && parsed.value.type === 'state' && parsed.value.state.revisions[0]?.notes === 'Keep the API stable.');
      const saved = parseWebviewSavedState({
        drafts: [{ sessionKey: 'k', toolUseId: 'toolu_1', feedback: '', comments: [], notes: 'half-written' }],
      });
      assert.ok(saved.ok && saved.value.drafts[0]?.notes === 'half-written');
    });

    it('refuses a decision without a valid binding', () => {
      expectError(parseWebviewToHostMessage({ type: 'approve' }), /binding/);
      expectError(parseWebviewToHostMessage({ type: 'approve', ...req, binding: { ...binding, planHash: 'abc' } }), /sha256/);
      expectError(parseWebviewToHostMessage({ type: 'approve', ...req, binding: { ...binding, extra: true } }), /extra/);
      expectError(parseWebviewToHostMessage({ type: 'teleport', ...req, binding: { ...binding, toolUseId: '' } }), /toolUseId/);
    });

    it('refuses a rejection with neither feedback nor comments', () => {
      expectError(
        parseWebviewToHostMessage({ type: 'reject', ...req, binding, feedback: '   ', comments: [] }),
        /feedback text or at least one comment/,
      );
    });

    it('refuses bad comments: line 0, endLine before line, empty text, too many', () => {
      const reject = (comments: unknown[]) => parseWebviewToHostMessage({ type: 'reject', ...req, binding, feedback: 'x', comments });
      expectError(reject([{ line: 0, quote: '', text: 'a' }]), /line/);
      expectError(reject([{ line: 4, endLine: 2, quote: '', text: 'a' }]), /endLine/);
      expectError(reject([{ line: 1, quote: '', text: '  ' }]), /needs text/);
      const many = Array.from({ length: PANEL_LIMITS.comments + 1 }, () => ({ line: 1, quote: '', text: 'a' }));
      expectError(reject(many), /comments/);
      assert.ok(reject(many.slice(1)).ok);
    });

    it('refuses oversize feedback and replies', () => {
      expectError(
        parseWebviewToHostMessage({ type: 'reject', ...req, binding, feedback: 'x'.repeat(PANEL_LIMITS.feedbackChars + 1), comments: [] }),
        /feedback/,
      );
      expectError(parseWebviewToHostMessage({ type: 'reply', ...req, text: 'x'.repeat(PANEL_LIMITS.replyChars + 1) }), /text/);
      expectError(parseWebviewToHostMessage({ type: 'reply', ...req, text: ' ' }), /needs text/);
    });

    it('refuses links that are not absolute http(s)', () => {
      for (const href of [
        'command:workbench.action.openSettings',
        'javascript:alert(1)',
        'data:text/html,x',
        'file:///etc/passwd',
        'vscode://x',
        '/relative',
        'https://' + 'a'.repeat(3000),
      ]) {
        expectError(parseWebviewToHostMessage({ type: 'openLink', href }), /http\(s\)|openLink|href/);
        assert.equal(isHttpUrl(href), false, href);
      }
      assert.equal(isHttpUrl('http://127.0.0.1:8080/x'), true);
    });
  });

  describe('saved webview state', () => {
    it('round-trips drafts and the session shown, and refuses garbage', () => {
      const saved = {
        sessionKey: 'k',
        drafts: [{ sessionKey: 'k', toolUseId: 't', feedback: 'f', comments: [], comment: { line: 1, text: 'c' }, at: 5 }],
        replies: [{ sessionKey: 'k', text: 'r', at: 6 }],
      };
      const result = parseWebviewSavedState(saved);
      assert.ok(result.ok);
      assert.deepEqual(result.value, saved);
      expectError(parseWebviewSavedState({ drafts: 'x' }), /drafts/);
      expectError(parseWebviewSavedState(42), /saved panel state/);
    });

    it('takes the drafts of a state saved by an older version (which kept the whole state), dropping the state', () => {
      const result = parseWebviewSavedState({ state: state(), drafts: [{ sessionKey: 'k', toolUseId: 't', feedback: 'f', comments: [] }] });
      assert.ok(result.ok);
      assert.deepEqual(result.value, { drafts: [{ sessionKey: 'k', toolUseId: 't', feedback: 'f', comments: [] }] });
    });
  });
});

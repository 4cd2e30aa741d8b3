// Approve with notes, per backend kind, through a followed session against an in-memory backend:
// what is sent, in what order and in how many batches; what the panel and the persisted record
// show; and that the notes never loosen the decision's binding to the plan shown.
import * as assert from 'node:assert/strict';
import { notesPrompt, planWithNotes } from '../../../src/core/approvalNotes';
import { bindingFor } from '../../../src/core/decision';
import { PANEL_LIMITS } from '../../../src/core/panelMessages';
import type { BackendKind } from '../../../src/core/backendKinds';
import type { PersistedSession } from '../../../src/core/persistedSessions';
import { toPersisted } from '../../../src/core/sessionRecord';
import { FollowedSession } from '../../../src/extension/sessions/followedSession';
import type { NotifierAction, SessionNotifier } from '../../../src/extension/sessions/sessionNotifier';
import { MemoryBackend } from '../../support/memoryBackend';
import { approve, canUseTool, editedText, exitPlan, toolResult } from '../../support/sessionEvents';
import { waitFor } from '../../support/wait';
import { quietLog } from '../../support/followedSession';

const PLAN = '# Plan\n\n1. Flip the flag in src/app.ts.\n';
const NOTES = 'Keep the public API as it is; add a test for the flag.';

class Notifier implements SessionNotifier {
  readonly said: string[] = [];
  say(_level: string, text: string, ..._actions: NotifierAction[]): void {
    this.said.push(text);
  }
  showReview(): void {}
  openExternal(): void {}
  isReviewShowing(): boolean {
    return true;
  }
  async askPermission(): Promise<void> {}
}

describe('FollowedSession: approve with notes', () => {
  const controllers: FollowedSession[] = [];
  afterEach(async () => {
    for (const c of controllers.splice(0)) {
      c.dispose();
      await c.settled();
    }
  });

  function controllerFor(backend: MemoryBackend, notifier = new Notifier(), restored?: PersistedSession) {
    const c = new FollowedSession({
      backend,
      log: quietLog,
      notifier,
      pollIntervalMs: 5,
      timeoutMs: 60_000,
      onSnapshot: () => undefined,
      from: restored ? { restored } : { fresh: { key: `${backend.kind}:s1`, sessionId: 's1', title: 'flag', demo: false } },
    });
    controllers.push(c);
    return c;
  }

  async function planReady(kind: BackendKind) {
    const backend = new MemoryBackend(kind);
    const notifier = new Notifier();
    const c = controllerFor(backend, notifier);
    c.start();
    backend.status = 'requires_action';
    backend.push(exitPlan('toolu_1', PLAN), canUseTool('req_1', 'toolu_1', PLAN));
    await waitFor(() => c.canDecide, 'a decidable plan');
    return { backend, notifier, c };
  }

  for (const kind of ['embedded', 'server'] as const) {
    it(`${kind}: one batch, the approving control_response first, then the wrapped notes as the next user message`, async () => {
      const { backend, c } = await planReady(kind);
      assert.deepEqual(await c.decisions.approveWithNotes(bindingFor('s1', 'toolu_1', PLAN), `  ${NOTES}\n`), { sent: true });
      assert.equal(backend.batches.length, 1, 'taken together or not at all');
      assert.deepEqual(backend.batches[0], [
        {
          type: 'control_response',
          response: { subtype: 'success', request_id: 'req_1', response: { behavior: 'allow', updatedInput: { plan: PLAN } } },
        },
        { type: 'user', parent_tool_use_id: null, message: { role: 'user', content: notesPrompt(NOTES) } },
      ]);
      assert.match(notesPrompt(NOTES), /^Notes from the reviewer on the approved plan/);
      const revision = c.snapshot.panel.revisions[0];
      assert.equal(revision?.status, 'approved');
      assert.equal(revision?.notes, NOTES);
      assert.equal(revision?.plan, PLAN, 'the plan itself is unchanged');
      assert.equal(c.phase, 'approved');

      // The session's record of the approval arrives: still approved, with the notes.
      backend.push(approve('toolu_1', PLAN));
      await waitFor(() => c.phase === 'executing', 'executing');
      assert.equal(c.snapshot.panel.revisions[0]?.notes, NOTES);

      // The history keeps them: persisted with the decision, shown again after a reload.
      const persisted = toPersisted(c.snapshot);
      assert.equal(persisted.revisions[0]?.notes, NOTES);
      const restored = controllerFor(new MemoryBackend(kind), new Notifier(), persisted);
      assert.equal(restored.snapshot.panel.revisions[0]?.notes, NOTES);
      assert.equal(restored.snapshot.panel.revisions[0]?.status, 'approved');
    });
  }

  it('claude-web: one edited approval whose updatedInput.plan is the plan plus "## Reviewer notes"; shown as an edited approval', async () => {
    const { backend, c } = await planReady('claude-web');
    assert.deepEqual(await c.decisions.approveWithNotes(bindingFor('s1', 'toolu_1', PLAN), NOTES), { sent: true });
    const withNotes = planWithNotes(PLAN, NOTES);
    assert.deepEqual(backend.batches, [
      [
        {
          type: 'control_response',
          response: { subtype: 'success', request_id: 'req_1', response: { behavior: 'allow', updatedInput: { plan: withNotes } } },
        },
      ],
    ]);
    assert.match(withNotes, /## Reviewer notes\n\nKeep the public API as it is; add a test for the flag\.\n$/);
    let revision = c.snapshot.panel.revisions[0];
    assert.equal(revision?.status, 'approved_edited');
    assert.equal(revision?.plan, withNotes, 'the panel shows the plan that was approved');
    assert.equal(revision?.notes, NOTES);
    // The remote records it as an edited approval: the panel keeps showing it as such.
    backend.push(toolResult('toolu_1', editedText(withNotes)));
    await waitFor(() => c.phase === 'executing', 'executing');
    revision = c.snapshot.panel.revisions[0];
    assert.equal(revision?.status, 'approved_edited');
    assert.equal(revision?.plan.trimEnd(), withNotes.trimEnd());
    assert.equal(revision?.notes, NOTES);
  });

  it('the binding still rules: notes on a plan that is not the one shown, blank notes or notes over the bound send nothing', async () => {
    const { backend, notifier, c } = await planReady('embedded');
    const stale = await c.decisions.approveWithNotes(bindingFor('s1', 'toolu_1', '# An older text'), NOTES);
    assert.ok(!stale.sent && /differs from the one shown/.test(stale.message));
    const blank = await c.decisions.approveWithNotes(bindingFor('s1', 'toolu_1', PLAN), '  \n');
    assert.ok(!blank.sent && /notes are empty/.test(blank.message));
    const long = await c.decisions.approveWithNotes(bindingFor('s1', 'toolu_1', PLAN), 'n'.repeat(PANEL_LIMITS.notesChars + 1));
    assert.ok(!long.sent && /at most 2000/.test(long.message));
    assert.deepEqual(backend.sent, [], 'nothing was sent');
    assert.equal(notifier.said.length, 3, 'each refusal was told');
    assert.equal(c.canDecide, true, 'the plan can still be decided');
    // Decided once: the same approval with notes is not sent twice.
    assert.equal((await c.decisions.approveWithNotes(bindingFor('s1', 'toolu_1', PLAN), NOTES)).sent, true);
    const again = await c.decisions.approveWithNotes(bindingFor('s1', 'toolu_1', PLAN), NOTES);
    assert.ok(!again.sent && /already decided/.test(again.message));
    assert.equal(backend.batches.length, 1);
  });

  it('a failed send delivers neither the approval nor the notes; trying again sends both, in order', async () => {
    const { backend, c } = await planReady('server');
    backend.failNextSend = new Error('connection reset');
    const failed = await c.decisions.approveWithNotes(bindingFor('s1', 'toolu_1', PLAN), NOTES);
    assert.ok(!failed.sent && /Sending the decision failed: connection reset/.test(failed.message));
    assert.deepEqual(backend.sent, []);
    assert.equal(c.canDecide, true);
    assert.equal(c.snapshot.panel.revisions[0]?.notes, undefined, 'not recorded as sent');
    assert.deepEqual(await c.decisions.approveWithNotes(bindingFor('s1', 'toolu_1', PLAN), NOTES), { sent: true });
    assert.deepEqual(
      backend.batches.map((batch) => batch.map((e) => e.type)),
      [['control_response', 'user']],
    );
  });
});

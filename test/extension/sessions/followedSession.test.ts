// A followed session against an in-memory backend, with a recording notifier: the follower feeds
// the model once per poll, the projections change once per batch, decisions answer sent or
// refused, and what the person hears goes through the notifier (the backend's words through its voice).
import * as assert from 'node:assert/strict';
import { bindingFor } from '../../../src/core/decision';
import { SessionsError } from '../../../src/core/errors';
import { groupInbox, revisionDecisionsText } from '../../../src/core/inbox';
import type { PanelState } from '../../../src/core/panelMessages';
import { PERSISTED_SESSIONS_KEY } from '../../../src/core/persistedSessions';
import { samePanelState } from '../../../src/core/sessionProjection';
import { toPersisted } from '../../../src/core/sessionRecord';
import type { SessionSnapshot } from '../../../src/core/sessionSnapshot';
import { summarizeStatus } from '../../../src/core/statusSummary';
import { SessionStore } from '../../../src/extension/sessions/sessionStore';
import { FollowedSession } from '../../../src/extension/sessions/followedSession';
import type { BackendVoice, NotifierAction, SessionLog, SessionNotifier } from '../../../src/extension/sessions/sessionNotifier';
import { MemoryBackend } from '../../support/memoryBackend';
import { approve, assistantText, exitPlan, toolRequest } from '../../support/sessionEvents';
import { waitFor } from '../../support/wait';
import { quietLog } from '../../support/followedSession';

class RecordingNotifier implements SessionNotifier {
  readonly said: Array<{ level: string; text: string; actions: string[] }> = [];
  showing = false;
  asked: string[] = [];
  say(level: 'info' | 'warning' | 'error', text: string, ...actions: NotifierAction[]): void {
    this.said.push({ level, text, actions: actions.map((a) => a.label) });
  }
  showReview(): void {}
  openExternal(): void {}
  isReviewShowing(): boolean {
    return this.showing;
  }
  async askPermission(_asker: unknown, request: { requestId: string }): Promise<void> {
    this.asked.push(request.requestId);
  }
}

describe('FollowedSession (follower, decisions, snapshots)', () => {
  let controller: FollowedSession | undefined;
  afterEach(async () => {
    controller?.dispose();
    await controller?.settled();
    controller = undefined;
  });

  function follow(
    backend: MemoryBackend,
    notifier: SessionNotifier,
    extra: { voice?: BackendVoice; onChange?: (snapshot: SessionSnapshot) => void; readOnly?: string; log?: SessionLog } = {},
  ): FollowedSession {
    const options: ConstructorParameters<typeof FollowedSession>[0] = {
      backend,
      log: extra.log ?? quietLog,
      notifier,
      pollIntervalMs: 5,
      timeoutMs: 60_000,
      onSnapshot: (_session, snapshot) => extra.onChange?.(snapshot),
      from: {
        fresh: {
          key: 'server:s1',
          sessionId: 's1',
          title: 'dark mode',
          demo: false,
          ...(extra.readOnly !== undefined ? { readOnly: extra.readOnly } : {}),
        },
      },
    };
    if (extra.voice) options.voice = extra.voice;
    controller = new FollowedSession(options);
    controller.start();
    return controller;
  }

  it('one batch is one change, the plan is announced once, and the panel state is built once per change', async () => {
    const backend = new MemoryBackend();
    const notifier = new RecordingNotifier();
    let changes = 0;
    const c = follow(backend, notifier, { onChange: () => changes++ });
    await waitFor(() => backend.reads > 0, 'the first poll');
    const before = changes;
    const readsBefore = backend.reads;
    backend.status = 'requires_action';
    backend.push(
      assistantText('Here is my plan'),
      exitPlan('toolu_1', '# Plan'),
      toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: '# Plan' }),
    );
    await waitFor(() => c.phase === 'plan_ready', 'plan_ready');
    await waitFor(() => backend.reads > readsBefore + 3, 'a few more polls');
    assert.equal(changes - before, 1, 'three events in one batch, then quiet polls: one change');
    assert.deepEqual(
      notifier.said.map((s) => s.text),
      ['plan ready for "dark mode".'],
    );
    const state = c.snapshot.panel;
    assert.equal(c.snapshot.panel, state, 'the same projection until something changes');
    assert.equal(state.revisions[0]?.status, 'pending');
    assert.equal(state.canDecide, true);
  });

  it('a session followed read-only shows its plan and the reason, refuses every decision with it, and is never archived', async () => {
    const backend = new MemoryBackend();
    const notifier = new RecordingNotifier();
    const reason = 'Read-only: this session is archived, so it takes no more decisions.';
    const c = follow(backend, notifier, { readOnly: reason });
    backend.push(exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: '# Plan' }));
    await waitFor(() => c.phase === 'plan_ready', 'plan_ready');
    const state = c.snapshot.panel;
    assert.equal(state.canDecide, false);
    assert.deepEqual(state.notice, { level: 'info', text: reason });
    assert.equal(state.revisions[0]?.status, 'pending');
    const binding = bindingFor('s1', 'toolu_1', '# Plan');
    for (const outcome of [
      await c.decisions.approve(binding),
      await c.decisions.reject(binding, 'no', []),
      await c.decisions.reply('hello'),
    ]) {
      assert.deepEqual(outcome, { sent: false, message: reason });
    }
    assert.equal(c.decisions.refusal(binding), reason, 'Edit and Teleport ask first, and are refused with it');
    assert.equal(backend.sent.length, 0, 'nothing was sent');
    assert.equal(toPersisted(c.snapshot).readOnly, reason, 'the reason survives a reload');
    // The session ends on its own (archived): quietly, and it is not archived again by us.
    backend.status = 'archived';
    await waitFor(() => c.finished, 'the end');
    assert.equal(backend.archived, 0);
    assert.ok(!notifier.said.some((s) => s.level === 'error'), JSON.stringify(notifier.said));
  });

  it('announces a question once and a plan once per plan, with Review, and nothing again after a reload', async () => {
    const backend = new MemoryBackend();
    const notifier = new RecordingNotifier();
    const c = follow(backend, notifier);
    backend.status = 'idle';
    backend.push(assistantText('Which file should change?'));
    await waitFor(() => c.phase === 'needs_input', 'needs_input');
    backend.status = 'requires_action';
    backend.push(exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: '# Plan' }));
    await waitFor(() => c.phase === 'plan_ready', 'plan_ready');
    const reads = backend.reads;
    await waitFor(() => backend.reads > reads + 3, 'a few more polls');
    assert.deepEqual(notifier.said, [
      { level: 'info', text: 'the agent asks a question in "dark mode".', actions: ['Review'] },
      { level: 'info', text: 'plan ready for "dark mode".', actions: ['Review'] },
    ]);
    const persisted = toPersisted(c.snapshot);
    assert.equal(persisted.notified?.length, 2);
    c.dispose();
    await c.settled();

    // After a reload the log is replayed from its start: the same plan is not announced again.
    const again = new RecordingNotifier();
    controller = new FollowedSession({
      backend,
      log: quietLog,
      notifier: again,
      pollIntervalMs: 5,
      timeoutMs: 60_000,
      onSnapshot: () => {},
      from: { restored: persisted },
    });
    controller.start();
    await waitFor(() => controller!.phase === 'plan_ready' && controller!.canDecide, 'the replayed plan');
    assert.equal(again.said.length, 0, 'nothing announced again');

    // A revised plan is a new need.
    backend.push(
      {
        type: 'user',
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'no', is_error: true }] },
      },
      exitPlan('toolu_2', '# Plan 2'),
      toolRequest('req_2', 'toolu_2', 'ExitPlanMode', { plan: '# Plan 2' }),
    );
    await waitFor(() => again.said.length > 0, 'the revised plan announced');
    assert.deepEqual(
      again.said.map((x) => x.text),
      ['plan revision 2 ready for "dark mode".'],
    );
  });

  it('says nothing when notifications are turned off, and counts the need as announced', async () => {
    const backend = new MemoryBackend();
    const notifier = new RecordingNotifier();
    controller = new FollowedSession({
      backend,
      log: quietLog,
      notifier,
      pollIntervalMs: 5,
      timeoutMs: 60_000,
      onSnapshot: () => {},
      from: { fresh: { key: 'server:s1', sessionId: 's1', title: 'dark mode', demo: false } },
      notifyNeeds: () => false,
    });
    controller.start();
    backend.status = 'requires_action';
    backend.push(exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode'));
    await waitFor(() => controller!.phase === 'plan_ready', 'plan_ready');
    assert.deepEqual(notifier.said, []);
    assert.deepEqual(toPersisted(controller.snapshot).notified, ['plan_ready:toolu_1']);
  });

  it('does not announce a plan the person is already looking at', async () => {
    const backend = new MemoryBackend();
    const notifier = new RecordingNotifier();
    notifier.showing = true;
    const c = follow(backend, notifier);
    backend.push(exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode'));
    await waitFor(() => c.phase === 'plan_ready', 'plan_ready');
    assert.deepEqual(notifier.said, []);
  });

  it('a decision is sent once: the second is refused with its reason; the phase follows the session', async () => {
    const backend = new MemoryBackend();
    const notifier = new RecordingNotifier();
    const c = follow(backend, notifier);
    backend.push(exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode'));
    await waitFor(() => c.canDecide, 'a decidable plan');
    const binding = bindingFor('s1', 'toolu_1', '# Plan');
    assert.deepEqual(await c.decisions.approve(binding), { sent: true });
    assert.equal(c.phase, 'approved');
    assert.equal(backend.sent.length, 1);
    assert.deepEqual((backend.sent[0] as unknown as { response: unknown }).response, {
      subtype: 'success',
      request_id: 'req_1',
      response: { behavior: 'allow', updatedInput: { plan: '# Plan' } },
    });
    const again = await c.decisions.approve(binding);
    assert.equal(again.sent, false);
    assert.match(!again.sent ? again.message : '', /already/);
    assert.equal(backend.sent.length, 1, 'nothing more was sent');
    assert.equal(c.snapshot.panel.pendingDecision, undefined, 'no decision is shown as in flight');
    backend.push(approve('toolu_1', '# Plan'));
    await waitFor(() => c.phase === 'executing', 'executing');
    backend.push({ type: 'result', subtype: 'success', result: 'Done: the toggle is in.' });
    await waitFor(() => c.phase === 'completed', 'completed');
    assert.match(notifier.said.at(-1)?.text ?? '', /"dark mode" finished: Done: the toggle is in\./);
  });

  it('the end of an approved plan is not announced over its own review on screen (the panel shows the outcome)', async () => {
    const backend = new MemoryBackend();
    const notifier = new RecordingNotifier();
    const c = follow(backend, notifier);
    backend.push(exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode'));
    await waitFor(() => c.canDecide, 'a decidable plan');
    assert.deepEqual(await c.decisions.approve(bindingFor('s1', 'toolu_1', '# Plan')), { sent: true });
    notifier.showing = true;
    const before = notifier.said.length;
    backend.push(approve('toolu_1', '# Plan'), { type: 'result', subtype: 'success', result: 'Done: the toggle is in.' });
    await waitFor(() => c.phase === 'completed', 'completed');
    assert.deepEqual(notifier.said.slice(before), [], 'no notification covers the review');
    assert.match(c.snapshot.panel.outcome?.text ?? '', /Done: the toggle is in\./, 'the panel shows the outcome');
  });

  it('a binding for another plan text is refused, and nothing is sent', async () => {
    const backend = new MemoryBackend();
    const c = follow(backend, new RecordingNotifier());
    backend.push(exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode'));
    await waitFor(() => c.canDecide, 'a decidable plan');
    const outcome = await c.decisions.approve(bindingFor('s1', 'toolu_1', '# Another plan'));
    assert.equal(outcome.sent, false);
    assert.deepEqual(backend.sent, []);
    assert.equal(c.snapshot.panel.notice?.level, 'warning');
  });

  it('a failure is told in the backend voice when it has words for it', async () => {
    const backend = new MemoryBackend();
    const notifier = new RecordingNotifier();
    const shown: unknown[] = [];
    const voice: BackendVoice = {
      read: () => ({ message: 'Your Claude login expired. Run `claude`, then Retry.', ownLogin: true, decisionNotDelivered: false }),
      show: (err) => {
        shown.push(err);
        return true;
      },
      executionReport: async () => undefined,
    };
    const c = follow(backend, notifier, { voice });
    backend.push(exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode'));
    await waitFor(() => c.canDecide, 'a decidable plan');
    backend.failNextSend = new Error('401');
    const outcome = await c.decisions.approve(bindingFor('s1', 'toolu_1', '# Plan'));
    assert.deepEqual(outcome, {
      sent: false,
      message: 'Sending the decision failed: Your Claude login expired. Run `claude`, then Retry.',
    });
    assert.equal(shown.length, 1, 'the voice showed it');
    assert.deepEqual(
      notifier.said.filter((s) => s.level === 'error'),
      [],
      'not said a second time',
    );
    assert.equal(c.canDecide, true, 'not delivered: the plan can be decided again');
  });

  it('asks about each permission request once, and a reply answers the question', async () => {
    const backend = new MemoryBackend();
    const notifier = new RecordingNotifier();
    const c = follow(backend, notifier);
    backend.push(toolRequest('req_9', 'bash-1', 'Bash', { command: 'npm test' }));
    await waitFor(() => c.state.attention === 'needs_permission', 'needs_permission');
    await waitFor(() => backend.reads > 3, 'more polls');
    assert.deepEqual(notifier.asked, ['req_9']);
    const request = c.permissions.open[0]!;
    assert.deepEqual(await c.permissions.answerPermission(c.permissions.binding(request), 'req_9', 'deny'), { sent: true });
    assert.equal(c.state.attention, c.phase);
    backend.push(assistantText('Which port?'));
    await waitFor(() => backend.reads > 6, 'the question read');
    backend.status = 'idle';
    await waitFor(() => c.phase === 'needs_input', 'needs_input');
    assert.equal(c.snapshot.panel.question, 'Which port?');
    assert.deepEqual(await c.decisions.reply('8080'), { sent: true });
    assert.equal(c.phase, 'planning');
    assert.equal((backend.sent.at(-1) as unknown as { message: { content: string } }).message.content, '8080');
  });

  it('an answered permission is a change like any other: one snapshot without it, and the plan it hid is announced', async () => {
    const backend = new MemoryBackend();
    const notifier = new RecordingNotifier();
    const heard: SessionSnapshot[] = [];
    let listening = false;
    const logged: string[] = [];
    const log = { ...quietLog, info: (line: string) => void logged.push(line) };
    const c = follow(backend, notifier, { log, onChange: (snapshot) => listening && heard.push(snapshot) });
    // The agent proposes its plan and, in the same turn, asks to run a command: the request
    // comes first, so the plan waits behind it.
    backend.push(
      exitPlan('toolu_1', '# Plan'),
      toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: '# Plan' }),
      toolRequest('req_9', 'bash-1', 'Bash', { command: 'npm test' }),
    );
    await waitFor(() => c.state.attention === 'needs_permission' && c.phase === 'plan_ready', 'the plan behind a permission request');
    assert.ok(!notifier.said.some((s) => s.text.includes('plan ready')), 'the plan is not announced while the request is open');
    listening = true;
    const request = c.permissions.open[0]!;
    assert.deepEqual(await c.permissions.answerPermission(c.permissions.binding(request), 'req_9', 'allow'), { sent: true });
    listening = false;
    assert.equal(heard.length, 1, 'one snapshot for the answer');
    assert.equal(heard[0]!.inbox.attention, 'plan_ready');
    assert.deepEqual(heard[0]!.state.permissions, []);
    assert.ok(
      notifier.said.some((s) => s.text === 'plan ready for "dark mode".' && s.actions.includes('Review')),
      JSON.stringify(notifier.said),
    );
    assert.ok(
      logged.some((line) => line.includes('req_9') && line.includes('closed: answered')),
      logged.join('\n'),
    );
  });

  it('while the session cannot be read the panel says it is reconnecting; once read again the plan can be decided', async () => {
    const backend = new MemoryBackend();
    // Every notice the panel is given, in order (each snapshot is heard once).
    const seen: string[] = [];
    const c = follow(backend, new RecordingNotifier(), {
      onChange: () => {
        const text = controller?.snapshot.panel.notice?.text;
        if (text !== undefined && seen.at(-1) !== text) seen.push(text);
      },
    });
    backend.push(exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: '# Plan' }));
    await waitFor(() => c.phase === 'plan_ready', 'the plan');
    const refused = () => new SessionsError('transient', 'connect ECONNREFUSED /run/ultraplan/service.sock', 503);
    backend.failReads.push(refused(), refused());
    await waitFor(() => backend.failReads.length === 0 && c.snapshot.panel.notice === undefined, 'contact to come back');
    assert.equal(seen.length, 2, `one word a failed read: ${seen.join(' | ')}`);
    assert.match(seen[0]!, /^Reconnecting: .*ECONNREFUSED.*1 of 5/);
    assert.match(seen[1]!, /2 of 5/);
    assert.equal(c.phase, 'plan_ready', 'the plan stayed shown meanwhile');
    assert.deepEqual(await c.decisions.approve(bindingFor('s1', 'toolu_1', '# Plan')), { sent: true });
  });
});

describe('FollowedSession: following again after our own login failed', () => {
  it('Retry (resume) follows the session again from the start of its log', async () => {
    const backend = new MemoryBackend();
    const notifier = new RecordingNotifier();
    let retry: (() => unknown) | undefined;
    const voice: BackendVoice = {
      read: () => ({ message: 'login refused', ownLogin: true, decisionNotDelivered: false }),
      show: (_err, options) => {
        retry = options.retry;
        return true;
      },
      executionReport: async () => undefined,
    };
    const c = new FollowedSession({
      backend,
      log: quietLog,
      notifier,
      voice,
      pollIntervalMs: 5,
      timeoutMs: 60_000,
      onSnapshot: () => undefined,
      from: { fresh: { key: 'server:s2', sessionId: 's2', title: 'retry', demo: false } },
    });
    try {
      backend.push(exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1', 'ExitPlanMode'));
      const read = backend.transport.readEvents;
      backend.transport.readEvents = async () => {
        throw Object.assign(new Error('401'), {});
      };
      c.start();
      await waitFor(() => c.phase === 'failed', 'failed');
      assert.equal(backend.archived, 0, 'our login failing leaves the remote session alone');
      assert.ok(retry, 'the voice offered Retry');
      backend.transport.readEvents = read;
      await retry();
      await waitFor(() => c.phase === 'plan_ready', 'plan_ready after Retry');
      assert.equal(c.finished, false);
    } finally {
      c.dispose();
      await c.settled();
    }
  });
});

describe('the fan-out: every surface reads one snapshot per change', () => {
  it('revisions are derived once per change, whoever reads them, and only what changed is written', async () => {
    const memento = new Map<string, unknown>();
    let writes = 0;
    const store = new SessionStore({
      get: <T>(key: string) => memento.get(key) as T,
      update: async (key, value) => {
        writes++;
        memento.set(key, value);
      },
    });
    /** Every revisions list a surface read: derived once per change, it is one object per derivation. */
    const derivedLists = new Set<unknown>();
    let surfaceReads = 0;
    const sessions: FollowedSession[] = [];
    const backends = [new MemoryBackend(), new MemoryBackend(), new MemoryBackend()];
    let heard = 0;
    let painted = 0;
    let shown: PanelState | undefined;
    // What FollowedSessions does on each snapshot: the status bar, the inbox, the panel and
    // persistence all read the snapshots, each in its own way.
    const onSnapshot = (_session: FollowedSession, snapshot: SessionSnapshot) => {
      heard++;
      const all = sessions.map((s) => s.snapshot);
      summarizeStatus(all.map((s) => ({ sessionId: s.identity.key, phase: s.state.attention, changedAt: s.state.attentionChangedAt })));
      groupInbox(all.map((s) => s.inbox));
      for (const s of all) {
        // The inbox's tooltip, the panel and persistence each read the revisions of the snapshot.
        const reads = [s.revisions, s.revisions, s.revisions];
        revisionDecisionsText(reads[0]!);
        assert.equal(toPersisted(s).revisions.length, reads[2]!.length);
        for (const list of reads) derivedLists.add(list);
        surfaceReads += reads.length;
      }
      if (snapshot.identity.key === 'server:f0' && !(shown && samePanelState(shown, snapshot.panel))) {
        shown = snapshot.panel;
        painted++;
      }
      void store.write(all.map((s) => ({ snapshot: s })));
    };
    backends.forEach((backend, i) => {
      const session = new FollowedSession({
        backend,
        log: quietLog,
        notifier: new RecordingNotifier(),
        pollIntervalMs: 5,
        timeoutMs: 60_000,
        onSnapshot,
        from: { fresh: { key: `server:f${i}`, sessionId: `f${i}`, title: `fan ${i}`, demo: false } },
      });
      sessions.push(session);
      session.start();
    });
    try {
      for (const [i, backend] of backends.entries()) {
        backend.status = 'requires_action';
        backend.push(exitPlan(`toolu_${i}`, `# Plan ${i}`), toolRequest(`req_${i}`, `toolu_${i}`, 'ExitPlanMode'));
      }
      await waitFor(() => sessions.every((s) => s.canDecide), 'three plans');
      const s0 = sessions[0]!;
      s0.saveDraft({ toolUseId: 'toolu_0', feedback: 'typing', comments: [] });
      s0.setEditing('toolu_0');
      s0.setEditing(undefined);
      assert.deepEqual(await s0.decisions.reject(bindingFor('f0', 'toolu_0', '# Plan 0'), 'smaller', []), { sent: true });
      const derived = derivedLists.size;
      // At most one list per session's first snapshot and one per change heard, however many
      // surfaces read it; surfaces deriving their own would make one list per read (3N per change).
      assert.ok(heard >= 8, `changes heard: ${heard}`);
      // Every change heard once all sessions exist was read by every surface (a session's first
      // snapshot may come while the others are still being made).
      assert.ok(surfaceReads >= (heard - sessions.length) * sessions.length * 3, `${surfaceReads} reads for ${heard} changes`);
      assert.ok(derived <= heard + sessions.length, `${derived} lists for ${heard} changes and ${surfaceReads} reads`);
      assert.ok(derived < heard, 'a change that leaves the revisions alone (the draft, the edit, the lock) derives none');
      assert.ok(painted < heard, `the panel painted ${painted} of ${heard} changes`);
      // Editing and the lock survive nothing: the store wrote fewer times than changes were heard.
      assert.ok(writes < heard, `${writes} writes for ${heard} changes`);
      const written = memento.get(PERSISTED_SESSIONS_KEY) as Array<{ key: string; revisions: Array<{ status: string }> }>;
      assert.equal(written.find((s) => s.key === 'server:f0')?.revisions[0]?.status, 'rejected');
    } finally {
      for (const s of sessions) s.dispose();
      await Promise.all(sessions.map((s) => s.settled()));
    }
  });
});

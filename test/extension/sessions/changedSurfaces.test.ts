// The fan-out of FollowedSessions, with real followed sessions and no editor: every snapshot heard
// is handed to ChangedSurfaces as FollowedSessions does, and what each surface would be sent is
// counted. A draft saved while typing reaches no status bar, no context key and no inbox row; a
// change the inbox shows redraws that session's row only, unless the grouping moved.
import * as assert from 'node:assert/strict';
import { bindingFor } from '../../../src/core/decision';
import { ChangedSurfaces, type SurfaceChange } from '../../../src/extension/sessions/changedSurfaces';
import { FollowedSession } from '../../../src/extension/sessions/followedSession';
import { MemoryBackend } from '../../support/memoryBackend';
import { quietLog, silentNotifier } from '../../support/followedSession';
import { exitPlan, toolRequest } from '../../support/sessionEvents';
import { waitFor } from '../../support/wait';

/** What the surfaces were sent: status renders, setContext calls, whole-inbox refreshes and row redraws. */
interface Sent {
  status: number;
  setContext: Array<readonly [string, boolean]>;
  inboxRefreshes: number;
  rows: string[];
}

function fanOut() {
  const surfaces = new ChangedSurfaces();
  const sessions: FollowedSession[] = [];
  const sent: Sent = { status: 0, setContext: [], inboxRefreshes: 0, rows: [] };
  const apply = (change: SurfaceChange) => {
    if (change.status) sent.status++;
    sent.setContext.push(...change.context);
    if (change.inbox.all) sent.inboxRefreshes++;
    else sent.rows.push(...change.inbox.keys);
  };
  const add = (backend: MemoryBackend, id: string): FollowedSession => {
    const session = new FollowedSession({
      backend,
      log: quietLog,
      notifier: silentNotifier,
      pollIntervalMs: 5,
      timeoutMs: 60_000,
      onSnapshot: () => apply(surfaces.next(sessions.map((s) => s.snapshot))),
      from: { fresh: { key: `server:${id}`, sessionId: id, title: `plan ${id}`, demo: false } },
    });
    sessions.push(session);
    apply(surfaces.next(sessions.map((s) => s.snapshot)));
    session.start();
    return session;
  };
  /** What was sent since the last call. */
  const take = (): Sent => {
    const copy = { ...sent, setContext: [...sent.setContext], rows: [...sent.rows] };
    Object.assign(sent, { status: 0, setContext: [], inboxRefreshes: 0, rows: [] });
    return copy;
  };
  return { sessions, add, take };
}

describe('ChangedSurfaces: each surface hears only the changes of its part', () => {
  const started: FollowedSession[] = [];
  afterEach(async () => {
    const sessions = started.splice(0);
    for (const s of sessions) s.dispose();
    await Promise.all(sessions.map((s) => s.settled()));
  });

  async function twoPlansReady() {
    const f = fanOut();
    const backends = [new MemoryBackend(), new MemoryBackend()];
    const [a, b] = [f.add(backends[0]!, 'a'), f.add(backends[1]!, 'b')];
    started.push(a, b);
    for (const [i, backend] of backends.entries()) {
      backend.status = 'requires_action';
      backend.push(exitPlan(`toolu_${i}`, `# Plan ${i}`), toolRequest(`req_${i}`, `toolu_${i}`, 'ExitPlanMode'));
    }
    await waitFor(() => a.canDecide && b.canDecide, 'two plans ready');
    // Polls that read nothing new change nothing: wait until the sessions are quiet.
    await waitFor(() => backends.every((x) => x.reads > 5), 'quiet polls');
    return { f, a, b, backends };
  }

  it('the first sessions set everything: the status bar, every context key and the whole inbox', async () => {
    const { f } = await twoPlansReady();
    const sent = f.take();
    assert.ok(sent.status > 0);
    assert.ok(sent.inboxRefreshes > 0);
    assert.deepEqual(new Map(sent.setContext).get('ultraplan.hasPendingPlan'), true);
    assert.deepEqual(new Map(sent.setContext).get('ultraplan.hasSessions'), true);
  });

  it('a draft saved while typing reaches no status bar, no context key and no inbox row', async () => {
    const { f, a } = await twoPlansReady();
    f.take();
    const before = a.snapshot;
    for (const feedback of ['s', 'sm', 'sma', 'smaller']) a.saveDraft({ toolUseId: 'toolu_0', feedback, comments: [] });
    a.saveReplyDraft({ text: 'typing', at: 1 });
    assert.ok(a.snapshot.version >= before.version + 5, 'each keystroke was a change');
    assert.notEqual(a.snapshot.panel, before.panel, 'the panel has the draft');
    assert.deepEqual(f.take(), { status: 0, setContext: [], inboxRefreshes: 0, rows: [] });
  });

  it("a plan saved redraws that session's row only; a decision sent moves the status bar, the context and the grouping", async () => {
    const { f, a } = await twoPlansReady();
    f.take();
    a.addSavedPlan('/w/plans/a.md');
    assert.deepEqual(f.take(), { status: 0, setContext: [], inboxRefreshes: 0, rows: ['server:a'] });
    a.setEditing('toolu_0');
    a.setEditing(undefined);
    assert.deepEqual(f.take(), { status: 0, setContext: [], inboxRefreshes: 0, rows: [] }, 'the edit in progress is the panel’s');
    assert.deepEqual(await a.decisions.reject(bindingFor('a', 'toolu_0', '# Plan 0'), 'smaller', []), { sent: true });
    const sent = f.take();
    assert.ok(sent.status > 0, 'the status bar shows the new phase');
    assert.ok(sent.inboxRefreshes > 0, 'the session left "needs you": the tree regroups');
    // b still has its plan pending: hasPendingPlan stays true and is not sent again.
    assert.ok(!sent.setContext.some(([key]) => key === 'ultraplan.hasPendingPlan'), JSON.stringify(sent.setContext));
  });
});

import assert from 'node:assert/strict';
import { planHash } from '../../src/core/decision';
import {
  MAX_FINISHED_SESSIONS,
  parsePersistedSessions,
  trimPersistedSessions,
  type PersistedSession,
} from '../../src/core/persistedSessions';

function session(n: number, finished: boolean): PersistedSession {
  return {
    key: `server:s${n}`,
    backendKind: 'server',
    backendLabel: 'Server http://127.0.0.1:1',
    serverUrl: 'http://127.0.0.1:1',
    sessionId: `s${n}`,
    title: `task ${n}`,
    createdAt: n,
    phaseChangedAt: n,
    cursor: `e_${String(n).padStart(12, '0')}`,
    phase: finished ? 'completed' : 'plan_ready',
    revisions: [
      {
        revision: 1,
        toolUseId: 'tu_1',
        plan: '# plan',
        planHash: planHash('# plan'),
        status: 'rejected',
        feedback: 'no',
        comments: [{ line: 1, quote: '# plan', text: 'why?' }],
      },
    ],
    drafts: [],
    usedBindings: [{ sessionId: `s${n}`, toolUseId: 'tu_1' }],
    finished,
  };
}

describe('persisted sessions', () => {
  it('round-trips through JSON with revisions, comments and used bindings', () => {
    const s = session(1, false);
    const { sessions, dropped } = parsePersistedSessions(JSON.parse(JSON.stringify([s])));
    assert.deepEqual(dropped, []);
    assert.deepEqual(sessions, [s]);
  });

  it('drops a damaged entry and keeps the others', () => {
    const bad = { ...session(2, false), revisions: [{ revision: 0 }] };
    const { sessions, dropped } = parsePersistedSessions([session(1, false), bad, 'junk']);
    assert.equal(sessions.length, 1);
    assert.equal(dropped.length, 2);
    assert.deepEqual(parsePersistedSessions({ not: 'a list' }).sessions, []);
    assert.deepEqual(parsePersistedSessions(undefined), { sessions: [], dropped: [] });
  });

  it('keeps every unfinished session and the newest finished ones up to the history bound, oldest dropped first', () => {
    const all = [
      ...Array.from({ length: MAX_FINISHED_SESSIONS + 7 }, (_, i) => session(i, true)),
      ...Array.from({ length: 5 }, (_, i) => session(1000 + i, false)),
    ];
    const kept = trimPersistedSessions(all);
    assert.equal(kept.length, MAX_FINISHED_SESSIONS + 5);
    assert.equal(kept.filter((s) => !s.finished).length, 5);
    // The 7 oldest finished are the ones forgotten.
    assert.deepEqual(
      all.filter((s) => !kept.includes(s)).map((s) => s.phaseChangedAt),
      [0, 1, 2, 3, 4, 5, 6],
    );
    // Live sessions never count against the bound, and order is kept.
    assert.deepEqual(kept, all.slice(7));
    assert.equal(trimPersistedSessions(all, 2).filter((s) => s.finished).length, 2);
  });

  it('keeps the history fields: saved plans, the reported mode and what was notified', () => {
    const s: PersistedSession = {
      ...session(3, true),
      savedPlans: ['/w/.ultraplan/plans/2026-11-30-task.md'],
      agentMode: { id: 'plan', name: 'Plan Mode', readOnly: true },
      notified: ['plan_ready:tu_1'],
    };
    assert.deepEqual(parsePersistedSessions(JSON.parse(JSON.stringify([s]))).sessions, [s]);
    const tooMany = { ...s, notified: Array.from({ length: 21 }, (_, i) => `k${i}`) };
    assert.equal(parsePersistedSessions([tooMany]).dropped.length, 1);
  });
});

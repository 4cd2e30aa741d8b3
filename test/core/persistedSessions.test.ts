import assert from 'node:assert/strict';
import { planHash } from '../../src/core/decision';
import {
  MAX_PERSISTED_SESSIONS,
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

  it('keeps every unfinished session and only the newest finished ones', () => {
    const all = [
      ...Array.from({ length: 30 }, (_, i) => session(i, true)),
      ...Array.from({ length: 5 }, (_, i) => session(100 + i, false)),
    ];
    const kept = trimPersistedSessions(all);
    assert.equal(kept.length, MAX_PERSISTED_SESSIONS);
    assert.equal(kept.filter((s) => !s.finished).length, 5);
    assert.ok(kept.filter((s) => s.finished).every((s) => s.phaseChangedAt >= 15));
  });
});

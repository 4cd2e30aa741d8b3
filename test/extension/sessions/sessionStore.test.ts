// The stored sessions read back at a reload (src/extension/sessions/sessionStore.ts): a review's
// finder and verifier runs that a window followed as plans before they carried their purpose are
// left out, and the next write forgets them; planning sessions come back as stored.
import { strict as assert } from 'node:assert';
import { PERSISTED_SESSIONS_KEY, type PersistedSession } from '../../../src/core/persistedSessions';
import { reviewRunTitle } from '../../../src/core/sessionPurpose';
import { SessionStore } from '../../../src/extension/sessions/sessionStore';

function stored(id: string, title: string): PersistedSession {
  return {
    key: `embedded:${id}`,
    backendKind: 'embedded',
    backendLabel: 'Embedded',
    sessionId: id,
    title,
    createdAt: 1,
    phaseChangedAt: 1,
    cursor: null,
    phase: 'failed',
    revisions: [],
    drafts: [],
    usedBindings: [],
    finished: true,
  };
}

class MapMemento {
  readonly values = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
  }
}

describe('the stored sessions at a reload', () => {
  it("leaves out a review's runs stored as plans, and the next write forgets them", async () => {
    const memento = new MapMemento();
    memento.values.set(PERSISTED_SESSIONS_KEY, [
      stored('session_plan', 'add a toggle'),
      stored('session_f1', reviewRunTitle('finder', 1)),
      stored('session_v2', reviewRunTitle('verify', 2)),
    ]);
    const store = new SessionStore(memento);
    const read = store.read();
    assert.deepEqual(
      read.sessions.map((s) => s.sessionId),
      ['session_plan'],
    );
    assert.deepEqual(read.dropped, []);
    await store.write(read.sessions.map((kept) => ({ kept })));
    assert.deepEqual(
      (memento.values.get(PERSISTED_SESSIONS_KEY) as PersistedSession[]).map((s) => s.sessionId),
      ['session_plan'],
    );
  });
});

// Where followed sessions survive a window reload: workspaceState, one list under one key, parsed
// with zod on the way back in (core/persistedSessions.ts) and mapped from each session's snapshot
// (core/sessionRecord.ts). Only a session whose persisted part changed is mapped again, and
// nothing is written when no session's did.
import type * as vscode from 'vscode';
import {
  PERSISTED_SESSIONS_KEY,
  parsePersistedSessions,
  trimPersistedSessions,
  type ParsedSessions,
  type PersistedSession,
} from '../../core/persistedSessions';
import { persistedPartChanged, toPersisted } from '../../core/sessionRecord';
import type { SessionSnapshot } from '../../core/sessionSnapshot';
import type { SessionBackend } from '../../core/sessionBackend';
import { isReviewRunTitle } from '../../core/sessionPurpose';

/** One session to store: its snapshot, or an entry kept exactly as it was stored (waiting for trust). */
export type StoredSession = { snapshot: SessionSnapshot } | { kept: PersistedSession };

export class SessionStore {
  readonly #memento: Pick<vscode.Memento, 'get' | 'update'>;
  /** What the last write held, by session key, and the snapshot it was mapped from. */
  #written = new Map<string, { from: SessionSnapshot | PersistedSession; entry: PersistedSession }>();

  constructor(memento: Pick<vscode.Memento, 'get' | 'update'>) {
    this.#memento = memento;
  }

  /**
   * The stored sessions. A review's runs that were followed as plans before they said what they
   * are for are left out (the next write forgets them): they belong to their review.
   */
  read(): ParsedSessions {
    const parsed = parsePersistedSessions(this.#memento.get<unknown>(PERSISTED_SESSIONS_KEY));
    return { ...parsed, sessions: parsed.sessions.filter((s) => !isReviewRunTitle(s.title)) };
  }

  /**
   * Writes the sessions, the history trimmed to its bound; returns the keys kept. Sessions whose
   * persisted part did not change since the last write keep the entry written then.
   */
  async write(sessions: readonly StoredSession[]): Promise<ReadonlySet<string>> {
    let changed = sessions.length !== this.#written.size;
    const next = new Map<string, { from: SessionSnapshot | PersistedSession; entry: PersistedSession }>();
    for (const s of sessions) {
      const key = 'snapshot' in s ? s.snapshot.identity.key : s.kept.key;
      const from = 'snapshot' in s ? s.snapshot : s.kept;
      const before = this.#written.get(key);
      const same =
        before !== undefined &&
        (before.from === from || ('snapshot' in s && 'identity' in before.from && !persistedPartChanged(before.from, s.snapshot)));
      if (!same) changed = true;
      next.set(key, { from, entry: same ? before.entry : 'snapshot' in s ? toPersisted(s.snapshot) : s.kept });
    }
    const all = trimPersistedSessions([...next.values()].map((w) => w.entry));
    const keep = new Set(all.map((s) => s.key));
    if (keep.size !== next.size) changed = true;
    for (const key of [...next.keys()]) if (!keep.has(key)) next.delete(key);
    this.#written = next;
    if (!changed) return keep;
    await this.#memento.update(PERSISTED_SESSIONS_KEY, all);
    return keep;
  }
}

const detached = new WeakSet<SessionBackend>();

/** A finished session needs no live backend; this one refuses every call with a clear message. */
export function detachedBackend(s: PersistedSession): SessionBackend {
  const refuse = async (): Promise<never> => {
    throw new Error('This session is no longer followed.');
  };
  const backend: SessionBackend = {
    kind: s.backendKind,
    label: s.backendLabel,
    transport: { readEvents: refuse, getStatus: refuse },
    createSession: refuse,
    getSession: refuse,
    sendEvents: refuse,
    archive: refuse,
    dispose: async () => {},
  };
  detached.add(backend);
  return backend;
}

/** True for a restored finished session's stand-in (detachedBackend): a message to it needs the session attached again. */
export const isDetached = (backend: SessionBackend): boolean => detached.has(backend);

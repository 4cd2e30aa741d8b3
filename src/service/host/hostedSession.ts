// One session as the SessionHost holds it: its event log and status, committed (what readers see)
// and intended (decided at once, so concurrent calls cannot both pass a check), the write pipeline
// that makes them durable in batches, the control_requests awaiting a decision, and its
// subscribers. An event, status or checkpoint reaches readers only once the store has it. It is
// the agent runtime's store (runtime/runtimeStore.ts): the runtime writes through it and reads the
// client events after its cursor from the committed log.
import { randomUUID } from 'node:crypto';
import type { SessionResource, SessionStatus } from '../../core/protocol';
import { SessionsError, errorMessage } from '../../core/errors';
import type { LoadedSession, LogRecord, SessionMeta, SessionStore, StoredEvent } from '../store/sessionStore';
import { trackControl, type RuntimeEvent, type RuntimeRecord, type RuntimeStore } from '../runtime/runtimeStore';
import { isClientEvent } from './incomingEvents';
import { publicOwner } from '../identity/sessionOwner';

export const DEFAULT_EVENT_PAGE_SIZE = 100;
export const MAX_EVENT_PAGE_SIZE = 1000;

/** What a subscriber hears: one committed event, or a status change. */
export interface SessionNotice {
  event?: StoredEvent;
  status?: SessionStatus;
}
export type SessionListener = (notice: SessionNotice) => void;

export interface StoredEventPage {
  data: StoredEvent[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

/** Event ids: zero-padded so byte order is numeric order ("e_000000000042"). */
export function formatEventId(seq: number): string {
  return `e_${String(seq).padStart(12, '0')}`;
}

export function parseEventSeq(id: string): number {
  const match = /^e_(\d{12,})$/.exec(id);
  return match ? Number(match[1]) : 0;
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class HostedSession implements RuntimeStore {
  // Committed (durable) state, what readers see.
  readonly events: StoredEvent[] = [];
  status: SessionStatus;
  updatedAt: string;
  checkpoint: unknown = undefined;
  /** The newest client event the agent was given, as the journal says (undefined: it never said). */
  delivered: number | undefined = undefined;
  // Intended state, decided synchronously so concurrent calls cannot both pass a check.
  seq = 0;
  intendedStatus: SessionStatus;
  archived = false;
  /** The agent's control_requests awaiting a decision: request_id -> tool_use_id. */
  readonly outstanding = new Map<string, string>();
  readonly answered = new Set<string>();
  /** Client events by uuid: a retried POST is answered with what was stored, not stored twice. */
  readonly clientUuids = new Map<string, { event: StoredEvent; stored: Promise<void> }>();
  // Write pipeline.
  #pending: LogRecord[] = [];
  #waiters: Waiter[] = [];
  #flushing: Promise<void> | null = null;
  readonly #listeners = new Set<SessionListener>();

  constructor(
    readonly meta: SessionMeta,
    status: SessionStatus,
    private readonly store: SessionStore,
    private readonly log: (line: string) => void,
  ) {
    this.status = status;
    this.intendedStatus = status;
    this.updatedAt = meta.created_at;
  }

  /**
   * A stored session as its journal says, and the agent's cursor: the journal's own, or (a
   * journal that never recorded one, or may have lost it to damage) every client event it holds.
   */
  static load(loaded: LoadedSession, store: SessionStore, log: (line: string) => void): { session: HostedSession; cursor: number } {
    const session = new HostedSession(loaded.meta, 'running', store, log);
    let lastClientEvent = 0;
    for (const record of loaded.records) {
      if (record.t === 'event') {
        session.seq = Math.max(session.seq, parseEventSeq(record.event.id));
        session.trackControl(record.event);
        if (isClientEvent(record.event)) {
          session.clientUuids.set(record.event.uuid as string, { event: record.event, stored: Promise.resolve() });
          lastClientEvent = parseEventSeq(record.event.id);
        }
      }
      session.apply(record, false);
    }
    session.intendedStatus = session.status;
    session.archived = session.status === 'archived';
    const cursor = loaded.damagedLines.length > 0 || session.delivered === undefined ? lastClientEvent : session.delivered;
    return { session, cursor };
  }

  get id(): string {
    return this.meta.id;
  }

  /** Resolves once what is queued now is stored (or failed). */
  flushed(): Promise<void> {
    return this.#flushing ?? Promise.resolve();
  }

  readEvents(afterId: string | null, limit: number): StoredEventPage {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_EVENT_PAGE_SIZE) {
      throw new SessionsError('bad_request', `limit must be an integer from 1 to ${MAX_EVENT_PAGE_SIZE}, got ${limit}`, 400);
    }
    const events = this.events;
    // Ids are strictly increasing, so the first id after the cursor is found by bisection. A
    // cursor that is not an id of this log still works: it is compared, not looked up.
    let start = 0;
    if (afterId !== null) {
      let hi = events.length;
      while (start < hi) {
        const mid = (start + hi) >>> 1;
        if ((events[mid] as StoredEvent).id <= afterId) start = mid + 1;
        else hi = mid;
      }
    }
    const data = events.slice(start, start + limit);
    return {
      data,
      has_more: start + data.length < events.length,
      first_id: data[0]?.id ?? null,
      last_id: data[data.length - 1]?.id ?? null,
    };
  }

  /** The id of the newest committed event, or null. */
  lastEventId(): string | null {
    return this.events[this.events.length - 1]?.id ?? null;
  }

  subscribe(listener: SessionListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  unsubscribeAll(): void {
    this.#listeners.clear();
  }

  resource(): SessionResource {
    return {
      type: 'session',
      id: this.meta.id,
      title: this.meta.title,
      session_status: this.status,
      environment_id: this.meta.environment_id,
      created_at: this.meta.created_at,
      updated_at: this.updatedAt,
      session_context: this.meta.session_context,
      ...(this.meta.owner ? { owner: publicOwner(this.meta.owner) } : {}),
    };
  }

  /** Registers the agent's can_use_tool requests so decisions can be matched to them. */
  trackControl(event: StoredEvent): void {
    trackControl(this, event);
  }

  /** RuntimeStore: what the agent runtime writes, stamped here (ids are assigned when queued). */
  write(records: readonly RuntimeRecord[]): Promise<void> {
    const at = new Date().toISOString();
    const log = records.flatMap((record): LogRecord[] => {
      if (record.t === 'event') return [{ t: 'event', event: this.stamp(stripId(record.event)), at }];
      if (record.t === 'status') return record.status === this.intendedStatus ? [] : [this.statusRecord(record.status)];
      if (record.t === 'checkpoint') return [{ t: 'checkpoint', state: record.state }];
      if (record.t === 'delivered') return [{ t: 'delivered', seq: record.seq }];
      return []; // a closed request is refused by the runtime's own bookkeeping (lostAgents.ts)
    });
    return log.length === 0 ? (this.#flushing ?? Promise.resolve()) : this.queue(log);
  }

  /** RuntimeStore: the committed client events after `seq` (ids increase, so read from the end). */
  async clientEventsAfter(seq: number): Promise<readonly StoredEvent[]> {
    const after: StoredEvent[] = [];
    for (let i = this.events.length - 1; i >= 0; i--) {
      const event = this.events[i] as StoredEvent;
      if (parseEventSeq(event.id) <= seq) break;
      if (isClientEvent(event)) after.push(event);
    }
    return after.reverse();
  }

  /** The event with its id (the next in this log), uuid and session id. */
  stamp(event: Record<string, unknown> & { type: string }): StoredEvent {
    this.seq += 1;
    const uuid = typeof event.uuid === 'string' && event.uuid ? event.uuid : randomUUID();
    return { id: formatEventId(this.seq), ...event, uuid, session_id: this.meta.id };
  }

  statusRecord(status: SessionStatus): LogRecord {
    this.intendedStatus = status;
    return { t: 'status', status, at: new Date().toISOString() };
  }

  queueStatus(status: SessionStatus): void {
    if (this.intendedStatus === status) return;
    this.queue([this.statusRecord(status)]).catch(() => {});
  }

  /** Host-written events (not from the agent or a client); failures are logged by the flush. */
  queueEvents(events: Array<Record<string, unknown> & { type: string }>): void {
    const records = events.map((e): LogRecord => ({ t: 'event', event: this.stamp(e), at: new Date().toISOString() }));
    this.queue(records).catch(() => {});
  }

  /** Resolves once `records` are stored and visible to readers. */
  queue(records: LogRecord[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push(...records);
      this.#waiters.push({ resolve, reject });
      if (!this.#flushing) this.#flushing = this.#flush();
    });
  }

  async #flush(): Promise<void> {
    try {
      // Batches whatever queued meanwhile into one durable append (one fsync).
      while (this.#pending.length > 0) {
        await Promise.resolve();
        const batch = this.#pending.splice(0);
        const waiters = this.#waiters.splice(0);
        try {
          await this.store.append(this.meta.id, batch);
        } catch (err) {
          this.log(`session ${this.meta.id}: storing ${batch.length} records failed: ${errorMessage(err)}`);
          const failure = storageFailure(this.meta.id, err);
          for (const w of waiters) w.reject(failure);
          continue;
        }
        for (const record of batch) this.apply(record, true);
        for (const w of waiters) w.resolve();
      }
    } finally {
      this.#flushing = null;
    }
  }

  /** Makes a stored record visible; `notify`: subscribers hear of it (not while loading). */
  apply(record: LogRecord, notify: boolean): void {
    if (record.t === 'event') {
      this.events.push(record.event);
      if (record.at) this.updatedAt = record.at;
      if (notify) this.#notify({ event: record.event });
    } else if (record.t === 'status') {
      this.updatedAt = record.at;
      if (this.status === record.status) return;
      this.status = record.status;
      if (notify) this.#notify({ status: record.status });
    } else if (record.t === 'delivered') {
      this.delivered = Math.max(this.delivered ?? 0, record.seq);
    } else {
      this.checkpoint = record.state;
    }
  }

  #notify(notice: SessionNotice): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(notice);
      } catch (err) {
        this.log(`session ${this.meta.id}: a subscriber failed: ${errorMessage(err)}`);
      }
    }
  }
}

/** A failed append as callers see it: a full disk is the server's to fix, and says so. */
function storageFailure(sessionId: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new SessionsError(
      'transient',
      `the server's disk is full: nothing was stored in session ${sessionId}; retry once space is freed`,
      507,
      undefined,
      { cause: err },
    );
  }
  return new Error(`storing session ${sessionId} failed: ${errorMessage(err)}`, { cause: err });
}

/** The event as the host stamps it: ids are the log's to assign. */
export function stripId(event: RuntimeEvent): RuntimeEvent {
  const { id: _ignored, ...rest } = event;
  return rest;
}

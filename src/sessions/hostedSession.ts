// One session as the SessionHost holds it: its event log and status, committed (what readers see)
// and intended (decided at once, so concurrent calls cannot both pass a check), the write pipeline
// that makes them durable in batches, the control_requests awaiting a decision, and its
// subscribers. An event, status or checkpoint reaches readers only once the store has it.
import { randomUUID } from 'node:crypto';
import type { SessionResource, SessionStatus } from '../core/protocol';
import { SessionsError } from '../core/errors';
import type { Agent } from './agent';
import type { LogRecord, SessionMeta, SessionStore, StoredEvent } from './store';
import { publicOwner } from './sessionOwner';

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

export class HostedSession {
  // Committed (durable) state, what readers see.
  readonly events: StoredEvent[] = [];
  status: SessionStatus;
  updatedAt: string;
  checkpoint: unknown = undefined;
  // Intended state, decided synchronously so concurrent calls cannot both pass a check.
  seq = 0;
  intendedStatus: SessionStatus;
  archived = false;
  /** The agent's control_requests awaiting a decision: request_id -> tool_use_id. */
  readonly outstanding = new Map<string, string>();
  readonly answered = new Set<string>();
  /** Client events by uuid: a retried POST is answered with what was stored, not stored twice. */
  readonly clientUuids = new Map<string, { event: StoredEvent; stored: Promise<void> }>();
  agent: Agent | null = null;
  readonly agentAbort = new AbortController();
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
    if (event.type === 'control_request') {
      const request = event.request as { subtype?: unknown; tool_use_id?: unknown } | undefined;
      if (request?.subtype === 'can_use_tool' && typeof event.request_id === 'string') {
        this.outstanding.set(event.request_id, typeof request.tool_use_id === 'string' ? request.tool_use_id : '');
      }
    } else if (event.type === 'control_response') {
      const requestId = (event.response as { request_id?: unknown } | undefined)?.request_id;
      if (typeof requestId === 'string') {
        this.outstanding.delete(requestId);
        this.answered.add(requestId);
      }
    }
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
          this.log(`session ${this.meta.id}: storing ${batch.length} records failed: ${errorText(err)}`);
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
    } else {
      this.checkpoint = record.state;
    }
  }

  #notify(notice: SessionNotice): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(notice);
      } catch (err) {
        this.log(`session ${this.meta.id}: a subscriber failed: ${errorText(err)}`);
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
  return new Error(`storing session ${sessionId} failed: ${errorText(err)}`, { cause: err });
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

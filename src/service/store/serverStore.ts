// What the server's routes read and write through: one interface, two stores.
//  - JournalServerStore (journalStore.ts): the default. One process holds its sessions in a
//    SessionHost over the JSONL journal (store.ts) and runs their agents itself.
//  - PostgresServerStore (postgres/): any number of server processes on one database; agents run
//    in worker processes (worker.ts) that write through the same database.
// Both enforce the same limits and the same rules (contract: test/service/server/storeContract).
import type { BrowserStateStore } from '../identity/browserState';
import { SessionsError } from '../../core/errors';
import type { AnyEvent, CreateSessionRequest, SessionResource } from '../../core/protocol';
import type { AgentFactory } from '../../agents/agent';
import type { SessionHostLimits, StoredEvent, StoredEventPage } from '../host/sessionHost';
import type { AuditActor, SessionOwner, Visibility } from '../identity/sessionOwner';
import type { ChangesOutcome } from '../changes/approvalSnapshot';
import type { ApprovalState } from '../../core/planApprovals';

/** One event of an append as stored; `duplicate` when its uuid was stored before (nothing new). */
export interface AppendedEvent {
  event: StoredEvent;
  duplicate: boolean;
  /**
   * An approval counted under a quorum: `event` is the stored `plan_approval` event while more
   * approvals are needed (answered 202), or the `allow` itself once this one completed it.
   */
  approval?: ApprovalState;
}

/** A commit the store pushed: one event, or a status change. */
export interface StoreNotice {
  event?: StoredEvent;
  status?: string;
}

export interface SessionListPage {
  /** Newest first: by creation time, then by id. */
  data: SessionResource[];
  /** The last listed id when more follow, else null. */
  nextCursor: string | null;
}

export interface ServerStore {
  /** For the start-up log line: where the sessions are. */
  readonly description: string;
  /** Where the review page's browser sessions live when every replica must share them (PostgreSQL); none: the server's memory. */
  readonly browserState?: BrowserStateStore;
  readonly limits: SessionHostLimits;
  /**
   * Creates a session. `agent`: the agent this one session runs (the local service takes it from
   * the request); else the store's own (the journal's host default, a worker's for PostgreSQL).
   * `owner`: who created it (null: the shared token), stored with it for good.
   */
  createSession(request: CreateSessionRequest, agent?: AgentFactory, owner?: SessionOwner | null): Promise<SessionResource>;
  /** 404 (SessionsError not_found) when there is no such session. */
  getSession(id: string): Promise<SessionResource>;
  /** The session's owner (null: made with the shared token); 404 when there is no such session. */
  getOwner(id: string): Promise<SessionOwner | null>;
  /**
   * A page of the sessions `visibility` lets through (default: all), newest first after `cursor`
   * (a listed id); a cursor that is not a session it lets through is a 400.
   */
  listSessions(limit: number, cursor: string | null, visibility?: Visibility): Promise<SessionListPage>;
  /** Committed events after `afterId` (compared as ids are: "e_" and 12 digits), at most `limit`. */
  readEvents(id: string, afterId: string | null, limit?: number): Promise<StoredEventPage>;
  /**
   * Appends what a client sent (user messages, decisions), checked whole first: any refusal
   * stores nothing. An event whose uuid the session already holds is answered with the stored
   * one, `duplicate`, and not delivered again. `actor`: who sent them, for a store that keeps an
   * audit table (written in the same transaction as the events).
   */
  appendEvents(id: string, events: AnyEvent[], actor?: AuditActor): Promise<AppendedEvent[]>;
  /**
   * The changes in the session's workspace since its plan was approved (docs/execution.md, "What
   * changed"): taken now where this process reads the workspace (the journal), else the latest a
   * worker stored. 404 when there is no such session.
   */
  changesSinceApproval(id: string): Promise<ChangesOutcome>;
  /** Archives; 409 when already archived. */
  archive(id: string, actor?: AuditActor): Promise<void>;
  /**
   * Calls `wake` after something of session `id` was committed: with the change itself when the
   * store pushes each commit in order (the journal), or with nothing, meaning "read again from
   * your cursor" (possibly more than once, possibly spuriously). Returns the unsubscribe.
   */
  watch(id: string, wake: (notice?: StoreNotice) => void): () => void;
  /**
   * Resolves when the store can serve now (readiness, server/health.ts): the database answers and
   * holds this build's schema (answering within `timeoutMs`); the journal's folder is there and
   * writable. Rejects with why not.
   */
  checkReady(timeoutMs: number): Promise<void>;
  /** How many sessions are stored (for the start-up log line). */
  countSessions(): Promise<number>;
  close(): Promise<void>;
}

const EVENT_ID = /^e_(\d{12,})$/;
const LOWEST_ID = 'e_000000000000';

/**
 * The sequence number an event cursor stands for: events with a greater number come after it.
 * A cursor that is no event id is compared as text, as the journal compares ids.
 */
export function cursorSequence(afterId: string | null): number {
  if (afterId === null) return 0;
  const match = EVENT_ID.exec(afterId);
  if (match) return Number(match[1]);
  return afterId < LOWEST_ID ? 0 : Number.MAX_SAFE_INTEGER;
}

export function notFound(id: string): SessionsError {
  return new SessionsError('not_found', `no session ${JSON.stringify(id)}`, 404);
}

export function archivedConflict(id: string): SessionsError {
  return new SessionsError('conflict', `session ${id} is archived; it takes no more events`, 409);
}

export function unknownListCursor(cursor: string): SessionsError {
  return new SessionsError(
    'bad_request',
    `cursor must be a next_cursor this server gave; ${JSON.stringify(cursor.slice(0, 60))} is not`,
    400,
  );
}

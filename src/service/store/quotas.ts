// Fair shares of one server: what one user may hold at once, decided in one place for both stores
// (the journal counts in memory, PostgreSQL under the creation lock, so replicas cannot together
// let a user past a limit). Archived sessions count toward nothing: archiving frees a place.
// Per-user limits bind sessions with an owner (OIDC users); sessions made with the shared token are
// one person's and bound by the server's total alone.
import { SessionsError } from '../../core/errors';

/** The limits a refusal names, as sent in `error.limit`. */
export type QuotaName = 'max_sessions' | 'max_sessions_per_user' | 'max_live_per_user';

export interface UserQuotas {
  /** Sessions one user holds (not archived). */
  maxSessionsPerUser: number;
  /** Sessions of one user whose agent is at work (running, or waiting on a request). */
  maxLivePerUser: number;
}

export const DEFAULT_USER_QUOTAS: UserQuotas = { maxSessionsPerUser: 50, maxLivePerUser: 4 };

/** Statuses of a session whose agent is at work: it plans, carries a plan out, or waits on a person's answer. */
export const LIVE_STATUSES: readonly string[] = ['running', 'requires_action'];

/** A live session's turn usually ends within this; the client is told to retry after it. */
const LIVE_RETRY_AFTER_MS = 30_000;

/** A refusal by a limit: `limit` names it and `value` is the limit's value (sent in the error body). */
export class QuotaError extends SessionsError {
  constructor(
    readonly limit: QuotaName,
    readonly value: number,
    message: string,
    status: number,
    retryAfterMs?: number,
  ) {
    super(status === 429 ? 'transient' : 'conflict', message, status, retryAfterMs);
  }
}

/** What is held when a session is about to be created: every count leaves archived sessions out. */
export interface HeldCounts {
  /** All sessions of the server. */
  total: number;
  /** The creator's sessions (0 without an owner). */
  owned: number;
  /** The creator's live sessions (0 without an owner). */
  live: number;
}

/**
 * Refuses a new session that would pass a limit. The server's total is a 409 (only archiving,
 * retention or a larger limit frees it); a user's limits are 429, with Retry-After for the live
 * limit (a turn ends by itself).
 */
export function checkNewSession(held: HeldCounts, maxSessions: number, quotas: UserQuotas, owned: boolean): void {
  if (held.total >= maxSessions) {
    throw new QuotaError(
      'max_sessions',
      maxSessions,
      `this server holds its limit of ${maxSessions} sessions (archived ones not counted); raise the limit or archive some`,
      409,
    );
  }
  if (!owned) return;
  if (held.owned >= quotas.maxSessionsPerUser) {
    throw new QuotaError(
      'max_sessions_per_user',
      quotas.maxSessionsPerUser,
      `you hold ${held.owned} sessions, the limit per user (max_sessions_per_user ${quotas.maxSessionsPerUser}); archive some to start another`,
      429,
    );
  }
  if (held.live >= quotas.maxLivePerUser) {
    throw new QuotaError(
      'max_live_per_user',
      quotas.maxLivePerUser,
      `${held.live} of your sessions are at work, the limit per user (max_live_per_user ${quotas.maxLivePerUser}); wait for one to finish or archive one`,
      429,
      LIVE_RETRY_AFTER_MS,
    );
  }
}

/**
 * Refuses waking a session whose agent is not at work (a message, or a decision, sent to an idle
 * session) while its owner has `live` sessions at work: the same 429 and Retry-After as a new
 * session, and nothing of the request is stored, so the client sends it again as it was.
 */
export function checkWake(live: number, quotas: UserQuotas): void {
  if (live < quotas.maxLivePerUser) return;
  throw new QuotaError(
    'max_live_per_user',
    quotas.maxLivePerUser,
    `${live} of your sessions are at work, the limit per user (max_live_per_user ${quotas.maxLivePerUser}); this session was not woken and nothing was stored: send it again when one finishes, or archive one`,
    429,
    LIVE_RETRY_AFTER_MS,
  );
}

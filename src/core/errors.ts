// One error class per layer, each carrying a reason enum, so callers switch on data, not on text.

export const POLL_FAILURE_REASONS = [
  'terminated',
  'timeout_pending',
  'timeout_no_plan',
  'extract_marker_missing',
  'network_or_unknown',
  'stopped',
  'unauthorized',
  'not_found',
  // Ours: followUntilResult gave up waiting for the approved plan's execution to end.
  'timeout_result',
] as const;
export type PollFailureReason = (typeof POLL_FAILURE_REASONS)[number];

/** Why a poll for an approved plan ended without one. `message` is written for a person. */
export class UltraplanPollError extends Error {
  override readonly name = 'UltraplanPollError';
  constructor(
    readonly reason: PollFailureReason,
    message: string,
    readonly rejectCount = 0,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const SESSIONS_ERROR_KINDS = [
  'unauthorized', // 401/403
  'not_found', // 404
  'conflict', // 409 (archived)
  'transient', // network error, timeout, 5xx, 429
  'bad_response', // a body that is not what the protocol says
  'bad_request', // 400/413/other 4xx: our request was refused
] as const;
export type SessionsErrorKind = (typeof SESSIONS_ERROR_KINDS)[number];

/** A failed Sessions API call, classified so the poller can retry or fail without parsing text. */
export class SessionsError extends Error {
  override readonly name = 'SessionsError';
  constructor(
    readonly kind: SessionsErrorKind,
    message: string,
    readonly status?: number,
    /** For 429/503: how long the server asked us to wait, in ms. */
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An error's own message for a log line or a person (its text, not its stack); anything thrown that is not an Error, as text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An error's stack (its message when it has none), for a crash or an internal error a maintainer reads; anything else thrown, as text. */
export function errorStack(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

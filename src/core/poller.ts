// The poller (docs/protocol.md section 5): reads a session's new events (and its status when
// nothing new came) on an interval, feeds the scanner, hands each poll to its reader, and ends with an approved or teleported plan or an
// UltraplanPollError. The loop is shared with followUntilResult, which keeps following an
// approved session until its `result` event so the editor can show how the execution ended.
import { SessionsError, UltraplanPollError, errorMessage, type PollFailureReason } from './errors';
import { parseEventBatch, type ParsedBatch } from './eventBatch';
import { ExitPlanModeScanner, type ScanVerdict, type SessionResult } from './scanner';
import type { SessionStatus } from './protocol';
import type { SessionTransport } from './transport';

export type PollPhase = 'running' | 'needs_input' | 'plan_ready';

/**
 * What one poll says about the agent: a plan waits, the agent waits on the person (quiet), or it
 * works. The status flips to idle briefly between tool turns, so events flowing mean it is working.
 */
export function pollPhaseOf(hasPendingPlan: boolean, status: SessionStatus | string | undefined, eventsRead: number): PollPhase {
  if (hasPendingPlan) return 'plan_ready';
  const quiet = (status === 'idle' || status === 'requires_action') && eventsRead === 0;
  return quiet ? 'needs_input' : 'running';
}

/** Time, injectable so tests run on a fake clock. `sleep` rejects or resolves early on abort. */
export interface PollClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: PollClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
};

export const DEFAULT_POLL_INTERVAL_MS = 3000;
export const DEFAULT_MAX_CONSECUTIVE_FAILURES = 5;
export const DEFAULT_POLL_TIMEOUT_MS = 30 * 60 * 1000;
/** Executing a plan can take far longer than planning it. */
export const DEFAULT_FOLLOW_TIMEOUT_MS = 2 * 60 * 60 * 1000;

export interface FollowOptions {
  sessionId: string;
  transport: SessionTransport;
  pollIntervalMs?: number;
  /** The n-th transient failure in a row fails the poll with network_or_unknown. */
  maxConsecutiveFailures?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * After every successful poll, empty or not, once the scanner has read it: the batch as parsed
   * once at the transport, the session's status and the cursor. The session model is fed from
   * here (one change per poll). Errors thrown here propagate unchanged.
   */
  onPoll?(poll: PollRead): void;
  /** After a read failed in a way worth trying again, before the wait: the person is told the session is out of reach for now. */
  onRetry?(retry: PollRetry): void;
  /** Resume after this event id (null or absent: from the start). */
  initialCursor?: string | null;
  /** Resume with a scanner already fed with the events up to `initialCursor`. */
  scanner?: ExitPlanModeScanner;
  clock?: PollClock;
}

export type PollOptions = FollowOptions;

export interface ApprovedPlan {
  /** remote: approved, the remote executes it; local: teleported, execute it here. */
  executionTarget: 'remote' | 'local';
  plan: string;
  rejectCount: number;
  /** The ExitPlanMode call that was decided. */
  toolUseId: string;
  /** Where to resume reading (followUntilResult's initialCursor). */
  cursor: string | null;
  /** The scanner that saw the decision (followUntilResult's scanner). */
  scanner: ExitPlanModeScanner;
}

/** What one poll read: the batch (validated once), the session's status, where to resume. */
export interface PollRead {
  batch: ParsedBatch;
  /** Read only when the batch came back empty (see `read` below); undefined while events flow. */
  status: SessionStatus | string | undefined;
  cursor: string | null;
}

/** A read that failed and will be tried again (the next success means contact is back). */
export interface PollRetry {
  /** Reads in a row that failed, this one included. */
  failures: number;
  /** Following gives up when this many in a row have failed. */
  maxFailures: number;
  retryInMs: number;
  /** Why this read failed. */
  message: string;
}

export interface FollowResult extends SessionResult {
  cursor: string | null;
}

const minutes = (ms: number) => {
  const m = Math.round(ms / 60000);
  return m >= 1 ? `${m} minute${m === 1 ? '' : 's'}` : `${Math.round(ms / 1000)} seconds`;
};

const rejectionNote = (n: number) => (n === 0 ? '' : ` (${n} plan${n === 1 ? ' was' : 's were'} rejected before)`);

function failure(reason: PollFailureReason, message: string, scanner: ExitPlanModeScanner, cause?: unknown) {
  return new UltraplanPollError(reason, message, scanner.rejectCount, cause === undefined ? undefined : { cause });
}

/** Network errors from fetch are TypeErrors; classified SessionsErrors say it themselves. */
function isTransientError(err: unknown): err is Error {
  return (err instanceof SessionsError && err.kind === 'transient') || err instanceof TypeError;
}

/**
 * What one poll saw; a step returns a value to end the loop, or undefined to go on.
 * It may throw an UltraplanPollError to fail.
 */
type Step<T> = (poll: { batch: ParsedBatch; status: string | undefined; verdict: ScanVerdict; cursor: string | null }) => T | undefined;

const isQuiet = (status: string) => status === 'idle' || status === 'requires_action';

/**
 * One poll's reads. The status only matters when nothing new came (is the agent waiting on the
 * person, or was the session archived?), so it is read only when the batch may be empty: while
 * events flow, or after a stream woke us, the events are read first and a batch with events needs
 * no status. When the status is read before a quiet verdict, the events are read after it: if the
 * session is idle now, any event written before it went idle is in that read, so "idle and
 * nothing new" really means waiting on us.
 */
async function read(
  transport: SessionTransport,
  sessionId: string,
  cursor: string | null,
  expectEvents: boolean,
  signal: AbortSignal | undefined,
): Promise<{ status: string | undefined; events: unknown[]; lastId: string | null }> {
  let after = cursor;
  if (expectEvents) {
    const first = await transport.readEvents(sessionId, cursor, signal);
    if (first.events.length > 0) return { status: undefined, events: first.events, lastId: first.lastId };
    after = first.lastId ?? cursor;
  }
  const status = await transport.getStatus(sessionId, signal);
  if (expectEvents && !isQuiet(status)) return { status, events: [], lastId: after };
  const read = await transport.readEvents(sessionId, after, signal);
  return { status, events: read.events, lastId: read.lastId ?? after };
}

async function follow<T>(
  options: FollowOptions,
  scanner: ExitPlanModeScanner,
  step: Step<T>,
  timedOut: () => UltraplanPollError,
  defaultTimeoutMs: number,
): Promise<T> {
  const { sessionId, transport, signal } = options;
  const clock = options.clock ?? systemClock;
  const interval = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const maxFailures = options.maxConsecutiveFailures ?? DEFAULT_MAX_CONSECUTIVE_FAILURES;
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  const deadline = clock.now() + timeoutMs;
  let cursor = options.initialCursor ?? null;
  let failures = 0;
  // A follow starts by replaying what it has not read yet: events are expected.
  let expectEvents = true;

  const stopped = () => failure('stopped', 'Stopped following the session.', scanner);

  // Bounded by the deadline; every wait honours the signal.
  for (;;) {
    if (signal?.aborted) throw stopped();
    if (clock.now() >= deadline) throw timedOut();

    let waitMs = interval;
    let backingOff = false;
    let polled: { status: string | undefined; events: unknown[]; lastId: string | null } | null = null;
    try {
      polled = await read(transport, sessionId, cursor, expectEvents, signal);
      failures = 0;
    } catch (err) {
      if (signal?.aborted) throw stopped();
      if (!isTransientError(err)) throw classifyFatal(err, sessionId, scanner);
      failures++;
      if (failures >= maxFailures) {
        throw failure(
          'network_or_unknown',
          `Lost contact with the session: ${failures} attempts in a row failed (last: ${err.message}). ` +
            'Check the network or the server, then follow the session again.',
          scanner,
          err,
        );
      }
      const retryAfter = err instanceof SessionsError ? (err.retryAfterMs ?? 0) : 0;
      waitMs = Math.max(interval, retryAfter);
      backingOff = true;
      options.onRetry?.({ failures, maxFailures, retryInMs: waitMs, message: err.message });
    }

    if (polled !== null) {
      if (polled.lastId !== null) cursor = polled.lastId;
      // The one place events are validated: everything after this reads the parsed batch.
      const batch = parseEventBatch(polled.events);
      const verdict = scanner.ingestParsed(batch);
      expectEvents = polled.events.length > 0;
      options.onPoll?.({ batch, status: polled.status, cursor });
      const done = step({ batch, status: polled.status, verdict, cursor });
      if (done !== undefined) return done;
    }

    const remaining = deadline - clock.now();
    if (remaining <= 0) continue;
    const wait = Math.min(waitMs, remaining);
    // A streaming transport wakes us as soon as something happens; a server's Retry-After is
    // honoured with a plain sleep.
    try {
      if (!backingOff && transport.waitForActivity) {
        try {
          const started = clock.now();
          await transport.waitForActivity(sessionId, wait, signal);
          // Woken before the wait was over: something happened, most likely events.
          if (clock.now() - started < wait) expectEvents = true;
        } catch (err) {
          if (signal?.aborted) throw err;
          // A broken stream is not fatal: the next read will tell, and polling carries on.
          await clock.sleep(wait, signal);
        }
      } else {
        await clock.sleep(wait, signal);
      }
    } catch (err) {
      // A clock may reject on abort instead of resolving early.
      if (signal?.aborted) throw stopped();
      throw err;
    }
  }
}

function classifyFatal(err: unknown, sessionId: string, scanner: ExitPlanModeScanner): UltraplanPollError {
  if (err instanceof UltraplanPollError) return err;
  if (err instanceof SessionsError) {
    if (err.kind === 'unauthorized') {
      return failure(
        'unauthorized',
        `The session server refused our credentials (${err.message}). Sign in again or check the token, then retry.`,
        scanner,
        err,
      );
    }
    if (err.kind === 'not_found') {
      return failure(
        'not_found',
        `Session ${sessionId} was not found. It may have been deleted, or it belongs to another account or server.`,
        scanner,
        err,
      );
    }
  }
  const detail = errorMessage(err);
  return failure('network_or_unknown', `Following the session failed: ${detail}`, scanner, err);
}

/**
 * Polls a session until its plan is approved (executionTarget 'remote') or teleported ('local').
 * Fails with an UltraplanPollError: terminated, timeout_pending, timeout_no_plan,
 * extract_marker_missing, network_or_unknown, stopped, unauthorized or not_found.
 */
export async function pollForApprovedPlan(options: PollOptions): Promise<ApprovedPlan> {
  const scanner = options.scanner ?? new ExitPlanModeScanner();
  const timeoutMs = options.timeoutMs ?? DEFAULT_POLL_TIMEOUT_MS;

  const decided = (cursor: string | null): ApprovedPlan | undefined => {
    const d = scanner.decided;
    if (d === null) return undefined;
    return {
      executionTarget: d.kind === 'approved' ? 'remote' : 'local',
      plan: d.plan,
      rejectCount: scanner.rejectCount,
      toolUseId: d.toolUseId,
      cursor,
      scanner,
    };
  };
  const terminated = (subtype: string) =>
    failure(
      'terminated',
      `The session ended (${subtype}) before a plan was approved${rejectionNote(scanner.rejectCount)}. ` +
        (scanner.terminatedDetail !== null ? `The agent said: ${scanner.terminatedDetail}` : 'Open the session to see what happened.'),
      scanner,
    );

  // A resumed scanner may already hold the outcome (e.g. the window closed right after it).
  const already = decided(options.initialCursor ?? null);
  if (already) return already;
  if (scanner.terminated !== null) throw terminated(scanner.terminated);

  return follow<ApprovedPlan>(
    { ...options, timeoutMs },
    scanner,
    ({ status, verdict, cursor }) => {
      if (verdict.kind === 'approved' || verdict.kind === 'teleport') return decided(cursor);
      if (verdict.kind === 'terminated') throw terminated(verdict.subtype);
      if (status === 'archived') throw terminated('archived');
      return undefined;
    },
    () =>
      scanner.everSeenPending
        ? failure(
            'timeout_pending',
            `A plan waited for review for ${minutes(timeoutMs)} without a decision${rejectionNote(scanner.rejectCount)}. ` +
              'Open the review to decide, or follow the session again.',
            scanner,
          )
        : failure(
            'timeout_no_plan',
            `No plan arrived within ${minutes(timeoutMs)}. The session may have failed to start or is ` +
              'still exploring; open it to check.',
            scanner,
          ),
    timeoutMs,
  );
}

/**
 * After an approval, keeps following the session until the `result` event that ends the turn
 * executing the plan, and returns it (success or error subtype: the caller shows either).
 * Pass the scanner and cursor from pollForApprovedPlan's result. Fails like the poller, and
 * with timeout_result when the execution has not ended within `timeoutMs` (default 2 hours).
 */
export async function followUntilResult(options: FollowOptions & { scanner: ExitPlanModeScanner }): Promise<FollowResult> {
  const { scanner } = options;
  if (scanner.decided === null) throw new Error('followUntilResult needs the scanner that saw the approval.');
  return followUntil(options, () => scanner.executionResult, 'the approved plan');
}

/**
 * After a message to a session whose execution had ended (Continue, Fix): keeps following from
 * `initialCursor` until the scanner has read more than `resultsBefore` results (its count when the
 * message went out), and returns the latest, so the turn the message started is followed to its
 * end, each event read once. Fails like followUntilResult.
 */
export async function followNextResult(
  options: FollowOptions & { scanner: ExitPlanModeScanner; resultsBefore: number },
): Promise<FollowResult> {
  const { scanner, resultsBefore } = options;
  return followUntil(options, () => (scanner.resultCount > resultsBefore ? scanner.latestResult : null), 'the continued work');
}

async function followUntil(
  options: FollowOptions & { scanner: ExitPlanModeScanner },
  result: () => SessionResult | null,
  what: string,
): Promise<FollowResult> {
  const { scanner } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_FOLLOW_TIMEOUT_MS;
  const ended = (cursor: string | null): FollowResult | undefined => {
    const r = result();
    return r === null ? undefined : { ...r, cursor };
  };

  const already = ended(options.initialCursor ?? null);
  if (already) return already;

  return follow<FollowResult>(
    { ...options, timeoutMs },
    scanner,
    ({ status, cursor }) => {
      const done = ended(cursor);
      if (done) return done;
      if (status === 'archived') throw failure('terminated', `The session was archived before ${what} finished executing.`, scanner);
      return undefined;
    },
    () =>
      failure(
        'timeout_result',
        `${what[0]!.toUpperCase()}${what.slice(1)} was still executing after ${minutes(timeoutMs)}. It may still finish; open the session to check.`,
        scanner,
      ),
    timeoutMs,
  );
}

// The phases of a followed session as a test watches them: from each poll the poller hands over
// (onPoll), the phase it reads (core/poller.ts pollPhaseOf) and the scanner's detail, reported
// once per change of phase or of the pending plan. Tests that answer a plan as soon as it is
// ready (tests/sessions/clientHarness.ts) drive their reviewer from here.
import type { SessionStatus } from '../../src/core/protocol';
import { pollPhaseOf, type PollPhase, type PollRead } from '../../src/core/poller';
import { ExitPlanModeScanner, type PendingPlan } from '../../src/core/scanner';
import type { SessionTransport } from '../../src/core/transport';

export interface PollPhaseDetail {
  /** The plan awaiting review (plan_ready). */
  pendingPlan: PendingPlan | null;
  /** The agent's last message, its question when the phase is needs_input. */
  question: string | null;
  rejectCount: number;
  /** Undefined when the poll read events and so did not need the status. */
  status: SessionStatus | string | undefined;
}

export type OnPhase = (phase: PollPhase, detail: PollPhaseDetail) => void;

/**
 * Options to spread into pollForApprovedPlan: a scanner (yours, or a new one) and an onPoll that
 * calls `onPhase` on each change until the plan is decided or the session ends. `also` hears
 * every poll (a test that wants the batches too).
 */
export function watchPhases(
  onPhase: OnPhase,
  options: { scanner?: ExitPlanModeScanner; also?: (poll: PollRead) => void } = {},
): { scanner: ExitPlanModeScanner; onPoll: (poll: PollRead) => void } {
  const scanner = options.scanner ?? new ExitPlanModeScanner();
  let lastPhase: PollPhase | null = null;
  let lastPendingId: string | null = null;
  return {
    scanner,
    onPoll: (poll) => {
      options.also?.(poll);
      // The poll that decides or ends the session is its outcome, not a phase.
      if (scanner.decided !== null || scanner.terminated !== null || poll.status === 'archived') return;
      const pendingPlan = scanner.pendingPlan;
      const phase = pollPhaseOf(pendingPlan !== null, poll.status, poll.batch.size);
      const pendingId = pendingPlan?.toolUseId ?? null;
      if (phase === lastPhase && pendingId === lastPendingId) return;
      lastPhase = phase;
      lastPendingId = pendingId;
      onPhase(phase, { pendingPlan, question: scanner.lastAssistantText, rejectCount: scanner.rejectCount, status: poll.status });
    },
  };
}

/**
 * The transport, with every read also handed to `onRead`: what the poller was fed, raw, exactly
 * as the transport returned it (a test of "no gap, no duplicate" compares it with the log).
 */
export function recordReads<T extends SessionTransport>(
  transport: T,
  onRead: (events: unknown[], lastId: string | null) => void,
): SessionTransport {
  const recording: SessionTransport = {
    readEvents: async (sessionId, afterId, signal) => {
      const read = await transport.readEvents(sessionId, afterId, signal);
      onRead(read.events, read.lastId);
      return read;
    },
    getStatus: (sessionId, signal) => transport.getStatus(sessionId, signal),
  };
  const wait = transport.waitForActivity?.bind(transport);
  if (wait) recording.waitForActivity = wait;
  return recording;
}

// Shared by the benches that time "an event on the server -> the poller's phase report": sessions
// waiting on the agent's question are followed at the default 3 s interval, and each records when
// it first waited (needs_input) and how long after its reply was sent the next phase came.
import { performance } from 'node:perf_hooks';
import { DEFAULT_POLL_INTERVAL_MS, pollForApprovedPlan, type PollPhase } from '../src/core/poller';
import type { SessionTransport } from '../src/core/transport';
import { watchPhases } from '../test/support/pollPhases';

export interface ReplyTiming {
  /** The session reached needs_input (it waits on its question). */
  ready: boolean;
  /** performance.now() just before the reply was sent; 0 until then. */
  sentAt: number;
  /** ms from sentAt to the next phase report; -1 until then. */
  latency: number;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Follows every session until `signal` aborts; the timings fill in as phases arrive. */
export function followForReplies(
  ids: readonly string[],
  transport: SessionTransport,
  signal: AbortSignal,
): { state: ReplyTiming[]; polls: Promise<unknown>[] } {
  const state: ReplyTiming[] = ids.map(() => ({ ready: false, sentAt: 0, latency: -1 }));
  const polls = ids.map((sessionId, i) =>
    pollForApprovedPlan({
      sessionId,
      transport,
      pollIntervalMs: DEFAULT_POLL_INTERVAL_MS,
      timeoutMs: 120_000,
      signal,
      ...watchPhases((phase: PollPhase) => {
        const s = state[i]!;
        if (s.sentAt > 0) {
          if (s.latency < 0) s.latency = performance.now() - s.sentAt;
        } else if (phase === 'needs_input') s.ready = true;
      }),
    }).catch(() => undefined),
  );
  return { state, polls };
}

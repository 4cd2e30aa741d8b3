// One reviewer run: a session running one ACP agent on any backend (the local session service, a
// session server, or a host in the review command line's own process) given one prompt, read
// until its turn's result, then archived, which stops the agent. The agent stays in its read-only
// plan mode; whatever it asks permission for is refused, since a reviewer only reads; and its
// session withholds the review's secret rule from it (core/withheldFiles.ts).
import { controlResponseEvent, setPlanModeEvent, userMessageEvent } from '../../core/protocol';
import type { SessionBackend } from '../../core/sessionBackend';
import { errorMessage } from '../../core/errors';
import { asReviewRun } from '../../core/sessionPurpose';
import { WITHHOLD_SECRETS_CONTEXT } from '../../core/withheldFiles';

export const REVIEW_REFUSAL = 'This is a read-only review: change nothing and propose no plan. Reply with the JSON block only.';

/** No agent turn runs longer than this (the agents retry an unreachable model for a long time). */
export const DEFAULT_TURN_TIMEOUT_MS = 10 * 60_000;
const WAIT_SLICE_MS = 1_000;

export type TurnResult = { ok: true; text: string } | { ok: false; error: string };

interface TurnOptions {
  backend: SessionBackend;
  title: string;
  prompt: string;
  signal: AbortSignal;
  timeoutMs?: number;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Runs one prompt to its result. Never throws: a failure is a result that says why. */
export async function runAgentTurn(options: TurnOptions): Promise<TurnResult> {
  const { backend, signal } = options;
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TURN_TIMEOUT_MS);
  let sessionId: string | undefined;
  try {
    // Marked as a review's run, so no planning surface of any window follows it (core/sessionPurpose.ts).
    const session = await backend.createSession(
      asReviewRun({
        title: options.title,
        // The agent's read policy (and its sandbox) withhold what the review withholds from the diff.
        session_context: WITHHOLD_SECRETS_CONTEXT,
        events: [
          { type: 'event', data: setPlanModeEvent(`review-mode-${Math.random().toString(16).slice(2)}`) },
          { type: 'event', data: userMessageEvent(options.prompt) },
        ],
      }),
      signal,
    );
    sessionId = session.id;
    let cursor: string | null = null;
    const refused = new Set<string>();
    for (;;) {
      if (signal.aborted) return { ok: false, error: 'cancelled' };
      if (Date.now() > deadline)
        return { ok: false, error: `no answer within ${Math.round((options.timeoutMs ?? DEFAULT_TURN_TIMEOUT_MS) / 1000)} s` };
      const read = await backend.transport.readEvents(sessionId, cursor, signal);
      cursor = read.lastId ?? cursor;
      for (const item of read.events) {
        const event = record(item);
        if (!event) continue;
        if (event.type === 'result') {
          const text = typeof event.result === 'string' ? event.result : '';
          if (event.is_error === true || event.subtype !== 'success') {
            const errors = Array.isArray(event.errors) ? event.errors.filter((e): e is string => typeof e === 'string') : [];
            return { ok: false, error: (errors[0] ?? text) || `the agent ended with ${String(event.subtype)}` };
          }
          return { ok: true, text };
        }
        const request = record(event.request);
        if (
          event.type === 'control_request' &&
          typeof event.request_id === 'string' &&
          request?.subtype === 'can_use_tool' &&
          !refused.has(event.request_id)
        ) {
          refused.add(event.request_id);
          await backend.sendEvents(
            sessionId,
            [controlResponseEvent(event.request_id, { behavior: 'deny', message: REVIEW_REFUSAL })],
            signal,
          );
        }
      }
      if (backend.transport.waitForActivity) await backend.transport.waitForActivity(sessionId, WAIT_SLICE_MS, signal);
      else await sleep(250, signal);
    }
  } catch (error) {
    if (signal.aborted) return { ok: false, error: 'cancelled' };
    return { ok: false, error: errorMessage(error) };
  } finally {
    // Archiving stops the agent and every process it started, also after a cancel.
    if (sessionId) await backend.archive(sessionId).catch(() => undefined);
  }
}

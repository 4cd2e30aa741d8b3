// The one bounded wait of the tests (unit, bench and e2e): poll a check until it gives a value,
// and on timeout say what was awaited and what the check last gave, so a red run explains itself.
import { inspect } from 'node:util';

export interface WaitOptions {
  /** What is awaited, for the timeout message ("the plan in the panel"). */
  message?: string;
  /** Upper bound; every wait has one. */
  timeoutMs?: number;
  /** The longest pause between two checks; the first pauses are shorter (10 ms, doubling). */
  intervalMs?: number;
  /** More to say on timeout (a log tail, what a recorder holds). */
  detail?: () => string;
  /**
   * Checks again as soon as the thing watched changes: given a wake function, subscribes it and
   * returns the unsubscribe. The pauses still bound the wait when no wake comes.
   */
  wakeOn?: (wake: () => void) => () => void;
  /**
   * An error thrown by the check is a value not yet right (a server still starting), not the end
   * of the wait; the last one is quoted on timeout. Without it a thrown error ends the wait at once.
   */
  retryErrors?: boolean;
}

/** Falsy-but-meaningful values (0, '') count as given; undefined, null and false mean "not yet". */
type NotYet = undefined | null | false;

/**
 * Polls `check` until it returns something other than undefined, null or false, and returns that.
 * `options` may be just the message. With `until`, polls `probe` until its value passes `until`
 * (the timeout then quotes the value, not just `false`).
 */
export function waitFor<T>(probe: () => T | Promise<T>, options: WaitOptions & { until: (value: T) => boolean }): Promise<T>;
export function waitFor<T>(check: () => T | NotYet | Promise<T | NotYet>, options?: WaitOptions | string): Promise<T>;
export async function waitFor<T>(
  check: () => T | NotYet | Promise<T | NotYet>,
  options: (WaitOptions & { until?: (value: T) => boolean }) | string = {},
): Promise<T> {
  const {
    message,
    timeoutMs = 10_000,
    intervalMs = 100,
    detail,
    wakeOn,
    retryErrors = false,
    until,
  } = typeof options === 'string' ? { message: options } : options;
  const given = until
    ? (value: T | NotYet): value is T => until(value as T)
    : (value: T | NotYet): value is T => value !== undefined && value !== null && value !== false;
  const deadline = Date.now() + timeoutMs;
  let last: { value: unknown } | { error: unknown } | undefined;
  let pause = 10;
  // A wake during a check is kept, so the next pause is skipped rather than the change missed.
  let woken = false;
  let wake: (() => void) | undefined;
  const unsubscribe = wakeOn?.(() => {
    woken = true;
    wake?.();
  });
  try {
    for (;;) {
      try {
        const value = await check();
        if (given(value)) return value;
        last = { value };
      } catch (error) {
        if (!retryErrors) throw error;
        last = { error };
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(timeoutMessage(timeoutMs, message ?? sourceOf(check), last, detail));
      if (woken) {
        woken = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => resolve(), Math.min(pause, intervalMs, left));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
      woken = false;
      pause *= 2;
    }
  } finally {
    unsubscribe?.();
  }
}

function timeoutMessage(
  timeoutMs: number,
  what: string,
  last: { value: unknown } | { error: unknown } | undefined,
  detail?: () => string,
): string {
  const seen = last === undefined ? 'nothing' : 'error' in last ? `the error ${describe(last.error)}` : describe(last.value);
  const more = detail ? `\n${detail()}` : '';
  return `timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${seen}${more}`;
}

function describe(value: unknown): string {
  const text = value instanceof Error ? `${value.name}: ${value.message}` : inspect(value, { depth: 3, breakLength: Infinity });
  return text.length > 600 ? `${text.slice(0, 600)}…` : text;
}

/** A check with no message is named by its own source text: `() => page.isVisible()`. */
function sourceOf(check: () => unknown): string {
  const text = String(check).replace(/\s+/g, ' ').trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

export interface WaitOptions {
  /** Upper bound; every wait in the harness has one. */
  timeoutMs?: number;
  intervalMs?: number;
  /** What is awaited, for the timeout message ("the Ultraplan output channel"). */
  message?: string;
}

/**
 * Polls `check` until it returns something other than undefined, null or false, and returns that.
 * An error thrown by `check` ends the wait at once (use it for "this can no longer happen").
 */
export async function waitFor<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.message ?? 'a condition'}`);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, Math.max(0, deadline - Date.now()))));
  }
}

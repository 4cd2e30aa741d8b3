// A service starting up is judged by its log: the local service's launcher gives up on a start
// that neither answers nor writes to its log for a while, and stops it (docs/service.md). Work
// that may take long while nothing else is said (an agent resuming its conversation) says so here
// at a steady pace, so silence in the log means a start that is stuck, never one that is busy.

/** How often long work says it is still going. */
export const PROGRESS_LOG_MS = 10_000;

/** Runs `work`; while it runs, logs `${what}: still going after N s` every `everyMs`. */
export async function withProgressLog<T>(
  log: (line: string) => void,
  what: string,
  work: () => Promise<T>,
  everyMs: number = PROGRESS_LOG_MS,
): Promise<T> {
  const started = Date.now();
  const timer = setInterval(() => log(`${what}: still going after ${Math.round((Date.now() - started) / 1000)} s`), everyMs);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

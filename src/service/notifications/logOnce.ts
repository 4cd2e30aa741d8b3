// A failing webhook writes to the log once per cause, not once per attempt: a receiver that is
// down for an hour is one line, and "HTTP 500" then "timed out" are two. A success clears the
// target's causes, so the next outage is logged again.
export class LogOnce {
  private readonly seen = new Map<string, Set<string>>();

  constructor(private readonly log: (line: string) => void) {}

  /** Logs `line` unless `cause` was already logged for `target` since its last success. */
  failure(target: string, cause: string, line: string): void {
    const causes = this.seen.get(target) ?? new Set<string>();
    if (causes.has(cause)) return;
    causes.add(cause);
    this.seen.set(target, causes);
    this.log(line);
  }

  /** The target works again: says so once, and forgets its causes. */
  success(target: string, line: string): void {
    if (!this.seen.has(target)) return;
    this.seen.delete(target);
    this.log(line);
  }
}

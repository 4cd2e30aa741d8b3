// The Jules sessions of the person's key, kept listed for the inbox's Jules group: read at once,
// again every minute while the window is in use, and after a failure with backoff (doubling from
// 30 s to 15 min, never sooner than the API's Retry-After). A refused key is not tried again until
// the key changes (`refresh`): asking again with it would only be refused again. A failure keeps
// the sessions last listed, so the group shows them under the error. One listing at a time; no
// VS Code here (the extension drives pause and resume from the window's focus).
import { SessionsError, errorMessage } from '../../core/errors';
import type { JulesSession } from './schemas';
import type { ReadJulesSessions } from './sessionList';

export type JulesInboxState =
  | { readonly kind: 'listing' }
  | { readonly kind: 'listed'; readonly sessions: readonly JulesSession[]; readonly skipped: number }
  | {
      readonly kind: 'failed';
      readonly message: string;
      /** The key was refused: nothing is tried again until it changes. */
      readonly refused: boolean;
      /** When the next try is due (ms since epoch); undefined while refused. */
      readonly retryAt: number | undefined;
      /** What the last listing that worked found (empty before one did). */
      readonly sessions: readonly JulesSession[];
    };

export interface JulesInboxListingOptions {
  /** One listing of the key's sessions (sessionList.ts readJulesSessions). */
  read: (signal: AbortSignal) => Promise<ReadJulesSessions>;
  /** Between listings that worked (default 60 s). */
  intervalMs?: number;
  /** After the first failure (default 30 s); doubled after each further one. */
  firstRetryMs?: number;
  /** The longest wait after failures (default 15 min). */
  maxBackoffMs?: number;
  now?: () => number;
  log?: (line: string) => void;
}

export class JulesInboxListing {
  readonly #o: Required<Omit<JulesInboxListingOptions, 'log'>> & Pick<JulesInboxListingOptions, 'log'>;
  readonly #listeners = new Set<() => void>();
  #state: JulesInboxState = { kind: 'listing' };
  #lastListed: readonly JulesSession[] = [];
  #failures = 0;
  #dueAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #listing: Promise<void> | undefined;
  #abort: AbortController | undefined;
  #paused = false;
  #disposed = false;

  constructor(options: JulesInboxListingOptions) {
    this.#o = { intervalMs: 60_000, firstRetryMs: 30_000, maxBackoffMs: 15 * 60_000, now: Date.now, ...options };
  }

  get state(): JulesInboxState {
    return this.#state;
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.#listeners.add(listener);
    return { dispose: () => this.#listeners.delete(listener) };
  }

  /** Lists now (the key changed, or the person asked); the one in flight, if any, is what this waits for. */
  refresh(): Promise<void> {
    if (this.#disposed) return Promise.resolve();
    this.#clearTimer();
    this.#listing ??= this.#list().finally(() => {
      this.#listing = undefined;
      this.#schedule();
    });
    return this.#listing;
  }

  /** No listing while the window is not in use. */
  pause(): void {
    this.#paused = true;
    this.#clearTimer();
  }

  /** Back in use: a listing that fell due meanwhile runs now, else at its time. */
  resume(): void {
    if (!this.#paused || this.#disposed) return;
    this.#paused = false;
    this.#schedule();
  }

  dispose(): void {
    this.#disposed = true;
    this.#clearTimer();
    this.#abort?.abort();
    this.#listeners.clear();
  }

  async #list(): Promise<void> {
    const abort = (this.#abort = new AbortController());
    try {
      const { sessions, skipped } = await this.#o.read(abort.signal);
      if (abort.signal.aborted) return;
      if (skipped > 0) this.#o.log?.(`jules: ${skipped} listed sessions are not what the reference describes; skipped`);
      this.#failures = 0;
      this.#lastListed = sessions;
      this.#dueAt = this.#o.now() + this.#o.intervalMs;
      this.#set({ kind: 'listed', sessions, skipped });
    } catch (err) {
      if (abort.signal.aborted) return;
      this.#failures++;
      const refused = err instanceof SessionsError && err.kind === 'unauthorized';
      const backoff = Math.min(this.#o.maxBackoffMs, this.#o.firstRetryMs * 2 ** (this.#failures - 1));
      const wait = Math.max(backoff, err instanceof SessionsError ? (err.retryAfterMs ?? 0) : 0);
      this.#dueAt = refused ? Number.POSITIVE_INFINITY : this.#o.now() + wait;
      const message = errorMessage(err);
      this.#o.log?.(`jules: listing the sessions for the inbox failed (${this.#failures} in a row): ${message}`);
      this.#set({ kind: 'failed', message, refused, retryAt: refused ? undefined : this.#dueAt, sessions: this.#lastListed });
    } finally {
      if (this.#abort === abort) this.#abort = undefined;
    }
  }

  #schedule(): void {
    this.#clearTimer();
    if (this.#paused || this.#disposed || this.#listing || !Number.isFinite(this.#dueAt)) return;
    const wait = Math.max(0, this.#dueAt - this.#o.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // A timer counts from the event loop's cached clock, so it can fire a little before the wall
      // clock reaches dueAt; never ask sooner than promised (Retry-After included).
      if (this.#o.now() < this.#dueAt) this.#schedule();
      else void this.refresh();
    }, wait);
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #set(state: JulesInboxState): void {
    this.#state = state;
    for (const listener of [...this.#listeners]) listener();
  }
}

// Writes each draft out from the keystroke that typed it, at a bounded rate: the first change of a
// draft is written at once, later ones at most once per interval per draft, and the last change is
// always written (a trailing write). So a reload a moment after typing finds what was typed, and a
// fast typist does not post a message per key. Timers are passed in, for the unit tests.

export interface DraftWriteTimers {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export class DraftWrites<K> {
  readonly #write: (key: K) => void;
  readonly #interval: number;
  readonly #timers: DraftWriteTimers;
  /** When each draft was last written. */
  readonly #lastWrite = new Map<K, number>();
  /** The trailing write waiting for each draft. */
  readonly #waiting = new Map<K, unknown>();

  constructor(write: (key: K) => void, intervalMs: number, timers: DraftWriteTimers) {
    this.#write = write;
    this.#interval = intervalMs;
    this.#timers = timers;
  }

  /** `key` changed: write it now, or once the interval since its last write has passed. */
  changed(key: K): void {
    if (this.#waiting.has(key)) return; // the trailing write will take this change too
    const since = this.#timers.now() - (this.#lastWrite.get(key) ?? -Infinity);
    if (since >= this.#interval) {
      this.#run(key);
      return;
    }
    const handle = this.#timers.setTimeout(() => {
      this.#waiting.delete(key);
      this.#run(key);
    }, this.#interval - since);
    this.#waiting.set(key, handle);
  }

  /** Writes every waiting draft now (the page is hidden or going away). */
  flush(): void {
    for (const [key, handle] of [...this.#waiting]) {
      this.#timers.clearTimeout(handle);
      this.#waiting.delete(key);
      this.#run(key);
    }
  }

  get waiting(): number {
    return this.#waiting.size;
  }

  #run(key: K): void {
    this.#lastWrite.set(key, this.#timers.now());
    this.#write(key);
  }
}

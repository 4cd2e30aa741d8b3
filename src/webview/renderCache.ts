// The last few plans the panel rendered, by their text: switching between revisions (or back from
// the diff) shows a plan rendered before by moving its nodes back, instead of running markdown-it,
// DOMPurify and the line index again (about 50 ms for 2,000 lines, several times that in a loaded
// editor). Keyed by the text itself, not by the hash the host sent, so a wrong hash can never
// show another plan. Bounded: a 2,000-line plan's DOM is a few MB.

export class RenderCache<V> {
  readonly #entries = new Map<string, V>();
  readonly #capacity: number;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`RenderCache capacity must be a positive integer, not ${capacity}`);
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The entry for `source`, now the most recently used; undefined when it is not kept. */
  get(source: string): V | undefined {
    const entry = this.#entries.get(source);
    if (entry === undefined) return undefined;
    this.#entries.delete(source);
    this.#entries.set(source, entry);
    return entry;
  }

  /** Keeps `entry` for `source`, dropping the least recently used past the capacity. */
  set(source: string, entry: V): void {
    this.#entries.delete(source);
    this.#entries.set(source, entry);
    while (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
  }
}

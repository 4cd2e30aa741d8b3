// One owner per disposable: a class registers what it creates and lets go of all of it at once,
// newest first, instead of emptying an array by hand; a map of disposables (sessions by key)
// disposes what it replaces or forgets. Structural, so vscode.Disposable fits.

export interface IDisposable {
  dispose(): unknown;
}

export abstract class Disposable implements IDisposable {
  readonly #owned: IDisposable[] = [];
  #disposed = false;

  protected get isDisposed(): boolean {
    return this.#disposed;
  }

  /** Owns `item` from now on; registered after dispose, it is disposed at once. */
  protected _register<T extends IDisposable>(item: T): T {
    if (this.#disposed) item.dispose();
    else this.#owned.push(item);
    return item;
  }

  dispose(): unknown {
    if (this.#disposed) return undefined;
    this.#disposed = true;
    // Newest first: later items may depend on earlier ones.
    disposeAll(this.#owned.splice(0).reverse());
    return undefined;
  }
}

/** Disposes each item in order; one failing does not keep the rest (their errors are thrown together). */
export function disposeAll(items: Iterable<IDisposable>): void {
  const errors: unknown[] = [];
  for (const item of items) {
    try {
      item.dispose();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw new AggregateError(errors, 'disposing failed');
}

/** A disposable from a function (a timer to clear, a listener to remove). */
export function toDisposable(dispose: () => unknown): IDisposable {
  return { dispose };
}

/**
 * Owns the disposables it maps to: a value replaced, deleted or left at dispose is disposed here,
 * the one way out, so no caller disposes an entry by hand before it forgets it.
 */
export class DisposableMap<K, V extends IDisposable> implements IDisposable {
  readonly #map = new Map<K, V>();
  #disposed = false;

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  values(): IterableIterator<V> {
    return this.#map.values();
  }

  entries(): IterableIterator<[K, V]> {
    return this.#map.entries();
  }

  /** Maps `key` to `value`, disposing the value it replaces; after dispose, `value` is disposed at once. */
  set(key: K, value: V): void {
    if (this.#disposed) {
      value.dispose();
      return;
    }
    const before = this.#map.get(key);
    this.#map.set(key, value);
    if (before !== undefined && before !== value) before.dispose();
  }

  /** Forgets `key` and disposes its value. */
  deleteAndDispose(key: K): void {
    const value = this.#map.get(key);
    this.#map.delete(key);
    value?.dispose();
  }

  /** Disposes every value and forgets them; one failing does not keep the rest. */
  clearAndDisposeAll(): void {
    const values = [...this.#map.values()];
    this.#map.clear();
    disposeAll(values);
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.clearAndDisposeAll();
  }
}

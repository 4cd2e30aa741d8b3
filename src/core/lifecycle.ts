// One owner per disposable: a class registers what it creates and lets go of all of it at once,
// newest first, instead of emptying an array by hand. Structural, so vscode.Disposable fits.

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
    // Newest first: later items may depend on earlier ones. One failing does not keep the rest.
    const errors: unknown[] = [];
    while (this.#owned.length > 0) {
      try {
        this.#owned.pop()?.dispose();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, 'disposing failed');
    return undefined;
  }
}

/** A disposable from a function (a timer to clear, a listener to remove). */
export function toDisposable(dispose: () => unknown): IDisposable {
  return { dispose };
}

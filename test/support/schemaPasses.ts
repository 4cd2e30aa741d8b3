// Counting schema passes: every safeParse and parse of every zod schema the given modules export
// (by the `…Schema` naming of the house), for tests and benchmarks of "each event validated once".
export interface SchemaPassCount {
  readonly n: number;
  /** Puts the schemas' own methods back. */
  restore(): void;
}

export function countSchemaPasses(modules: ReadonlyArray<Record<string, unknown>>): SchemaPassCount {
  let n = 0;
  const undo: Array<() => void> = [];
  for (const module of modules) {
    for (const [name, value] of Object.entries(module)) {
      if (!name.endsWith('Schema') || value === null || typeof value !== 'object') continue;
      const schema = value as Record<'safeParse' | 'parse', (...args: unknown[]) => unknown>;
      for (const method of ['safeParse', 'parse'] as const) {
        const original = schema[method];
        if (typeof original !== 'function') continue;
        schema[method] = (...args: unknown[]) => {
          n++;
          return original.apply(schema, args);
        };
        undo.push(() => {
          schema[method] = original;
        });
      }
    }
  }
  return {
    get n() {
      return n;
    },
    restore: () => undo.forEach((u) => u()),
  };
}

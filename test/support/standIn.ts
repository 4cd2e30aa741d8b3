// An object that stands for one made later by a mocha hook (a server started in before(), a run
// made in beforeEach()), so a describe can hold it in a const and its tests use it as it is.
// Reads go to the current object, and its methods run bound to it.
export function standIn<T extends object>(current: () => T | undefined, what: string): T {
  return new Proxy({} as T, {
    get: (_target, key) => {
      const object = current();
      if (!object) throw new Error(`${what} was used outside the tests its hooks set it up for`);
      const value = Reflect.get(object, key) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}

import * as assert from 'node:assert/strict';
import { Disposable, DisposableMap, toDisposable } from '../../src/core/lifecycle';

class Owner extends Disposable {
  own(name: string, log: string[]) {
    return this._register(toDisposable(() => log.push(name)));
  }
  get disposed() {
    return this.isDisposed;
  }
}

describe('Disposable (one owner per disposable)', () => {
  it('disposes what it registered once, newest first', () => {
    const log: string[] = [];
    const owner = new Owner();
    owner.own('a', log);
    owner.own('b', log);
    owner.dispose();
    owner.dispose();
    assert.deepEqual(log, ['b', 'a']);
    assert.equal(owner.disposed, true);
  });

  it('disposes at once what is registered after it was disposed', () => {
    const log: string[] = [];
    const owner = new Owner();
    owner.dispose();
    owner.own('late', log);
    assert.deepEqual(log, ['late']);
  });

  it('one failing does not keep the rest from being disposed, and the failure is reported', () => {
    const log: string[] = [];
    const owner = new Owner();
    owner.own('a', log);
    owner.own('boom', log);
    (owner as unknown as { _register(d: { dispose(): void }): void })._register({
      dispose: () => {
        throw new Error('broken');
      },
    });
    assert.throws(() => owner.dispose(), /disposing failed/);
    assert.deepEqual(log, ['boom', 'a']);
  });
});

describe('DisposableMap (the one way out of a map of disposables)', () => {
  const item = (name: string, log: string[]) => toDisposable(() => log.push(name));

  it('disposes a value when it is replaced or deleted, never one set again under its own key', () => {
    const log: string[] = [];
    const map = new DisposableMap<string, ReturnType<typeof item>>();
    const a = item('a', log);
    map.set('k', a);
    map.set('k', a);
    assert.deepEqual(log, [], 'the same value set again is kept');
    map.set('k', item('b', log));
    assert.deepEqual(log, ['a']);
    map.deleteAndDispose('k');
    map.deleteAndDispose('missing');
    assert.deepEqual(log, ['a', 'b']);
    assert.equal(map.size, 0);
  });

  it('dispose disposes and forgets every value once; a value set afterwards is disposed at once', () => {
    const log: string[] = [];
    const map = new DisposableMap<string, ReturnType<typeof item>>();
    map.set('x', item('x', log));
    map.set('y', item('y', log));
    assert.deepEqual(
      [...map.entries()].map(([k]) => k),
      ['x', 'y'],
    );
    map.dispose();
    map.dispose();
    assert.deepEqual(log, ['x', 'y']);
    assert.equal(map.get('x'), undefined);
    map.set('late', item('late', log));
    assert.deepEqual(log, ['x', 'y', 'late']);
    assert.equal(map.has('late'), false);
  });

  it('one value failing to dispose does not keep the rest, and the failure is reported', () => {
    const log: string[] = [];
    const map = new DisposableMap<string, { dispose(): void }>();
    map.set('bad', {
      dispose: () => {
        throw new Error('broken');
      },
    });
    map.set('good', item('good', log));
    assert.throws(() => map.clearAndDisposeAll(), /disposing failed/);
    assert.deepEqual(log, ['good']);
    assert.equal(map.size, 0);
  });
});

import * as assert from 'node:assert/strict';
import { Disposable, toDisposable } from '../../src/core/lifecycle';

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

// The panel's cache of rendered plans (src/webview/renderCache.ts): by text, most recently used kept.
import * as assert from 'node:assert/strict';
import { RenderCache } from '../../src/webview/renderCache';

describe('RenderCache', () => {
  it('keeps entries by their exact text', () => {
    const cache = new RenderCache<string>(4);
    cache.set('# plan', 'rendered');
    assert.equal(cache.get('# plan'), 'rendered');
    assert.equal(cache.get('# plan '), undefined, 'another text, however close, is another plan');
  });

  it('drops the least recently used past its capacity; a get counts as a use', () => {
    const cache = new RenderCache<number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1);
    cache.set('c', 3);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('b'), undefined, 'b was used least recently');
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.get('c'), 3);
  });

  it('replaces an entry set again without growing', () => {
    const cache = new RenderCache<number>(2);
    cache.set('a', 1);
    cache.set('a', 2);
    assert.equal(cache.size, 1);
    assert.equal(cache.get('a'), 2);
  });

  it('refuses a capacity that could keep nothing', () => {
    assert.throws(() => new RenderCache(0), /positive integer/);
    assert.throws(() => new RenderCache(1.5), /positive integer/);
  });
});

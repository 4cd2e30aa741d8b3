// The line map taken out of markdown-it's HTML before sanitizing and put back after
// (src/webview/planLineMap.ts): what it takes, what it leaves, and that it refuses elements that
// are not the ones the HTML opened. Real DOM: test/webview/planMarkdown.browser.test.ts.
import * as assert from 'node:assert/strict';
import { applyLineMap, takeLineMap, type ElementLike } from '../../src/webview/planLineMap';
import { planHtmlUnsanitized } from '../../src/webview/planMarkdown';

class FakeElement implements ElementLike {
  readonly attributes = new Map<string, string>();
  constructor(readonly localName: string) {}
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }
}

describe('plan line map', () => {
  it('takes the line attributes out of every tag and remembers each element in order', () => {
    const html = planHtmlUnsanitized(['# Title', '', '3. one `x`', '4. two', '', '```ts', 'code', '```'].join('\n'));
    const map = takeLineMap(html);
    assert.doesNotMatch(map.html, /data-l[se]=/);
    assert.deepEqual(map.tags, ['h1', 'ol', 'li', 'code', 'li', 'pre', 'code']);
    assert.deepEqual(map.blocks, [
      { at: 0, start: '0', end: '1' },
      { at: 1, start: '2', end: '5' },
      { at: 2, start: '2', end: '3' },
      { at: 4, start: '3', end: '5' },
      { at: 6, start: '5', end: '8' },
    ]);
    // Other attributes stay where they were: the list's start, the fence's language.
    assert.match(map.html, /<ol start="3">/);
    assert.match(map.html, /<code class="language-ts">/);
  });

  it('takes nothing from text that spells the attributes out: markdown-it escaped its quotes and brackets', () => {
    const plan = [
      'A paragraph with <p data-ls="0" data-le="9"> and `code data-ls="1" data-le="2"`.',
      '',
      '[a link](https://example.com/ "title data-ls=\\"7\\" data-le=\\"8\\"")',
      '',
      '    <div data-ls="3" data-le="4">',
    ].join('\n');
    const map = takeLineMap(planHtmlUnsanitized(plan));
    assert.deepEqual(
      map.blocks.map((b) => [map.tags[b.at], b.start, b.end]),
      [
        ['p', '0', '1'],
        ['p', '2', '3'],
        ['pre', '4', '5'],
      ],
    );
    assert.deepEqual(map.tags, ['p', 'code', 'p', 'a', 'pre', 'code'], 'the text opened no element');
    assert.match(map.html, /&lt;p data-ls=&quot;0&quot;/);
  });

  it('puts the ranges back on the matching elements', () => {
    const map = takeLineMap(
      '<ul data-ls="0" data-le="2">\n<li data-ls="0" data-le="1">a <code>b</code></li>\n<li data-ls="1" data-le="2">c</li>\n</ul>\n',
    );
    const elements = ['ul', 'li', 'code', 'li'].map((tag) => new FakeElement(tag));
    assert.equal(applyLineMap(map, elements), true);
    assert.deepEqual(
      elements.map((e) => Object.fromEntries(e.attributes)),
      [{ 'data-ls': '0', 'data-le': '2' }, { 'data-ls': '0', 'data-le': '1' }, {}, { 'data-ls': '1', 'data-le': '2' }],
    );
  });

  it('refuses, changing nothing, when the sanitized elements are not the ones the HTML opened', () => {
    const map = takeLineMap('<p data-ls="0" data-le="1">a <strong>b</strong></p>\n<p data-ls="2" data-le="3">c</p>\n');
    const cases = [
      ['p', 'p'], // one removed
      ['p', 'strong', 'p', 'em'], // one added
      ['p', 'em', 'p'], // one renamed
      ['p', 'p', 'strong'], // reordered
    ];
    for (const tags of cases) {
      const elements = tags.map((tag) => new FakeElement(tag));
      assert.equal(applyLineMap(map, elements), false, tags.join(','));
      assert.ok(
        elements.every((e) => e.attributes.size === 0),
        `nothing set for ${tags.join(',')}`,
      );
    }
  });
});

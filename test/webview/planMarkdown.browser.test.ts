// planMarkdown's render in real Chromium (a bare page, the module bundled on its own): the line
// ranges put back after sanitizing (planLineMap.ts) make the same DOM as sending them through the
// sanitizer, for plans of every shape and for text that spells the attributes out.
import * as assert from 'node:assert/strict';
import * as esbuild from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { generatePlan } from '../../bench/panel.bench';
import { warmUpSample } from '../../src/webview/renderWarmUp';
import { launchChromium, REPO_ROOT } from './panelPage';

interface Rendered {
  lineMap: string;
  html: string;
  reference: string;
  blocks: Array<[string, string, string]>;
}

declare global {
  interface Window {
    __render(source: string): Rendered;
  }
}

const SHAPES = [
  '# Title\n\nProse with **strong**, *em*, `code`, a [link](https://example.com/a "t") and https://example.com/b.',
  '3. third\n4. fourth\n   - nested *one*\n   - nested two\n\n     with a paragraph\n\n5. fifth',
  '- [ ] a task\n- [x] done\n\n> quoted\n> > twice\n\n---\n\n***',
  '| a | b |\n|:--|--:|\n| 1 | `2` |\n| 3 | 4 |\n\n| only | head |\n| ---- | ---- |',
  '```ts\nconst a = "<b>";\n```\n\n    indented code\n\n~~~\nplain fence\n~~~',
  '![an image](https://example.com/i.png) and ![local](file:///etc/passwd) and [bad](javascript:alert(1))',
  '###### six\n\nSetext\n======\n\nline one  \nline two\\\nline three',
  'Text spelling it out: <p data-ls="0" data-le="9"> and `<li data-ls="1" data-le="2">` and "data-ls="3" data-le="4""',
  '<div data-ls="0" data-le="99">raw html is text here</div>\n\n<script>alert(1)</script>',
  '',
];

describe('plan markdown render (Chromium)', function () {
  this.timeout(60_000);
  let browser: Browser;
  let page: Page;

  before(async () => {
    const bundle = await esbuild.build({
      stdin: {
        contents: [
          "import { renderPlan, renderPlanThroughSanitizer } from './src/webview/planMarkdown';",
          'const html = (fragment) => { const div = document.createElement("div"); div.append(fragment); return div; };',
          // Attribute order differs (ours go on last); what they are and where must not.
          'const canonical = (node) => node.nodeType !== 1 ? JSON.stringify(node.nodeValue).replaceAll("<", "\\\\u003c") :',
          '  `<${node.localName} ${[...node.attributes].map((a) => `${a.name}=${JSON.stringify(a.value)}`).sort().join(" ")}>${[...node.childNodes].map(canonical).join("")}</>`;',
          'window.__render = (source) => {',
          '  const { fragment, lineMap } = renderPlan(source);',
          '  const root = html(fragment);',
          '  const blocks = [...root.querySelectorAll("[data-ls]")].map((e) => [e.localName, e.getAttribute("data-ls"), e.getAttribute("data-le")]);',
          '  return { lineMap, html: canonical(root), reference: canonical(html(renderPlanThroughSanitizer(source))), blocks };',
          '};',
        ].join('\n'),
        resolveDir: REPO_ROOT,
        loader: 'ts',
      },
      bundle: true,
      platform: 'browser',
      format: 'iife',
      write: false,
      logLevel: 'silent',
    });
    browser = await launchChromium();
    page = await browser.newPage();
    await page.setContent('<!DOCTYPE html><html><body></body></html>');
    await page.addScriptTag({ content: bundle.outputFiles[0]?.text ?? '' });
  });

  after(async () => {
    await browser?.close();
  });

  const render = (source: string) => page.evaluate((s) => window.__render(s), source);

  it('puts the ranges on after sanitizing and gets the same DOM as sanitizing them, for every shape of plan', async () => {
    for (const source of [...SHAPES, SHAPES.join('\n\n'), warmUpSample(3), generatePlan(400, 7)]) {
      const rendered = await render(source);
      assert.equal(rendered.lineMap, 'after', source.slice(0, 60));
      assert.equal(rendered.html, rendered.reference, source.slice(0, 60));
    }
  });

  it('gives a block to each of the 2,000-line bench plan’s blocks, with its lines', async () => {
    const rendered = await render(generatePlan(2_000, 1));
    assert.equal(rendered.lineMap, 'after');
    assert.equal(rendered.blocks.length, 1_300);
    assert.deepEqual(rendered.blocks.slice(0, 4), [
      ['h1', '0', '1'],
      ['h2', '2', '3'],
      ['p', '4', '5'],
      ['ol', '6', '13'],
    ]);
  });

  it('takes no range from text that spells the attributes out', async () => {
    const rendered = await render(SHAPES[7] ?? '');
    assert.deepEqual(rendered.blocks, [['p', '0', '1']]);
    const raw = await render(SHAPES[8] ?? '');
    assert.deepEqual(raw.blocks, [
      ['p', '0', '1'],
      ['p', '2', '3'],
    ]);
    // Only elements open with `<` in the canonical form (text has it escaped): the wrapper and two paragraphs.
    assert.deepEqual(raw.html.match(/<[a-z]+ /g), ['<div ', '<p ', '<p ']);
  });
});

// The review panel's page carries its script and stylesheet in itself (reviewPanelHtml.ts): what
// those texts hold must not end their element early, and the stylesheet's font must still come from
// the extension's own files. The real bundle under this page, in Chromium: test/webview/.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { reviewPanelCsp, reviewPanelHtml } from '../../../src/extension/review/reviewPanelHtml';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const CSP_SOURCE = 'https://file+.vscode-resource.vscode-cdn.net';
const ASSETS = `${CSP_SOURCE}/ext/dist`;

function page(script: string, style = 'main{color:red}'): string {
  return reviewPanelHtml({ cspSource: CSP_SOURCE, nonce: 'n0nce', script, style, assetsUri: ASSETS });
}

/** The text between the first `<tag nonce…>` and the first `</tag` after it, as an HTML parser would end it. */
function elementText(html: string, tag: 'script' | 'style'): string {
  const open = html.indexOf(`<${tag} nonce="n0nce">`);
  assert.notEqual(open, -1, `a ${tag} element with the nonce`);
  const start = html.indexOf('>', open) + 1;
  const end = html.toLowerCase().indexOf(`</${tag}`, start);
  return html.slice(start, end);
}

describe('the review panel page: its script and stylesheet inline', () => {
  it('puts the script in the page whole: a "</script>" inside it cannot end the element and start markup', () => {
    const script = 'const s = "</script><img src=x onerror=alert(1)>"; const r = /<\\/SCRIPT>/i; window.done = true;';
    const html = page(script);
    const inPage = elementText(html, 'script');
    assert.match(inPage, /window\.done = true;$/, 'the element ends after the last statement');
    assert.doesNotMatch(inPage, /<\/script/i);
    // Only the escape differs, and `<\/` means `</` in a JavaScript string or regular expression.
    assert.equal(inPage.replace(/<\\\//g, '</'), script.replace(/<\\\//g, '</'));
    assert.equal(html.match(/<\/script/gi)?.length, 1, 'one closing tag: ours');
  });

  it('puts the stylesheet in the page whole, and its relative url()s point into the extension', () => {
    const style =
      '@font-face{font-family:codicon;src:url("./codicon.ttf?abc") format("truetype")}a::after{content:"</style><script>x()</script>"}b{background:url(./i.png)}c{background:url(data:image/png;base64,AA==)}';
    const html = page('', style);
    const inPage = elementText(html, 'style');
    assert.match(inPage, /url\("https:\/\/file\+\.vscode-resource\.vscode-cdn\.net\/ext\/dist\/codicon\.ttf\?abc"\)/);
    assert.match(inPage, /url\(https:\/\/file\+\.vscode-resource\.vscode-cdn\.net\/ext\/dist\/i\.png\)/);
    assert.match(inPage, /url\(data:image\/png;base64,AA==\)/, 'an absolute url is left as it is');
    assert.match(inPage, /c\{background:url\(data:image\/png;base64,AA==\)\}$/, 'the element ends after the last rule');
    assert.equal(html.match(/<\/style/gi)?.length, 1, 'one closing tag: ours');
  });

  it('lets a script or stylesheet run only by its nonce, and fonts and images only from the extension', () => {
    const csp = reviewPanelCsp(CSP_SOURCE, 'n0nce');
    assert.match(csp, /script-src 'nonce-n0nce'(;|$)/);
    assert.match(csp, /style-src 'nonce-n0nce'(;|$)/);
    assert.match(csp, new RegExp(`font-src ${CSP_SOURCE.replace(/[.+]/g, '\\$&')}(;|$)`));
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(page('').match(/<script\b/g)?.length, 1, 'no script element but the one with the nonce');
  });

  it('the built bundle goes in as it is: esbuild.mjs refused any "<script" or "</style" in it', () => {
    const script = readFileSync(path.join(REPO_ROOT, 'dist', 'webview.js'), 'utf8');
    const style = readFileSync(path.join(REPO_ROOT, 'dist', 'webview.css'), 'utf8');
    assert.doesNotMatch(script, /<\/?script/i);
    assert.doesNotMatch(style, /<\/style/i);
    const html = page(script, style);
    assert.equal(elementText(html, 'script'), script);
  });
});

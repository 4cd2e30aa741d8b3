// The review panel's HTML page and its Content-Security-Policy. Kept free of the vscode import so the
// Chromium tests (test/webview/) load the webview bundle under exactly the page and CSP that
// ReviewPanel serves.

export interface ReviewPanelPageOptions {
  /** webview.cspSource: the origin the panel's own files (its font) come from. */
  cspSource: string;
  /** A fresh random nonce per page load; the only way a script or stylesheet may run. */
  nonce: string;
  /** The text of dist/webview.js, put in the page under the nonce. */
  script: string;
  /** The text of dist/webview.css, put in the page under the nonce. */
  style: string;
  /** dist/ as the webview sees it: the stylesheet's relative url()s (its font) resolve against it. */
  assetsUri: string;
}

/**
 * default-src 'none' blocks everything not listed (connect, frame, media, object, worker, manifest);
 * scripts and stylesheets only by nonce, so an injected <script>, <style> or inline handler never
 * runs; fonts and images only from the extension's own files, so a plan cannot load a remote image
 * or stylesheet. base-uri and form-action are not covered by default-src, hence listed.
 */
export function reviewPanelCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
    `img-src ${cspSource}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-src 'none'",
  ].join('; ');
}

const ATTRIBUTE_ESCAPES: Record<string, string> = { '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;', "'": '&#39;' };

function escapeAttribute(value: string): string {
  return value.replace(/[&"<>']/g, (c) => ATTRIBUTE_ESCAPES[c] ?? c);
}

/**
 * A text that cannot end the element it is put in: `</script` or `</style` becomes `<\/script` or
 * `<\/style`, which means the same inside a JavaScript string, regular expression or comment, and
 * inside a CSS string or comment, the only places either can occur in a built bundle (esbuild
 * writes them that way itself).
 */
function inElement(text: string, element: 'script' | 'style'): string {
  return text.replace(new RegExp(`</(${element})`, 'gi'), '<\\/$1');
}

/** The stylesheet's relative url()s (`url("./codicon.ttf?…")`) made absolute, against `base`. */
function withAbsoluteUrls(css: string, base: string): string {
  const root = base.endsWith('/') ? base : `${base}/`;
  return css.replace(/url\((["']?)\.\//g, (_match, quote: string) => `url(${quote}${root}`);
}

/**
 * The panel's page. Its script and stylesheet are in the page itself: fetched through the
 * webview's resource path (its service worker, the workbench, the remote) they took 70–525 ms on
 * the way to the first paint after a window reload (README, "The local session service").
 */
export function reviewPanelHtml(options: ReviewPanelPageOptions): string {
  const nonce = escapeAttribute(options.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(reviewPanelCsp(options.cspSource, options.nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">${inElement(withAbsoluteUrls(options.style, options.assetsUri), 'style')}</style>
<title>Ultraplan Review</title>
</head>
<body>
<main id="app" aria-live="off"><p class="loading">Loading the plan review…</p></main>
<script nonce="${nonce}">${inElement(options.script, 'script')}</script>
</body>
</html>
`;
}

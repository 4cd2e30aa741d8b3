// The review panel's HTML page and its Content-Security-Policy. Kept free of the vscode import so the
// Chromium tests (test/webview/) load the webview bundle under exactly the page and CSP that
// ReviewPanel serves.

export interface ReviewPanelPageOptions {
  /** webview.cspSource: the origin the panel's own resources (script, css, font) come from. */
  cspSource: string;
  /** A fresh random nonce per page load; the only way a script may run. */
  nonce: string;
  /** URL of dist/webview.js as the webview sees it. */
  scriptUri: string;
  /** URL of dist/webview.css as the webview sees it. */
  styleUri: string;
}

/**
 * default-src 'none' blocks everything not listed (connect, frame, media, object, worker, manifest);
 * scripts only by nonce, so an injected <script> or inline handler never runs; styles, fonts and
 * images only from the extension's own files, so a plan cannot load a remote image or stylesheet.
 * base-uri and form-action are not covered by default-src, hence listed.
 */
export function reviewPanelCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource}`,
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

export function reviewPanelHtml(options: ReviewPanelPageOptions): string {
  const nonce = escapeAttribute(options.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(reviewPanelCsp(options.cspSource, options.nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttribute(options.styleUri)}">
<title>Ultraplan Review</title>
</head>
<body>
<main id="app" aria-live="off"><p class="loading">Loading the plan review…</p></main>
<script nonce="${nonce}" src="${escapeAttribute(options.scriptUri)}"></script>
</body>
</html>
`;
}

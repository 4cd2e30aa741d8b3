// The review page's HTML: a shell that loads the panel's browser bundle (dist/review-page.js,
// built from src/webview) under a strict Content-Security-Policy, and the small page that turns a
// one-time link into a browser session. Nothing from the session is put in the HTML but its id and
// the CSRF token, both escaped; the plan reaches the page as JSON and is rendered by the panel's
// own sanitizing code.

export interface ReviewPageShell {
  sessionId: string;
  csrfToken: string;
  /** How the browser got in: the issuer's sign-in, or a one-time link (the page's Sign out says where to go next). */
  signIn: 'issuer' | 'link';
  nonce: string;
  /** Absolute paths of the page's script and stylesheet. */
  script: string;
  style: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&"<>']/g, (c) => ESCAPES[c] ?? c);
}

/**
 * Scripts only by nonce (no inline code, no eval: no 'unsafe-*'), stylesheets from the server
 * itself, fetches to the server itself, no forms, no frames, and the page in no one else's frame
 * (a decision page must not be clickjacked). Fonts and images only from the server, so a plan
 * cannot load a remote image to learn who read it.
 */
export function reviewPageCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    "style-src 'self'",
    "font-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "frame-src 'none'",
  ].join('; ');
}

/** The CSP of the link page: its one form posts back to the server. */
export function linkPageCsp(): string {
  return [
    "default-src 'none'",
    "style-src 'self'",
    "font-src 'self'",
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function reviewPageHtml(shell: ReviewPageShell): string {
  const nonce = escapeHtml(shell.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<meta name="ultraplan-session" content="${escapeHtml(shell.sessionId)}">
<meta name="ultraplan-csrf" content="${escapeHtml(shell.csrfToken)}">
<meta name="ultraplan-sign-in" content="${escapeHtml(shell.signIn)}">
<link rel="icon" href="/review/assets/icon.svg">
<link rel="stylesheet" href="${escapeHtml(shell.style)}">
<title>Ultraplan Review</title>
</head>
<body class="review-page">
<main id="app" aria-live="off"><p class="loading">Loading the plan review…</p></main>
<script nonce="${nonce}" src="${escapeHtml(shell.script)}"></script>
</body>
</html>
`;
}

/** A small page of ours without script: `head` is extra head markup, `main` the body's content (both already escaped). */
function plainPage(style: string, main: string, head = ''): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
${head}<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="icon" href="/review/assets/icon.svg">
<link rel="stylesheet" href="${escapeHtml(style)}">
<title>Ultraplan Review</title>
</head>
<body class="review-page link-page">
<main>
${main}
</main>
</body>
</html>
`;
}

/**
 * What a one-time link shows: one button that posts the token. Opening the link does not use it
 * up, so a chat's link preview (a GET) cannot spend it before the person does.
 */
export function linkPageHtml(options: { action: string; token: string; style: string }): string {
  return plainPage(
    options.style,
    `<h1>Ultraplan plan review</h1>
<p>This link opens the review once, in this browser.</p>
<form method="post" action="${escapeHtml(options.action)}">
<input type="hidden" name="link" value="${escapeHtml(options.token)}">
<button type="submit" class="primary">Open the review</button>
</form>`,
  );
}

/** A page that says why the review cannot be shown (an expired link, no session), and what to do. */
export function messagePageHtml(options: { title: string; text: string; style: string }): string {
  return plainPage(options.style, `<h1>${escapeHtml(options.title)}</h1>\n<p>${escapeHtml(options.text)}</p>`);
}

/**
 * After the issuer's redirect: the session cookie is set, but the browser does not send a
 * SameSite=Strict cookie on a navigation that another site started, redirects included. This
 * page moves on by itself (a refresh, which is this origin's own navigation), with a link too.
 */
export function signedInPageHtml(options: { to: string; name: string; style: string }): string {
  const to = escapeHtml(options.to);
  return plainPage(
    options.style,
    `<h1>Signed in as ${escapeHtml(options.name)}</h1>\n<p><a href="${to}">Continue to the review</a></p>`,
    `<meta http-equiv="refresh" content="0;url=${to}">\n`,
  );
}

// The review page's routes: the page of a session (/review/<id>), its assets, the one-time link's
// exchange for a browser session, and the minting of such links for a program that holds the
// token. The session routes the page calls are the server's own (server.ts), authenticated here
// by the page's cookie and, on a POST, its CSRF token.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import * as z from 'zod';
import { toLinkSessionId } from '../../../core/codeSessions';
import { HttpError } from '../requestBody';
import type { Principal } from '../../identity/sessionOwner';
import { BrowserSessions, sameSecret, type BrowserSession } from './browserSessions';
import { CALLBACK_PATH, SIGN_IN_TTL_MS, SIGN_OUT_PATH, type BrowserSignIn } from '../../identity/browserSignIn';
import { isLoopbackHost } from '../../../core/authMetadata';
import { SessionsError, errorMessage } from '../../../core/errors';
import { browserSessionId, clearedCookies, clearedSignInCookie, sessionCookie, signInCookie, signInState } from './cookies';
import { linkPageCsp, linkPageHtml, messagePageHtml, reviewPageCsp, reviewPageHtml, signedInPageHtml } from './reviewPageHtml';

/** The bundle's files the page may load (esbuild.mjs writes them beside server.mjs). */
const ASSETS: Record<string, string> = {
  'review-page.js': 'text/javascript; charset=utf-8',
  'review-page.css': 'text/css; charset=utf-8',
  'codicon.ttf': 'font/ttf',
};
export const ASSETS_PATH = '/review/assets/';
const SCRIPT = `${ASSETS_PATH}review-page.js`;
const STYLE = `${ASSETS_PATH}review-page.css`;
/** The tab's icon: made here, so a browser asking /favicon.ico (refused: not the page's) is not left to guess. */
const ICON = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#0969da"/><path d="M4 8.5l2.5 2.5L12 5" stroke="#fff" stroke-width="2" fill="none"/></svg>',
);
/** Where a program asks for a link to a session's review page. */
export const REVIEW_LINKS_PATH = '/v1/ultraplan/review-links';
export const CSRF_HEADER = 'x-csrf-token';
const MAX_FORM_BYTES = 4096;
const SESSION_ID = /^[A-Za-z0-9_-]{1,200}$/;

export const ReviewLinkRequestSchema = z.strictObject({ session_id: z.string().regex(SESSION_ID, 'must be a session id') });

export interface ReviewPageOptions {
  /** Where review-page.js and its stylesheet are; default: beside the running program. */
  assetsDir?: string;
  sessions?: BrowserSessions;
  /** A team server: people sign in through its issuer (none: a one-time link is the way in). */
  signIn?: BrowserSignIn;
  /**
   * The page's origin as people's browsers reach it (`https://plans.example.com`, --public-url),
   * for links and the issuer's redirect back. Default: from the Host header, http on a loopback
   * name, else https.
   */
  publicOrigin?: string | undefined;
}

/** The headers every page of ours carries besides its CSP. */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  // Not no-referrer: with it a browser sends `Origin: null` on the link page's form, and the
  // origin check could not tell the page from an opaque one. Nothing leaves for another origin.
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

function defaultAssetsDir(): string {
  const main = process.argv[1];
  const candidates = [main ? path.dirname(fs.realpathSync(main)) : '', path.resolve('dist')];
  return candidates.find((dir) => dir && fs.existsSync(path.join(dir, 'review-page.js'))) ?? path.resolve('dist');
}

export class ReviewPageRoutes {
  readonly sessions: BrowserSessions;
  readonly #assetsDir: string;
  readonly #signIn: BrowserSignIn | undefined;
  readonly #publicOrigin: string | undefined;

  constructor(options: ReviewPageOptions = {}) {
    this.sessions = options.sessions ?? new BrowserSessions();
    this.#assetsDir = options.assetsDir ?? defaultAssetsDir();
    this.#signIn = options.signIn;
    this.#publicOrigin = options.publicOrigin?.replace(/\/+$/, '');
  }

  /** Whether the cookie is set Secure: the public origin's scheme when configured, else the browser's own word. */
  #secure(req: http.IncomingMessage): boolean {
    if (this.#publicOrigin) return this.#publicOrigin.startsWith('https:');
    // The browser's Origin names the scheme it used (a TLS proxy in front is invisible otherwise).
    return (req.headers.origin ?? '').startsWith('https:');
  }

  #origin(req: http.IncomingMessage): string {
    if (this.#publicOrigin) return this.#publicOrigin;
    const host = req.headers.host ?? 'localhost';
    const name = new URL(`http://${host}/`).hostname;
    return `${isLoopbackHost(name) ? 'http' : 'https'}://${host}`;
  }

  /**
   * A route under /review/. `canSee` resolves when the principal may see the session (the scoped
   * store's check) and throws its 403/404 otherwise.
   */
  async handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    method: string,
    url: URL,
    canSee: (principal: Principal, sessionId: string) => Promise<void>,
  ): Promise<void> {
    const rest = url.pathname.slice('/review/'.length);
    if (url.pathname.startsWith(ASSETS_PATH)) return this.#asset(res, method, url.pathname.slice(ASSETS_PATH.length));
    if (url.pathname === CALLBACK_PATH) return this.#callback(req, res, url);
    if (url.pathname === SIGN_OUT_PATH) return this.#signOut(req, res, method);
    const [rawId, action, ...extra] = rest.split('/');
    const id = rawId === undefined ? undefined : toLinkSessionId(rawId);
    if (id === undefined || !SESSION_ID.test(id) || extra.length > 0)
      throw new HttpError(404, `no such page: ${url.pathname.slice(0, 200)}`);
    if (action === 'open') {
      if (method !== 'POST') throw new HttpError(405, 'method not allowed here; allowed: POST', { allow: 'POST' });
      return this.#exchange(req, res, id);
    }
    if (action !== undefined) throw new HttpError(404, `no such page: ${url.pathname.slice(0, 200)}`);
    if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'method not allowed here; allowed: GET', { allow: 'GET' });
    const link = url.searchParams.get('link');
    if (link !== null) {
      const html = linkPageHtml({ action: `/review/${id}/open`, token: link.slice(0, 200), style: STYLE });
      return this.#page(res, 200, html, linkPageCsp());
    }
    const cookie = browserSessionId(req);
    const found =
      cookie === undefined
        ? { expired: 'this browser has no review session: open the review link again, or ask for a new one' }
        : await this.sessions.find(cookie);
    if ('expired' in found && this.#signIn) return this.#startSignIn(req, res, `/review/${id}`);
    if ('expired' in found) {
      return this.#page(
        res,
        401,
        messagePageHtml({ title: 'Open the review link again', text: found.expired, style: STYLE }),
        linkPageCsp(),
        {
          'set-cookie': clearedCookies(),
        },
      );
    }
    if (found.sessionId !== null && found.sessionId !== id) {
      return this.#page(
        res,
        403,
        messagePageHtml({
          title: 'Not this session',
          text: 'this browser was let in for another session: open this session’s own review link',
          style: STYLE,
        }),
        linkPageCsp(),
      );
    }
    try {
      await canSee(found.principal, id);
    } catch (err) {
      // Refused or unknown: said as a page; anything else (the store is down) is the server's error.
      if (!(err instanceof SessionsError) || (err.kind !== 'unauthorized' && err.kind !== 'not_found' && err.status !== 403)) throw err;
      const title = err.kind === 'not_found' ? 'No such session' : 'You may not review this session';
      return this.#page(res, err.status ?? 403, messagePageHtml({ title, text: err.message, style: STYLE }), linkPageCsp());
    }
    const nonce = randomBytes(18).toString('base64');
    return this.#page(
      res,
      200,
      reviewPageHtml({
        sessionId: id,
        csrfToken: found.csrfToken,
        signIn: found.sessionId === null ? 'issuer' : 'link',
        nonce,
        script: SCRIPT,
        style: STYLE,
      }),
      reviewPageCsp(nonce),
    );
  }

  /**
   * Who the page is, for the session routes it calls: its browser session, the session it was let
   * in for, and on a POST the CSRF token it was given (a form or fetch from elsewhere has neither).
   */
  async authenticate(req: http.IncomingMessage, method: string, pathname: string): Promise<Principal> {
    const { session } = await this.#browserSession(req, method);
    checkScope(session, pathname);
    return session.principal;
  }

  /** The request's live browser session, and on a POST its CSRF token checked. */
  async #browserSession(req: http.IncomingMessage, method: string): Promise<{ cookie: string; session: BrowserSession }> {
    const cookie = browserSessionId(req);
    if (cookie === undefined) throw new HttpError(401, 'no browser session: open the review link again', {}, 'browser_session_missing');
    const found = await this.sessions.find(cookie);
    if ('expired' in found) throw new HttpError(401, found.expired, {}, 'browser_session_expired');
    if (method !== 'GET' && method !== 'HEAD') {
      const sent = req.headers[CSRF_HEADER];
      if (typeof sent !== 'string' || sent === '' || !sameSecret(sent, found.csrfToken)) {
        throw new HttpError(403, `the request has no valid ${CSRF_HEADER} header (reload the review page)`, {}, 'csrf_refused');
      }
    }
    return { cookie, session: found };
  }

  /** Ends this browser's session everywhere the state is shared (every replica), and forgets the cookie. */
  async #signOut(req: http.IncomingMessage, res: http.ServerResponse, method: string): Promise<void> {
    if (method !== 'POST') throw new HttpError(405, 'method not allowed here; allowed: POST', { allow: 'POST' });
    const { cookie } = await this.#browserSession(req, method);
    await this.sessions.end(cookie);
    const body = JSON.stringify({ signed_out: true });
    res.writeHead(200, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'content-length': String(Buffer.byteLength(body)),
      'set-cookie': clearedCookies(),
    });
    res.end(body);
  }

  /**
   * A link to a session's page for a program holding the token (Copy Review Link). With the shared
   * token it carries a one-time token (the link is the sign-in); for a user of the team's issuer it
   * is the plain page, where the browser signs in.
   */
  async mintLink(
    principal: Principal,
    body: unknown,
    canSee: (principal: Principal, sessionId: string) => Promise<void>,
  ): Promise<{ path: string; url?: string; one_time: boolean; expires_at: string | null }> {
    const parsed = ReviewLinkRequestSchema.safeParse(body);
    if (!parsed.success)
      throw new HttpError(400, `invalid review link request: ${z.prettifyError(parsed.error).replace(/\s*\n\s*/g, '; ')}`);
    const id = toLinkSessionId(parsed.data.session_id);
    await canSee(principal, id);
    // With --public-url the server knows the link people open (behind a proxy or a load balancer):
    // the whole link is given, so no client builds it from the address it happens to dial.
    const withUrl = (path: string) => (this.#publicOrigin ? { path, url: `${this.#publicOrigin}${path}` } : { path });
    if (principal.kind === 'user') return { ...withUrl(`/review/${id}`), one_time: false, expires_at: null };
    const { token, expiresAt } = await this.sessions.mintLink(id, principal);
    return { ...withUrl(`/review/${id}?link=${token}`), one_time: true, expires_at: new Date(expiresAt).toISOString() };
  }

  /** Sends the browser to the issuer, remembering (in a Lax cookie) which sign-in it started. */
  async #startSignIn(req: http.IncomingMessage, res: http.ServerResponse, returnTo: string): Promise<void> {
    const origin = this.#origin(req);
    const { url, state } = await (this.#signIn as BrowserSignIn).start(origin, returnTo);
    res.writeHead(302, {
      location: url.href,
      'set-cookie': signInCookie(state, origin.startsWith('https:'), Math.floor(SIGN_IN_TTL_MS / 1000)),
      'cache-control': 'no-store',
      'content-length': '0',
    });
    res.end();
  }

  /**
   * The issuer's redirect back: the state must be the one this browser's cookie holds (so nobody
   * can sign a victim in as themselves with a callback URL of their own), then the code is
   * exchanged and the access token checked as every API request's is.
   */
  async #callback(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const fail = (text: string) =>
      this.#page(res, 403, messagePageHtml({ title: 'Sign-in did not complete', text, style: STYLE }), linkPageCsp(), {
        'set-cookie': clearedSignInCookie(),
      });
    if (!this.#signIn) return fail('this server signs nobody in through an issuer: open the review link you were given');
    const state = url.searchParams.get('state') ?? '';
    const error = url.searchParams.get('error');
    if (error !== null)
      return fail(`the issuer said: ${error.slice(0, 100)} ${(url.searchParams.get('error_description') ?? '').slice(0, 300)}`);
    const expected = signInState(req);
    if (expected === undefined || !sameSecret(expected, state))
      return fail('this sign-in was not started in this browser; open the review link again');
    let signedIn;
    try {
      signedIn = await this.#signIn.finish(state, url);
    } catch (err) {
      return fail(`the issuer's answer was refused: ${errorMessage(err)}`);
    }
    const started = await this.sessions.start(signedIn.principal, null, signedIn.renewal);
    const secure = this.#origin(req).startsWith('https:');
    const html = signedInPageHtml({ to: signedIn.returnTo, name: signedIn.principal.name ?? signedIn.principal.sub, style: STYLE });
    return this.#page(res, 200, html, linkPageCsp(), {
      'set-cookie': [sessionCookie(started.id, secure, Math.floor(this.sessions.maxMs / 1000)), clearedSignInCookie()],
    });
  }

  async #exchange(req: http.IncomingMessage, res: http.ServerResponse, id: string): Promise<void> {
    const form = new URLSearchParams(await readForm(req));
    const token = form.get('link');
    if (!token) throw new HttpError(400, 'the form has no link token');
    const redeemed = await this.sessions.redeemLink(token, id);
    if ('refused' in redeemed) {
      return this.#page(
        res,
        403,
        messagePageHtml({ title: 'This link does not open the review', text: redeemed.refused, style: STYLE }),
        linkPageCsp(),
      );
    }
    const secure = this.#secure(req);
    res.writeHead(303, {
      location: `/review/${id}`,
      'set-cookie': sessionCookie(redeemed.id, secure, Math.floor(this.sessions.maxMs / 1000)),
      'cache-control': 'no-store',
      'referrer-policy': 'same-origin',
      'content-length': '0',
    });
    res.end();
  }

  #asset(res: http.ServerResponse, method: string, name: string): void {
    if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'method not allowed here; allowed: GET', { allow: 'GET' });
    if (name === 'icon.svg') {
      res.writeHead(200, {
        'content-type': 'image/svg+xml',
        'content-length': String(ICON.length),
        'cache-control': 'max-age=86400',
        'x-content-type-options': 'nosniff',
      });
      res.end(method === 'HEAD' ? undefined : ICON);
      return;
    }
    const type = ASSETS[name];
    if (type === undefined) throw new HttpError(404, `no such asset: ${name.slice(0, 100)}`);
    let body: Buffer;
    try {
      body = fs.readFileSync(path.join(this.#assetsDir, name));
    } catch {
      throw new HttpError(503, `the review page's ${name} is missing from ${this.#assetsDir} (build with npm run build)`);
    }
    res.writeHead(200, {
      'content-type': type,
      'content-length': String(body.length),
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    });
    res.end(method === 'HEAD' ? undefined : body);
  }

  #page(res: http.ServerResponse, status: number, html: string, csp: string, extra: Record<string, string | string[]> = {}): void {
    res.writeHead(status, { ...PAGE_HEADERS, 'content-security-policy': csp, 'content-length': String(Buffer.byteLength(html)), ...extra });
    res.end(html);
  }
}

/** A browser session let in by a link reaches that session's routes only. */
function checkScope(session: BrowserSession, pathname: string): void {
  if (session.sessionId === null) return;
  let id = '';
  try {
    id = toLinkSessionId(decodeURIComponent(pathname.split('/')[3] ?? ''));
  } catch {
    /* refused below */
  }
  if (id !== session.sessionId) {
    throw new HttpError(403, 'this browser session was opened for another session', {}, 'browser_session_scope');
  }
}

async function readForm(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new HttpError(413, `the form exceeds ${MAX_FORM_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

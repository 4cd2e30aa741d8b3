// Which requests may reach the server at all, token or not. The server's clients are programs
// (the extension host, scripts): they send no Origin, no Sec-Fetch-Site (or `none`), a Host
// naming the address they dialled, and JSON. A web page in the person's browser is the attacker
// here: a page on another origin can send a blind `text/plain` POST with no preflight, and a
// DNS-rebinding page (its own name resolving to 127.0.0.1) is same-origin with the server as far
// as the browser knows, so it can read answers. Each of the checks below shuts out one of those,
// in every auth mode: with --insecure-no-auth they are the only thing between a page and the
// sessions, and with a token they keep a page from even probing.
//
// One page is let in: the server's own review page (reviewPage/), and only as itself. guardRequest
// tells it apart by what the browser alone can set (Sec-Fetch-Site, Origin): a request the page
// makes on its own origin reaches the review routes and one session's routes, authenticated by its
// cookie and CSRF token only; a link followed from anywhere may load the page (a GET navigation,
// which changes nothing); every other request from a web page is refused as before.
import * as os from 'node:os';

export interface GuardRefusal {
  status: 400 | 403 | 415;
  message: string;
}

export interface GuardedRequest {
  method?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
}

/** A host name as compared: lower case, no IPv6 brackets, no trailing dot. */
export function normalizeHostName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

function isWildcard(host: string): boolean {
  return host === '' || host === '0.0.0.0' || host === '::';
}

/**
 * The names a Host header may carry for a server bound to `bindHost`: that address, `localhost`
 * (and the loopback addresses `localhost` binds), and any `extra` names the operator allows. A
 * wildcard bind answers on every interface, so each interface address is allowed too.
 */
export function allowedHostNames(bindHost: string, extra: readonly string[] = []): Set<string> {
  const bound = normalizeHostName(bindHost);
  const names = new Set<string>(['localhost', ...extra.map(normalizeHostName)]);
  if (!isWildcard(bound)) names.add(bound);
  if (bound === 'localhost') {
    names.add('127.0.0.1');
    names.add('::1');
  }
  if (isWildcard(bound)) {
    for (const addresses of Object.values(os.networkInterfaces())) {
      for (const address of addresses ?? []) names.add(normalizeHostName(address.address));
    }
  }
  names.delete('');
  return names;
}

function header(request: GuardedRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The host name of a Host header value ("127.0.0.1:8787", "[::1]:8787"), or null if unreadable. */
export function hostHeaderName(value: string): string | null {
  try {
    const url = new URL(`http://${value.trim()}/`);
    if (url.username || url.password || url.pathname !== '/') return null;
    return normalizeHostName(url.hostname);
  } catch {
    return null;
  }
}

/** Why a request is refused before anything else looks at it, or null when it may go on. */
export function refuseRequest(request: GuardedRequest, allowedHosts: ReadonlySet<string>): GuardRefusal | null {
  const host = header(request, 'host');
  if (host === undefined || host.trim() === '') return { status: 400, message: 'the request has no Host header' };
  const name = hostHeaderName(host);
  if (name === null || !allowedHosts.has(name)) {
    return {
      status: 403,
      message: `Host ${JSON.stringify(host.slice(0, 200))} is not this server's address; use one of ${[...allowedHosts].join(', ')} (or start the server with --allowed-host NAME)`,
    };
  }
  if (header(request, 'origin') !== undefined) {
    return { status: 403, message: 'requests from web pages (with an Origin header) are refused; the Sessions API is for programs' };
  }
  const site = header(request, 'sec-fetch-site');
  if (site !== undefined && site.trim().toLowerCase() !== 'none') {
    return {
      status: 403,
      message: `requests a web page starts (Sec-Fetch-Site: ${site.slice(0, 40)}) are refused; the Sessions API is for programs`,
    };
  }
  if ((request.method ?? 'GET').toUpperCase() === 'POST') {
    const type = (header(request, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') {
      return {
        status: 415,
        message: `a POST must have Content-Type: application/json, got ${type ? JSON.stringify(type.slice(0, 100)) : 'none'}`,
      };
    }
  }
  return null;
}

/** How a request that passed the guard must be treated. */
export type GuardVerdict =
  /** A program: the bearer token (or none under --insecure-no-auth); no cookie is read. */
  | { kind: 'program' }
  /** The review page on its own origin: its cookie, and its CSRF token on a POST. */
  | { kind: 'page' }
  /** A person following a link to the review page: a GET that only shows a page. */
  | { kind: 'navigation' }
  | { kind: 'refused'; refusal: GuardRefusal };

/** Where the review page and its assets live; a navigation may reach nothing else. */
export const REVIEW_PAGE_PREFIX = '/review/';

/** The session routes the page calls: the session, its events. Nothing else takes a cookie. */
const PAGE_API = /^\/v1\/sessions\/[^/]+(?:\/events)?$/;

/** The one form the page posts (a one-time link exchanged for the cookie), not JSON. */
const LINK_EXCHANGE = /^\/review\/[^/]+\/open$/;

function sameOriginAsHost(origin: string, host: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host.toLowerCase() === host.trim().toLowerCase();
  } catch {
    return false;
  }
}

/** Whether a browser's Origin is exactly the configured public origin (scheme, host and port). */
function isPublicOrigin(origin: string, publicOrigin: string): boolean {
  try {
    return new URL(origin).origin === publicOrigin;
  } catch {
    return false;
  }
}

/**
 * Whether the request may go on, and as what. Programs are judged by refuseRequest, unchanged.
 * A browser request passes only as the review page on its own origin (Sec-Fetch-Site
 * `same-origin`, or, from a browser without fetch metadata, an Origin equal to the Host; with
 * `publicOrigin` (--public-url), an Origin equal to that one and no other), to the page's routes;
 * or as a top-level GET navigation to the page itself.
 */
export function guardRequest(
  request: GuardedRequest,
  allowedHosts: ReadonlySet<string>,
  pathname: string,
  publicOrigin?: string,
): GuardVerdict {
  const origin = header(request, 'origin');
  const site = header(request, 'sec-fetch-site')?.trim().toLowerCase();
  const fromPage = origin !== undefined || (site !== undefined && site !== 'none');
  const onPage = pathname.startsWith(REVIEW_PAGE_PREFIX);
  if (!fromPage && !onPage) {
    const refusal = refuseRequest(request, allowedHosts);
    return refusal ? { kind: 'refused', refusal } : { kind: 'program' };
  }
  // The Host check first, whatever the browser says: a DNS-rebinding page is same-origin with itself.
  const hostRefusal = refuseRequest({ method: 'GET', headers: { host: header(request, 'host') } }, allowedHosts);
  if (hostRefusal) return { kind: 'refused', refusal: hostRefusal };
  const host = header(request, 'host') ?? '';
  const method = (request.method ?? 'GET').toUpperCase();
  // Behind a proxy the Host may be the proxy's upstream name: the page's origin is the public one.
  const ours = (o: string) => (publicOrigin === undefined ? sameOriginAsHost(o, host) : isPublicOrigin(o, publicOrigin));
  const sameOrigin =
    site === 'same-origin' ? origin === undefined || ours(origin) : site === undefined && origin !== undefined && ours(origin);
  if (sameOrigin && (onPage || PAGE_API.test(pathname))) {
    if (method === 'POST') {
      const type = (header(request, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase();
      const expected = LINK_EXCHANGE.test(pathname) ? 'application/x-www-form-urlencoded' : 'application/json';
      if (type !== expected) {
        return { kind: 'refused', refusal: { status: 415, message: `this POST must have Content-Type: ${expected}` } };
      }
    }
    return { kind: 'page' };
  }
  const mode = header(request, 'sec-fetch-mode')?.trim().toLowerCase();
  if (onPage && (method === 'GET' || method === 'HEAD') && (mode === undefined || mode === 'navigate') && !LINK_EXCHANGE.test(pathname)) {
    return { kind: 'navigation' };
  }
  if (sameOrigin) {
    const from = site !== undefined ? `Sec-Fetch-Site: ${site}` : `Origin ${JSON.stringify(origin?.slice(0, 200))}`;
    return {
      kind: 'refused',
      refusal: {
        status: 403,
        message: `a web page's request (${from}) reaches only the review page's routes, not ${pathname.slice(0, 200)}`,
      },
    };
  }
  if (!fromPage) {
    return {
      kind: 'refused',
      refusal: { status: 403, message: 'from outside the review page, only loading it (a GET navigation) reaches /review/' },
    };
  }
  // Another site's page: refused in the words programs are refused in (an Origin, a Sec-Fetch-Site).
  return {
    kind: 'refused',
    refusal: refuseRequest(request, allowedHosts) ?? { status: 403, message: 'requests from web pages are refused' },
  };
}

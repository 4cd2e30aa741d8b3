// Which requests may reach the server at all, token or not. The server's clients are programs
// (the extension host, scripts): they send no Origin, no Sec-Fetch-Site (or `none`), a Host
// naming the address they dialled, and JSON. A web page in the person's browser is the attacker
// here: a page on another origin can send a blind `text/plain` POST with no preflight, and a
// DNS-rebinding page (its own name resolving to 127.0.0.1) is same-origin with the server as far
// as the browser knows, so it can read answers. Each of the checks below shuts out one of those,
// in every auth mode: with --insecure-no-auth they are the only thing between a page and the
// sessions, and with a token they keep a page from even probing.
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

/** `error.reason` of a refusal by these checks: the request's shape, not its token, was refused. */
export const REQUEST_REFUSED_REASON = 'request_refused';

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

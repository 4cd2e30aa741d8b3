// The review page's cookie: its name, how it is set and read. On https the `__Host-` prefix makes
// the browser refuse it unless it is Secure, for Path=/ and without a Domain, so a sibling host or
// a plain-http page cannot plant or overwrite it.
import type * as http from 'node:http';

export const SECURE_COOKIE = '__Host-ultraplan-review';
export const PLAIN_COOKIE = 'ultraplan-review';
/** A cookie value we set: base64url, 43 characters. Anything else is not ours. */
const VALUE = /^[A-Za-z0-9_-]{20,100}$/;

/** The cookie holding a sign-in's state between the redirect to the issuer and its return. */
export const SIGN_IN_COOKIE = 'ultraplan-signin';

/** The value of the first cookie named one of `names` that looks like one of ours, or undefined. */
function readCookie(req: http.IncomingMessage, names: readonly string[]): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (names.includes(name) && VALUE.test(value)) return value;
  }
  return undefined;
}

/** The browser session id a request carries, or undefined. */
export function browserSessionId(req: http.IncomingMessage): string | undefined {
  return readCookie(req, [SECURE_COOKIE, PLAIN_COOKIE]);
}

/** The state of the sign-in this browser started, or undefined. */
export function signInState(req: http.IncomingMessage): string | undefined {
  return readCookie(req, [SIGN_IN_COOKIE]);
}

/**
 * Set-Cookie for a sign-in under way: SameSite=Lax, because the issuer's redirect back is a
 * navigation from another site, on which a Strict cookie is not sent.
 */
export function signInCookie(state: string, secure: boolean, maxAgeSeconds: number): string {
  return `${SIGN_IN_COOKIE}=${state}; Path=/review/auth; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

export function clearedSignInCookie(): string {
  return `${SIGN_IN_COOKIE}=; Path=/review/auth; Max-Age=0; HttpOnly; SameSite=Lax`;
}

/** Set-Cookie for a new browser session: HttpOnly, SameSite=Strict, Secure on https. */
export function sessionCookie(id: string, secure: boolean, maxAgeSeconds: number): string {
  const name = secure ? SECURE_COOKIE : PLAIN_COOKIE;
  return `${name}=${id}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** Set-Cookie headers that remove both names (sign-out, an expired session). */
export function clearedCookies(): string[] {
  return [
    `${PLAIN_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict`,
    `${SECURE_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure`,
  ];
}

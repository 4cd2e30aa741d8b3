// What the extension can tell about a server token before sending it: when a JWT (an OIDC
// issuer's token) expires. Read from its payload without verifying it: the server verifies; this
// only lets a person hear "expired, here is how to renew" instead of a bare refusal.
import * as z from 'zod';

/** The `error.reason` of the server's 401 for an expired user token. */
export const TOKEN_EXPIRED_REASON = 'token_expired';

/** The command a person runs to paste a new token. */
export const SET_SERVER_TOKEN_COMMAND = 'Ultraplan: Set Server Token…';

const ExpirySchema = z.looseObject({ exp: z.number().finite() });

/** When the token expires, if it is a JWT with `exp`; null for any other token (a shared secret). */
export function tokenExpiresAt(token: string): Date | null {
  const parts = token.trim().split('.');
  if (parts.length !== 3 || !parts[1]) return null;
  let payload: unknown;
  try {
    payload = JSON.parse(decodeBase64Url(parts[1]));
  } catch {
    return null;
  }
  const parsed = ExpirySchema.safeParse(payload);
  return parsed.success ? new Date(parsed.data.exp * 1000) : null;
}

/** The message for a token that expired: what happened and what to run. */
export function expiredTokenMessage(origin: string, expiredAt: Date | null): string {
  const when = expiredAt ? ` at ${expiredAt.toISOString()}` : '';
  return `Your token for ${origin} expired${when}. Run "${SET_SERVER_TOKEN_COMMAND}" to paste a new one.`;
}

/** The expiry message when `token` has expired by `now`, else null. */
export function expiredTokenProblem(token: string, origin: string, now: Date = new Date()): string | null {
  const expiresAt = tokenExpiresAt(token);
  return expiresAt !== null && expiresAt.getTime() <= now.getTime() ? expiredTokenMessage(origin, expiresAt) : null;
}

function decodeBase64Url(text: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw new Error('not base64url');
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

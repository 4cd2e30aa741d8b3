// The tokens of one sign-in, as kept in secret storage: parsed once when read back, with what
// a refresh or a sign-out needs to reach the issuer again (its address, our client id, the
// resource), so neither depends on the server answering its metadata at that moment.
import * as z from 'zod';

export const StoredTokensSchema = z.strictObject({
  issuer: z.string().min(1),
  client_id: z.string().min(1),
  resource: z.string().optional(),
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  /** When the access token was received and when it expires, epoch milliseconds. */
  obtained_at: z.number().int().nonnegative(),
  expires_at: z.number().int().nonnegative(),
  scope: z.string().optional(),
  /** The signed-in person: the ID token's `sub`, and a name to show. */
  account: z.strictObject({ id: z.string().min(1), label: z.string().min(1) }),
});
export type StoredTokens = z.infer<typeof StoredTokensSchema>;

/** An access token without `expires_in` is taken to last this long (a conservative guess). */
export const DEFAULT_ACCESS_TOKEN_LIFETIME_MS = 5 * 60_000;
const MAX_REFRESH_MARGIN_MS = 60_000;

/**
 * How long before expiry a token is renewed: a quarter of its lifetime, at most a minute, so a
 * 10-minute token is renewed at 9 minutes and a 4-second one at 3 s.
 */
export function refreshMarginMs(tokens: Pick<StoredTokens, 'obtained_at' | 'expires_at'>): number {
  return Math.min(MAX_REFRESH_MARGIN_MS, Math.max(0, tokens.expires_at - tokens.obtained_at) / 4);
}

/** When to renew the access token, epoch ms (never before `now`). */
export function refreshDueAt(tokens: Pick<StoredTokens, 'obtained_at' | 'expires_at'>): number {
  return tokens.expires_at - refreshMarginMs(tokens);
}

export function isFresh(tokens: Pick<StoredTokens, 'obtained_at' | 'expires_at'>, now: number): boolean {
  return now < refreshDueAt(tokens);
}

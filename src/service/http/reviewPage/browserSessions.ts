// The review page's sign-in state, as the routes use it: one-time links (single-user server) and
// browser sessions (a random id in an HttpOnly cookie, with a synchronizer CSRF token the page
// sends in a header on every POST). The state itself is kept by a BrowserStateStore (memory, or
// PostgreSQL for replicas) under digests of the secrets only. The CSRF token is derived from the
// cookie's secret (an HMAC keyed by it), so nothing stored can rebuild either.
// A browser signed in through the issuer is who its access token said for that token's lifetime
// only: then the first request renews the principal with the refresh token (sealed under a key
// from the cookie), so groups the person lost at the issuer are lost on the page too, and a
// grant the issuer ended ends the browser session.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Principal, UserPrincipal } from '../../identity/sessionOwner';
import { MAX_PENDING_LINKS, MemoryBrowserState, type BrowserStateStore, type PrincipalRenewal } from '../../identity/browserState';
import { sealingKey, sealText, unsealText } from '../../identity/sealedText';
import { PrincipalRenewalRefused, type IssuedTokens } from '../../identity/browserSignIn';
import { errorMessage } from '../../../core/errors';

/** A one-time link works once, within this time. */
export const LINK_TTL_MS = 10 * 60 * 1000;
/** A browser session ends after this long without a request… */
export const SESSION_IDLE_MS = 30 * 60 * 1000;
/** …and after this long in any case (a new link or sign-in starts a new one). */
export const SESSION_MAX_MS = 12 * 60 * 60 * 1000;

export interface BrowserSession {
  readonly principal: Principal;
  /** The session a one-time link was for: the only one this browser session may open; null: any the principal sees. */
  readonly sessionId: string | null;
  /** Sent to the page in its HTML, echoed in X-CSRF-Token on every POST. */
  readonly csrfToken: string;
}

export interface BrowserSessionTimes {
  linkTtlMs?: number;
  idleMs?: number;
  maxMs?: number;
  /** The clock of the memory store (tests move it); PostgreSQL uses the database's. */
  now?: () => number;
  /** Where the state lives (default: this process's memory). */
  store?: BrowserStateStore;
  /** Reads who the person is now with a refresh token (BrowserSignIn.renew); throws PrincipalRenewalRefused when the issuer refuses. */
  renew?: (refreshToken: string) => Promise<{ principal: UserPrincipal; renewal: IssuedTokens }>;
  /** How long one request holds a due renewal before another may try (default 30 s). */
  renewalLeaseMs?: number;
  log?: (line: string) => void;
}

const RENEWAL_LEASE_MS = 30_000;
const REFRESH_PURPOSE = 'review page refresh token';

export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The key a secret is stored under: its SHA-256, so the store never holds the secret. */
export function digest(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}

/** Equal strings, compared in time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(digest(a));
  const y = Buffer.from(digest(b));
  return timingSafeEqual(x, y);
}

/** The CSRF token of the browser session whose cookie holds `id`. */
function csrfTokenOf(id: string): string {
  return createHmac('sha256', id).update('ultraplan review page csrf', 'utf8').digest('base64url');
}

export class BrowserSessions {
  readonly linkTtlMs: number;
  readonly idleMs: number;
  readonly maxMs: number;
  readonly store: BrowserStateStore;
  readonly #times: BrowserSessionTimes;

  constructor(times: BrowserSessionTimes = {}) {
    this.linkTtlMs = times.linkTtlMs ?? LINK_TTL_MS;
    this.idleMs = times.idleMs ?? SESSION_IDLE_MS;
    this.maxMs = times.maxMs ?? SESSION_MAX_MS;
    this.store = times.store ?? new MemoryBrowserState(times.now);
    this.#times = times;
  }

  /** A one-time link token for `sessionId`, redeemable once by a browser within linkTtlMs. */
  async mintLink(sessionId: string, principal: Principal): Promise<{ token: string; expiresAt: number }> {
    const token = newSecret();
    const expiresAt = Date.now() + this.linkTtlMs;
    if (!(await this.store.putLink(digest(token), { sessionId, principal }, this.linkTtlMs)))
      throw new Error(`too many review links wait to be opened (${MAX_PENDING_LINKS}); try again in a few minutes`);
    return { token, expiresAt };
  }

  /**
   * Takes a link token (it never works again, valid or not for this session) and starts a browser
   * session for it; the reason when the link is unknown, used, expired or for another session.
   */
  async redeemLink(token: string, sessionId: string): Promise<{ id: string; session: BrowserSession } | { refused: string }> {
    const link = await this.store.takeLink(digest(token));
    if (!link) return { refused: 'this review link was already used or is not one this server gave; ask for a new link' };
    if (!link.live) return { refused: 'this review link has expired; ask for a new link' };
    if (link.sessionId !== sessionId) return { refused: 'this review link is for another session' };
    return this.start(link.principal, link.sessionId);
  }

  /**
   * A new browser session (after a link or a sign-in): its cookie value and its state. `tokens`:
   * a sign-in's, whose principal then holds for the access token's lifetime only.
   */
  async start(principal: Principal, sessionId: string | null, tokens?: IssuedTokens): Promise<{ id: string; session: BrowserSession }> {
    const id = newSecret();
    await this.store.putSession(digest(id), { principal, sessionId }, this.idleMs, this.maxMs, tokens && renewalOf(id, tokens));
    return { id, session: { principal, sessionId, csrfToken: csrfTokenOf(id) } };
  }

  /** The live session a cookie names (its idle time restarts, its principal renewed when due), or why there is none. */
  async find(id: string): Promise<BrowserSession | { expired: string }> {
    const key = digest(id);
    const found = await this.store.touchSession(key, this.idleMs);
    if (!found) return { expired: 'no browser session, or it has expired or was signed out: open a new review link or sign in again' };
    let principal = found.principal;
    if (found.renewalDue) {
      const renewed = await this.#renew(id, key);
      if ('expired' in renewed) return renewed;
      principal = renewed.principal ?? principal;
    }
    return { principal, sessionId: found.sessionId, csrfToken: csrfTokenOf(id) };
  }

  /**
   * Renews a due principal, when this request wins the claim (else the one that did renews it,
   * and this one goes on with the principal it has). A refusal, or no way to renew, ends the
   * session; a failure on the way keeps it until the claim lapses and the next request tries again.
   */
  async #renew(id: string, key: string): Promise<{ principal: Principal | undefined } | { expired: string }> {
    const claimed = await this.store.claimRenewal(key, this.#times.renewalLeaseMs ?? RENEWAL_LEASE_MS);
    if (!claimed) return { principal: undefined };
    const renew = this.#times.renew;
    if (claimed.sealedRefresh === null || !renew) {
      await this.store.endSession(key);
      return { expired: 'your sign-in has expired: sign in again' };
    }
    try {
      const { principal, renewal } = await renew(unsealText(sealingKey(id, REFRESH_PURPOSE), claimed.sealedRefresh));
      await this.store.renewPrincipal(key, principal, renewalOf(id, renewal));
      return { principal };
    } catch (err) {
      if (err instanceof PrincipalRenewalRefused) {
        await this.store.endSession(key);
        return { expired: `your sign-in ended at the issuer (${errorMessage(err)}): sign in again` };
      }
      this.#times.log?.(`review page: renewing a browser session's sign-in failed (${errorMessage(err)}); tried again later`);
      return { principal: undefined };
    }
  }

  /** Ends the session a cookie names, on every replica that shares the store. */
  async end(id: string): Promise<void> {
    await this.store.endSession(digest(id));
  }
}

/** The refresh token sealed under a key only this cookie gives, and how long the principal holds. */
function renewalOf(id: string, tokens: IssuedTokens): PrincipalRenewal {
  return {
    sealedRefresh: tokens.refreshToken === undefined ? null : sealText(sealingKey(id, REFRESH_PURPOSE), tokens.refreshToken),
    ttlMs: tokens.ttlMs,
  };
}

// Where the review page's sign-in state lives: one-time links, browser sessions and sign-ins
// under way at the issuer. Every key is a digest of the secret the browser holds (the cookie, the
// link token, the sign-in state), never the secret itself, so a dump of this state lets nobody in.
// The single-process server keeps it in memory (MemoryBrowserState); the team server in
// PostgreSQL (store/postgres/browserState.ts), so every replica knows every browser, a link works
// once across all of them, and a sign-out on one holds on all.
import * as z from 'zod';
import type { Principal } from './sessionOwner';

export const PrincipalSchema: z.ZodType<Principal> = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('shared_token') }),
  z.strictObject({ kind: z.literal('anonymous') }),
  z.strictObject({
    kind: z.literal('user'),
    sub: z.string().min(1),
    name: z.string().nullable(),
    groups: z.array(z.string()),
    reviewGroups: z.array(z.string()),
    admin: z.boolean(),
  }),
]);

export interface StoredLink {
  readonly sessionId: string;
  readonly principal: Principal;
}

export interface StoredBrowserSession {
  readonly principal: Principal;
  /** The session a one-time link was for: the only one this browser session may open; null: any the principal sees. */
  readonly sessionId: string | null;
}

/**
 * How a signed-in browser session's principal is renewed: it holds for `ttlMs` (its access
 * token's lifetime), then is read again from the issuer with the refresh token, sealed under a
 * key from the browser's cookie (null: none; the session then ends when the principal is due).
 */
export interface PrincipalRenewal {
  readonly sealedRefresh: string | null;
  readonly ttlMs: number;
}

/** How long each kind of entry lives, in milliseconds. */
export interface BrowserStateTimes {
  linkTtlMs: number;
  /** A browser session ends after this long without a request… */
  idleMs: number;
  /** …and after this long in any case. */
  maxMs: number;
  signInTtlMs: number;
}

export interface BrowserStateStore {
  /** Keeps a link under `key` until it is taken or expires; false when too many wait. */
  putLink(key: string, link: StoredLink, ttlMs: number): Promise<boolean>;
  /** Removes the link under `key` and returns it (live: not expired); exactly one caller gets it. */
  takeLink(key: string): Promise<(StoredLink & { live: boolean }) | null>;
  /**
   * A new session: it ends `idleMs` after its last request, and `maxMs` after now in any case;
   * with `renewal`, its principal is due for renewal after `renewal.ttlMs`.
   */
  putSession(key: string, session: StoredBrowserSession, idleMs: number, maxMs: number, renewal?: PrincipalRenewal): Promise<void>;
  /** The live session under `key`, its idle time restarted; null when unknown, ended or expired. */
  touchSession(key: string, idleMs: number): Promise<(StoredBrowserSession & { renewalDue: boolean }) | null>;
  /**
   * Claims a due renewal of the session's principal for `leaseMs`, so one request (on one replica)
   * renews it while the others go on with the principal they have: the sealed refresh token (null
   * when there is none), or null when the renewal is not due or another request claimed it.
   */
  claimRenewal(key: string, leaseMs: number): Promise<{ sealedRefresh: string | null } | null>;
  /** The renewed principal, and when it is due again. */
  renewPrincipal(key: string, principal: Principal, renewal: PrincipalRenewal): Promise<void>;
  endSession(key: string): Promise<void>;
  /** Keeps a sealed sign-in under `key`; false when too many are under way. */
  putSignIn(key: string, sealed: string, ttlMs: number): Promise<boolean>;
  /** Removes the sign-in under `key` and returns it when it had not expired; exactly one caller gets it. */
  takeSignIn(key: string): Promise<string | null>;
}

export const MAX_PENDING_LINKS = 10_000;
export const MAX_PENDING_SIGN_INS = 10_000;
const MAX_SESSIONS = 10_000;

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

interface MemorySession extends StoredBrowserSession {
  idleUntil: number;
  readonly endsAt: number;
  principal: Principal;
  sealedRefresh: string | null;
  /** When the principal is due for renewal; null: never (a one-time link's). */
  principalUntil: number | null;
}

/** The state of one process: bounded in count, expired entries swept on every write. */
export class MemoryBrowserState implements BrowserStateStore {
  readonly #links = new Map<string, Expiring<StoredLink>>();
  readonly #signIns = new Map<string, Expiring<string>>();
  readonly #sessions = new Map<string, MemorySession>();

  constructor(private readonly now: () => number = Date.now) {}

  async putLink(key: string, link: StoredLink, ttlMs: number): Promise<boolean> {
    sweepExpiring(this.#links, this.now());
    if (this.#links.size >= MAX_PENDING_LINKS) return false;
    this.#links.set(key, { value: link, expiresAt: this.now() + ttlMs });
    return true;
  }

  async takeLink(key: string): Promise<(StoredLink & { live: boolean }) | null> {
    const entry = this.#links.get(key);
    this.#links.delete(key);
    return entry ? { ...entry.value, live: entry.expiresAt > this.now() } : null;
  }

  async putSession(key: string, session: StoredBrowserSession, idleMs: number, maxMs: number, renewal?: PrincipalRenewal): Promise<void> {
    this.#sweepSessions();
    if (this.#sessions.size >= MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next();
      if (!oldest.done) this.#sessions.delete(oldest.value);
    }
    const now = this.now();
    const endsAt = now + maxMs;
    this.#sessions.set(key, {
      principal: session.principal,
      sessionId: session.sessionId,
      idleUntil: Math.min(now + idleMs, endsAt),
      endsAt,
      sealedRefresh: renewal?.sealedRefresh ?? null,
      principalUntil: renewal ? now + renewal.ttlMs : null,
    });
  }

  async touchSession(key: string, idleMs: number): Promise<(StoredBrowserSession & { renewalDue: boolean }) | null> {
    const session = this.#sessions.get(key);
    if (!session) return null;
    const now = this.now();
    if (session.idleUntil <= now) {
      this.#sessions.delete(key);
      return null;
    }
    session.idleUntil = Math.min(now + idleMs, session.endsAt);
    const renewalDue = session.principalUntil !== null && session.principalUntil <= now;
    return { principal: session.principal, sessionId: session.sessionId, renewalDue };
  }

  async claimRenewal(key: string, leaseMs: number): Promise<{ sealedRefresh: string | null } | null> {
    const session = this.#sessions.get(key);
    const now = this.now();
    if (!session || session.idleUntil <= now || session.principalUntil === null || session.principalUntil > now) return null;
    session.principalUntil = now + leaseMs;
    return { sealedRefresh: session.sealedRefresh };
  }

  async renewPrincipal(key: string, principal: Principal, renewal: PrincipalRenewal): Promise<void> {
    const session = this.#sessions.get(key);
    if (!session) return;
    session.principal = principal;
    session.sealedRefresh = renewal.sealedRefresh;
    session.principalUntil = this.now() + renewal.ttlMs;
  }

  async endSession(key: string): Promise<void> {
    this.#sessions.delete(key);
  }

  async putSignIn(key: string, sealed: string, ttlMs: number): Promise<boolean> {
    sweepExpiring(this.#signIns, this.now());
    if (this.#signIns.size >= MAX_PENDING_SIGN_INS) return false;
    this.#signIns.set(key, { value: sealed, expiresAt: this.now() + ttlMs });
    return true;
  }

  async takeSignIn(key: string): Promise<string | null> {
    const entry = this.#signIns.get(key);
    this.#signIns.delete(key);
    return entry && entry.expiresAt > this.now() ? entry.value : null;
  }

  /** Entries held now (tests: an ended or expired entry is forgotten). */
  get size(): { links: number; sessions: number; signIns: number } {
    return { links: this.#links.size, sessions: this.#sessions.size, signIns: this.#signIns.size };
  }

  #sweepSessions(): void {
    const now = this.now();
    for (const [key, s] of this.#sessions) if (s.idleUntil <= now) this.#sessions.delete(key);
  }
}

function sweepExpiring<T>(map: Map<string, Expiring<T>>, now: number): void {
  for (const [key, entry] of map) if (entry.expiresAt <= now) map.delete(key);
}

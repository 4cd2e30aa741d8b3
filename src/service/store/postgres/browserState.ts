// The review page's sign-in state in PostgreSQL, shared by every replica: a browser signed in on
// one is signed in on all, a one-time link redeemed on one is spent on all (DELETE … RETURNING
// hands a row to exactly one statement, however many replicas race for it), and a sign-out holds
// everywhere. Keys are digests of the browser's secrets (browserState.ts); expiry is decided by
// the database's clock in each statement, and expired rows are swept every few minutes.
import type { Pool } from 'pg';
import * as z from 'zod';
import {
  MAX_PENDING_LINKS,
  MAX_PENDING_SIGN_INS,
  PrincipalSchema,
  type BrowserStateStore,
  type PrincipalRenewal,
  type StoredBrowserSession,
  type StoredLink,
} from '../../identity/browserState';
import type { Principal } from '../../identity/sessionOwner';
import { query } from './database';
import { errorMessage } from '../../../core/errors';

export const BROWSER_STATE_MIGRATION_SQL = `
  -- One-time review links (the single-user server's Copy Review Link): the token's SHA-256 only.
  CREATE TABLE review_links (
    token_hash text PRIMARY KEY CHECK (length(token_hash) = 43),
    session_id text NOT NULL,
    principal jsonb NOT NULL,
    expires_at timestamptz NOT NULL
  );
  CREATE INDEX review_links_expiry ON review_links (expires_at);
  CREATE INDEX review_links_session ON review_links (session_id);

  -- Browser sessions of the review page: the cookie's SHA-256 only.
  CREATE TABLE browser_sessions (
    id_hash text PRIMARY KEY CHECK (length(id_hash) = 43),
    principal jsonb NOT NULL,
    -- The one session a link let this browser in for; null: any its principal sees.
    session_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    idle_until timestamptz NOT NULL,
    ends_at timestamptz NOT NULL
  );
  CREATE INDEX browser_sessions_expiry ON browser_sessions (idle_until);
  CREATE INDEX browser_sessions_session ON browser_sessions (session_id) WHERE session_id IS NOT NULL;

  -- Sign-ins under way at the issuer: the state's digest, and the PKCE verifier and nonce sealed
  -- with a key derived from the state, which only the browser's cookie holds.
  CREATE TABLE browser_sign_ins (
    state_hash text PRIMARY KEY CHECK (length(state_hash) = 43),
    sealed text NOT NULL,
    expires_at timestamptz NOT NULL
  );
  CREATE INDEX browser_sign_ins_expiry ON browser_sign_ins (expires_at);
`;

/**
 * A signed-in browser's principal holds for its access token's lifetime, then is read again from
 * the issuer with the refresh token, sealed under a key only the browser's cookie gives.
 */
export const BROWSER_PRINCIPAL_RENEWAL_MIGRATION_SQL = `
  ALTER TABLE browser_sessions ADD COLUMN sealed_refresh text, ADD COLUMN principal_until timestamptz;
`;

/** The tables holding rows of one session, for retention (fairShares.ts). */
export const BROWSER_STATE_SESSION_TABLES = ['review_links', 'browser_sessions'] as const;

export const BROWSER_STATE_SWEEP_MS = 5 * 60 * 1000;

const LinkRowSchema = z.object({ session_id: z.string(), principal: PrincipalSchema, live: z.boolean() });
const SessionRowSchema = z.object({ principal: PrincipalSchema, session_id: z.string().nullable(), renewal_due: z.boolean() });
const ClaimRowSchema = z.object({ sealed_refresh: z.string().nullable() });
const SignInRowSchema = z.object({ sealed: z.string(), live: z.boolean() });

/** Milliseconds as an SQL interval, from a parameter. */
const ms = (param: string) => `make_interval(secs => ${param}::double precision / 1000)`;

export class PostgresBrowserState implements BrowserStateStore {
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool,
    private readonly log: (line: string) => void,
    sweepMs = BROWSER_STATE_SWEEP_MS,
  ) {
    this.#timer = setInterval(() => {
      this.sweepExpired().catch((err: unknown) => this.log(`review page: the sweep of expired sign-ins failed (${errorMessage(err)})`));
    }, sweepMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async putLink(key: string, link: StoredLink, ttlMs: number): Promise<boolean> {
    const rows = await query(
      this.pool,
      `INSERT INTO review_links (token_hash, session_id, principal, expires_at)
       SELECT $1, $2, $3::jsonb, now() + ${ms('$4')}
       WHERE (SELECT count(*) FROM review_links WHERE expires_at > now()) < $5
       RETURNING 1 AS put`,
      [key, link.sessionId, JSON.stringify(link.principal), ttlMs, MAX_PENDING_LINKS],
    );
    return rows.length === 1;
  }

  async takeLink(key: string): Promise<(StoredLink & { live: boolean }) | null> {
    const rows = await query(
      this.pool,
      'DELETE FROM review_links WHERE token_hash = $1 RETURNING session_id, principal, expires_at > now() AS live',
      [key],
    );
    if (rows.length === 0) return null;
    const row = LinkRowSchema.parse(rows[0]);
    return { sessionId: row.session_id, principal: row.principal, live: row.live };
  }

  async putSession(key: string, session: StoredBrowserSession, idleMs: number, maxMs: number, renewal?: PrincipalRenewal): Promise<void> {
    await query(
      this.pool,
      `INSERT INTO browser_sessions (id_hash, principal, session_id, idle_until, ends_at, sealed_refresh, principal_until)
       VALUES ($1, $2::jsonb, $3, now() + least(${ms('$4')}, ${ms('$5')}), now() + ${ms('$5')}, $6,
               CASE WHEN $7::double precision IS NULL THEN NULL ELSE now() + ${ms('$7')} END)`,
      [key, JSON.stringify(session.principal), session.sessionId, idleMs, maxMs, renewal?.sealedRefresh ?? null, renewal?.ttlMs ?? null],
    );
  }

  /**
   * The live session, its idle time restarted. Every page request asks, so the row is rewritten
   * only when its idle deadline would move by more than a tenth of the idle time (at most 30 s).
   */
  async touchSession(key: string, idleMs: number): Promise<(StoredBrowserSession & { renewalDue: boolean }) | null> {
    const rows = await query(
      this.pool,
      `WITH live AS (
         SELECT id_hash, principal, session_id, idle_until, ends_at, coalesce(principal_until <= now(), false) AS renewal_due
         FROM browser_sessions
         WHERE id_hash = $1 AND idle_until > now() AND ends_at > now()
       ), touched AS (
         UPDATE browser_sessions b SET idle_until = least(now() + ${ms('$2')}, b.ends_at)
         FROM live
         WHERE b.id_hash = live.id_hash
           AND live.idle_until < least(now() + ${ms('$2')}, live.ends_at) - least(interval '30 seconds', ${ms('$2')} / 10)
       )
       SELECT principal, session_id, renewal_due FROM live`,
      [key, idleMs],
      'browser_session_touch',
    );
    if (rows.length === 0) return null;
    const row = SessionRowSchema.parse(rows[0]);
    return { principal: row.principal, sessionId: row.session_id, renewalDue: row.renewal_due };
  }

  /** One statement: of requests on any replica racing for a due renewal, exactly one gets the row. */
  async claimRenewal(key: string, leaseMs: number): Promise<{ sealedRefresh: string | null } | null> {
    const rows = await query(
      this.pool,
      `UPDATE browser_sessions SET principal_until = now() + ${ms('$2')}
       WHERE id_hash = $1 AND principal_until <= now() AND idle_until > now() AND ends_at > now()
       RETURNING sealed_refresh`,
      [key, leaseMs],
    );
    if (rows.length === 0) return null;
    return { sealedRefresh: ClaimRowSchema.parse(rows[0]).sealed_refresh };
  }

  async renewPrincipal(key: string, principal: Principal, renewal: PrincipalRenewal): Promise<void> {
    await query(
      this.pool,
      `UPDATE browser_sessions SET principal = $2::jsonb, sealed_refresh = $3, principal_until = now() + ${ms('$4')} WHERE id_hash = $1`,
      [key, JSON.stringify(principal), renewal.sealedRefresh, renewal.ttlMs],
    );
  }

  async endSession(key: string): Promise<void> {
    await query(this.pool, 'DELETE FROM browser_sessions WHERE id_hash = $1', [key]);
  }

  async putSignIn(key: string, sealed: string, ttlMs: number): Promise<boolean> {
    const rows = await query(
      this.pool,
      `INSERT INTO browser_sign_ins (state_hash, sealed, expires_at)
       SELECT $1, $2, now() + ${ms('$3')}
       WHERE (SELECT count(*) FROM browser_sign_ins WHERE expires_at > now()) < $4
       RETURNING 1 AS put`,
      [key, sealed, ttlMs, MAX_PENDING_SIGN_INS],
    );
    return rows.length === 1;
  }

  async takeSignIn(key: string): Promise<string | null> {
    const rows = await query(this.pool, 'DELETE FROM browser_sign_ins WHERE state_hash = $1 RETURNING sealed, expires_at > now() AS live', [
      key,
    ]);
    if (rows.length === 0) return null;
    const row = SignInRowSchema.parse(rows[0]);
    return row.live ? row.sealed : null;
  }

  /** Deletes every expired link, session and sign-in; returns how many rows went. */
  async sweepExpired(): Promise<number> {
    const rows = await query<{ n: string }>(
      this.pool,
      `WITH a AS (DELETE FROM review_links WHERE expires_at <= now() RETURNING 1),
            b AS (DELETE FROM browser_sessions WHERE idle_until <= now() OR ends_at <= now() RETURNING 1),
            c AS (DELETE FROM browser_sign_ins WHERE expires_at <= now() RETURNING 1)
       SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b) + (SELECT count(*) FROM c) AS n`,
    );
    return Number(rows[0]?.n ?? 0);
  }
}

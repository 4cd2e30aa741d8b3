// Keeps one sign-in's access token valid: renews it with the refresh token before it expires (a
// timer, and on demand when asked for a token that is due), one renewal at a time, and stores
// each new pair (issuers rotate refresh tokens: the old one stops working). A renewal the issuer
// refuses (the refresh token revoked or expired) ends the sign-in; one that fails on the way
// (network, 5xx) is tried again with backoff while the access token still lasts.
// Every window of the person keeps its own keeper over the one stored pair. An issuer that rotates
// refresh tokens ends the whole grant when a rotated-out one comes back (reuse detection, OAuth 2.0
// Security BCP 4.14.2), so a keeper first takes a newer pair another window stored, and the
// timers of windows holding the same pair are spread over part of the margin.
import { isFresh, refreshDueAt, refreshMarginMs, type StoredTokens } from './tokens';
import { errorMessage } from '../../core/errors';

export interface TokenStore {
  load(): Promise<StoredTokens | undefined>;
  save(tokens: StoredTokens): Promise<void>;
  clear(): Promise<void>;
}

/** Thrown by a renewal the issuer refused for good (RFC 6749 5.2 `invalid_grant`). */
export class SignInEndedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignInEndedError';
  }
}

export interface TokenKeeperOptions {
  store: TokenStore;
  /** Exchanges the refresh token for new tokens; throws SignInEndedError when the issuer refuses it. */
  renew: (tokens: StoredTokens) => Promise<StoredTokens>;
  /** Tells the owner the tokens changed (renewed) or are gone (undefined). */
  onChange?: (tokens: StoredTokens | undefined) => void;
  /** Tells the owner the issuer refused the renewal: the sign-in is over (after onChange(undefined)), and why. */
  onEnded?: (reason: string) => void;
  log?: (line: string) => void;
  now?: () => number;
  /** First retry after a failed renewal; doubled each time, at most 30 s. */
  retryBaseMs?: number;
}

const MAX_RETRY_MS = 30_000;
/** Node's timers hold at most 2^31-1 ms; a longer wait is taken in steps. */
const MAX_TIMER_MS = 2_147_483_647;

export class TokenKeeper {
  private tokens: StoredTokens | undefined;
  private timer: NodeJS.Timeout | undefined;
  private renewal: Promise<StoredTokens | undefined> | undefined;
  private failures = 0;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly options: TokenKeeperOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Reads the stored tokens and schedules their renewal; undefined when nobody is signed in. */
  async start(): Promise<StoredTokens | undefined> {
    this.tokens = await this.options.store.load();
    this.schedule();
    return this.tokens;
  }

  /** After a sign-in: stores the tokens and keeps them valid from now on. */
  async adopt(tokens: StoredTokens): Promise<void> {
    this.tokens = tokens;
    this.failures = 0;
    await this.options.store.save(tokens);
    this.schedule();
    this.options.onChange?.(tokens);
  }

  get current(): StoredTokens | undefined {
    return this.tokens;
  }

  /** A valid access token: the stored one while fresh, else a renewed one; undefined when signed out. */
  async accessToken(): Promise<string | undefined> {
    const tokens = this.tokens;
    if (!tokens) return undefined;
    if (isFresh(tokens, this.now())) return tokens.access_token;
    const renewed = await this.renewNow();
    return renewed?.access_token;
  }

  /** Renews now (one renewal at a time). */
  renewNow(): Promise<StoredTokens | undefined> {
    this.renewal ??= this.renew().finally(() => {
      this.renewal = undefined;
    });
    return this.renewal;
  }

  /** Forgets the tokens (the caller revokes them first) and stops renewing. */
  async forget(): Promise<void> {
    this.cancelTimer();
    this.tokens = undefined;
    await this.options.store.clear();
    this.options.onChange?.(undefined);
  }

  /** Stops the timer; the stored tokens stay. */
  dispose(): void {
    this.stopped = true;
    this.cancelTimer();
  }

  private async renew(): Promise<StoredTokens | undefined> {
    const tokens = this.tokens;
    if (!tokens) return undefined;
    if (!tokens.refresh_token) {
      // Nothing to renew with: the access token lasts until it expires, then the sign-in ends.
      if (this.now() < tokens.expires_at) return tokens;
      await this.forget();
      return undefined;
    }
    try {
      const stored = await this.options.store.load();
      if (this.tokens !== tokens) return this.tokens; // signed out or in again meanwhile
      const fromAnotherWindow = stored !== undefined && renewedElsewhere(stored, tokens) && isFresh(stored, this.now());
      const renewed = fromAnotherWindow ? stored : await this.options.renew(tokens);
      if (this.tokens !== tokens) return this.tokens;
      this.failures = 0;
      this.tokens = renewed;
      if (!fromAnotherWindow) await this.options.store.save(renewed);
      this.schedule();
      this.options.onChange?.(renewed);
      return renewed;
    } catch (err) {
      if (this.tokens !== tokens) return this.tokens;
      const reason = errorMessage(err);
      if (err instanceof SignInEndedError) {
        this.options.log?.(`sign-in: the issuer refused the refresh token (${reason}); signed out`);
        await this.forget();
        this.options.onEnded?.(reason);
        return undefined;
      }
      this.failures += 1;
      const wait = Math.min(MAX_RETRY_MS, (this.options.retryBaseMs ?? 1000) * 2 ** (this.failures - 1));
      this.options.log?.(`sign-in: renewing the access token failed (${reason}); trying again in ${wait} ms`);
      this.schedule(wait);
      // Still usable until it expires: a passing network failure does not sign anyone out.
      return this.now() < tokens.expires_at ? tokens : undefined;
    }
  }

  private schedule(afterMs?: number): void {
    this.cancelTimer();
    const tokens = this.tokens;
    if (!tokens || this.stopped || !tokens.refresh_token) return;
    // Somewhere in the first half of the margin, so two windows' timers rarely meet.
    const spread = (Math.random() * refreshMarginMs(tokens)) / 2;
    const wait = afterMs ?? Math.max(0, refreshDueAt(tokens) - spread - this.now());
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        if (wait > MAX_TIMER_MS) this.schedule();
        else void this.renewNow();
      },
      Math.min(wait, MAX_TIMER_MS),
    );
    // A pending renewal never keeps the process alive on its own.
    this.timer.unref();
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** The stored pair is a later one of the same sign-in: another window renewed it. */
function renewedElsewhere(stored: StoredTokens, held: StoredTokens): boolean {
  return (
    stored.issuer === held.issuer &&
    stored.client_id === held.client_id &&
    stored.account.id === held.account.id &&
    stored.obtained_at > held.obtained_at
  );
}

// Signing a person in to the review page through the team's issuer: the Authorization Code flow
// with PKCE (RFC 7636), as the public client the extension uses (its id from --oidc-client-id), the
// redirect back to this server's /review/auth/callback. The access token it returns is checked by
// the same OidcAuthenticator as every API request, so the page is exactly who the API would say:
// the same sub, groups, review groups and admin. A pending sign-in is bound to the browser that
// started it (a cookie holding its state), lives a few minutes, and is used once. It is kept in
// the BrowserStateStore (PostgreSQL on the team server: the issuer may send the browser back to
// another replica) under the state's digest, sealed with a key derived from the state, so the
// stored row gives neither the PKCE verifier nor the nonce to whoever reads the database. The
// refresh token the issuer answers with lets the browser session renew who the person is (their
// groups) when the access token would have expired (reviewPage/browserSessions.ts).
import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import * as z from 'zod';
import { isLoopbackHost, type AuthMetadata } from '../../core/authMetadata';
import type { UserPrincipal } from './sessionOwner';
import { MAX_PENDING_SIGN_INS, MemoryBrowserState, type BrowserStateStore } from './browserState';
import { sealText, unsealText } from './sealedText';

/** A sign-in not finished within this time is forgotten. */
export const SIGN_IN_TTL_MS = 10 * 60 * 1000;
/** Where the issuer sends the browser back, on this server. */
export const CALLBACK_PATH = '/review/auth/callback';
/** Where the page signs its browser out (a POST with its CSRF token). */
export const SIGN_OUT_PATH = '/review/auth/sign-out';

const PendingSignInSchema = z.strictObject({
  verifier: z.string().min(43).max(128),
  nonce: z.string().min(1).max(200),
  /** The page to show once signed in (a path on this server). */
  returnTo: z.string().startsWith('/').max(400),
  redirectUri: z.url({ protocol: /^https?$/ }),
});
type PendingSignIn = z.infer<typeof PendingSignInSchema>;

function keyOf(state: string, purpose: 'lookup' | 'seal'): Buffer {
  return createHash('sha256').update(`ultraplan sign-in ${purpose}\0${state}`, 'utf8').digest();
}

/** Sealed under a key only the browser's state gives. */
function seal(state: string, pending: PendingSignIn): string {
  return sealText(keyOf(state, 'seal'), JSON.stringify(pending));
}

function unseal(state: string, sealed: string): PendingSignIn {
  return PendingSignInSchema.parse(JSON.parse(unsealText(keyOf(state, 'seal'), sealed)));
}

export interface BrowserSignInOptions {
  metadata: AuthMetadata;
  /** Checks an access token as every request's is checked (OidcAuthenticator.verify). */
  verify: (accessToken: string) => Promise<UserPrincipal>;
  /** Where sign-ins under way are kept (default: this process's memory). */
  state?: BrowserStateStore;
}

export class BrowserSignIn {
  #config: Promise<oidc.Configuration> | null = null;
  readonly #state: BrowserStateStore;

  constructor(private readonly options: BrowserSignInOptions) {
    this.#state = options.state ?? new MemoryBrowserState();
  }

  #discover(): Promise<oidc.Configuration> {
    if (this.#config) return this.#config;
    const issuer = new URL(this.options.metadata.issuer);
    const insecure = issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname);
    this.#config = oidc.discovery(issuer, this.options.metadata.client_id, { token_endpoint_auth_method: 'none' }, oidc.None(), {
      timeout: 10,
      // http only for an issuer on this machine (a test issuer, a port-forward), as the extension allows.
      execute: insecure ? [oidc.allowInsecureRequests] : [],
    });
    // A failed discovery is tried again by the next sign-in.
    this.#config.catch(() => {
      this.#config = null;
    });
    return this.#config;
  }

  /** Starts a sign-in: the issuer's URL to send the browser to, and the state that names it. */
  async start(origin: string, returnTo: string): Promise<{ url: URL; state: string }> {
    const config = await this.#discover();
    const state = oidc.randomState();
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const redirectUri = `${origin}${CALLBACK_PATH}`;
    const { metadata } = this.options;
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: metadata.scopes.join(' '),
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...(metadata.resource ? { resource: metadata.resource } : {}),
    });
    const pending = seal(state, { verifier, nonce, returnTo, redirectUri });
    if (!(await this.#state.putSignIn(keyOf(state, 'lookup').toString('base64url'), pending, SIGN_IN_TTL_MS)))
      throw new Error(`too many sign-ins are under way (${MAX_PENDING_SIGN_INS}); try again in a few minutes`);
    return { url, state };
  }

  /**
   * Finishes the sign-in `state` names (taken: it never works twice) with the issuer's answer
   * (`callback`: the URL the browser came back to), and returns who signed in and where to go.
   */
  async finish(state: string, callback: URL): Promise<{ principal: UserPrincipal; returnTo: string; renewal: IssuedTokens }> {
    const sealed = await this.#state.takeSignIn(keyOf(state, 'lookup').toString('base64url'));
    if (sealed === null) throw new Error('this sign-in is unknown, was finished already or took too long; open the review link again');
    const pending = unseal(state, sealed);
    const current = new URL(pending.redirectUri);
    current.search = callback.search;
    const response = await oidc.authorizationCodeGrant(
      await this.#discover(),
      current,
      { expectedState: state, pkceCodeVerifier: pending.verifier, expectedNonce: pending.nonce, idTokenExpected: true },
      this.options.metadata.resource ? { resource: this.options.metadata.resource } : {},
    );
    return { principal: await this.options.verify(response.access_token), returnTo: pending.returnTo, renewal: issued(response) };
  }

  /**
   * Who the person is now, from a new access token for `refreshToken`: the issuer's groups as they
   * stand today. PrincipalRenewalRefused when the issuer refuses the refresh token (the grant
   * revoked, the person removed or disabled).
   */
  async renew(refreshToken: string): Promise<{ principal: UserPrincipal; renewal: IssuedTokens }> {
    const response = await oidc
      .refreshTokenGrant(
        await this.#discover(),
        refreshToken,
        this.options.metadata.resource ? { resource: this.options.metadata.resource } : {},
      )
      .catch((err: unknown) => {
        if (err instanceof oidc.ResponseBodyError && (err.error === 'invalid_grant' || err.error === 'unauthorized_client')) {
          throw new PrincipalRenewalRefused(err.error_description ?? err.error);
        }
        throw err;
      });
    return { principal: await this.options.verify(response.access_token), renewal: issued(response, refreshToken) };
  }
}

/** What a browser session renews its principal with: the refresh token (when the issuer gave one), and how long the access token lasts. */
export interface IssuedTokens {
  readonly refreshToken: string | undefined;
  readonly ttlMs: number;
}

/** The issuer refused to renew (RFC 6749 5.2 `invalid_grant`): the browser session ends. */
export class PrincipalRenewalRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PrincipalRenewalRefused';
  }
}

/** An access token without `expires_in` is taken to last this long. */
const DEFAULT_TOKEN_TTL_MS = 5 * 60 * 1000;

function issued(response: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers, previousRefresh?: string): IssuedTokens {
  const expiresIn = response.expiresIn();
  return {
    // An issuer that does not rotate answers a refresh without a new one: the old one stays good.
    refreshToken: response.refresh_token ?? previousRefresh,
    ttlMs: expiresIn === undefined ? DEFAULT_TOKEN_TTL_MS : expiresIn * 1000,
  };
}

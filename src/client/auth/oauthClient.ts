// OAuth 2.0 / OpenID Connect for a public client, with `openid-client` (fetch and jose, no
// vscode): the issuer's discovery, the authorization code flow with PKCE (S256) and state
// through a loopback redirect, the device authorization grant (RFC 8628), refresh and
// revocation (RFC 7009). Every token request names the server's resource (RFC 8707) when the
// server's metadata gives one, so the access token is a JWT for the server's audience.
// This module and what it imports are one chunk of the bundle, loaded at the first sign-in,
// renewal or sign-out.
import * as oidc from 'openid-client';
import { isLoopbackHost, type AuthMetadata } from '../../core/authMetadata';
import { listenForRedirect, SignInCancelledError } from './loopbackRedirect';
import { DEFAULT_ACCESS_TOKEN_LIFETIME_MS, type StoredTokens } from './tokens';
import { SignInEndedError } from './tokenKeeper';

export { SignInCancelledError } from './loopbackRedirect';
export { SignInEndedError } from './tokenKeeper';

/** What the issuer is to be reached with: the server's metadata, or what a sign-in stored. */
export type IssuerSettings = Pick<AuthMetadata, 'issuer' | 'client_id' | 'resource'>;

export interface OAuthClientOptions {
  /** Seconds for each request to the issuer (default 30). */
  timeoutSeconds?: number;
  now?: () => number;
}

export interface BrowserSignInOptions {
  scopes: string[];
  /** Opens the authorization URL in the person's browser. */
  openBrowser: (url: URL) => Promise<void>;
  /**
   * The redirect the browser is sent to, when it differs from the listener's own address (a
   * port forwarded by VS Code Remote: `vscode.env.asExternalUri`). Must stay a loopback URL the
   * issuer accepts.
   */
  externalRedirect?: (redirectUri: string) => Promise<string>;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface DeviceSignIn {
  /** The code the person types at the verification page. */
  readonly userCode: string;
  readonly verificationUri: string;
  /** The verification page with the code already in it, when the issuer offers one. */
  readonly verificationUriComplete: string | undefined;
  readonly expiresInSeconds: number;
  /** Polls the issuer until the person has approved (or refused, or the code expired). */
  complete(signal?: AbortSignal): Promise<StoredTokens>;
}

const DEFAULT_BROWSER_TIMEOUT_MS = 5 * 60_000;

export class OAuthClient {
  private constructor(
    private readonly config: oidc.Configuration,
    private readonly settings: IssuerSettings,
    private readonly now: () => number,
  ) {}

  /** Reads the issuer's discovery document; its `issuer` must be the one configured. */
  static async discover(settings: IssuerSettings, options: OAuthClientOptions = {}): Promise<OAuthClient> {
    const issuer = new URL(settings.issuer);
    const insecure = issuer.protocol === 'http:';
    if (insecure && !isLoopbackHost(issuer.hostname)) throw new Error(`the issuer ${settings.issuer} must use https`);
    const config = await oidc.discovery(issuer, settings.client_id, { token_endpoint_auth_method: 'none' }, oidc.None(), {
      timeout: options.timeoutSeconds ?? 30,
      // http is accepted only for an issuer on this machine (a test issuer, a port-forward).
      execute: insecure ? [oidc.allowInsecureRequests] : [],
    });
    return new OAuthClient(config, settings, options.now ?? Date.now);
  }

  /** Whether the issuer publishes a device authorization endpoint. */
  get offersDeviceFlow(): boolean {
    return typeof this.config.serverMetadata().device_authorization_endpoint === 'string';
  }

  /**
   * The code flow: listens on a loopback port, opens the browser at the issuer, waits for the
   * redirect with this sign-in's state, and exchanges the code with its PKCE verifier.
   */
  async signInWithBrowser(options: BrowserSignInOptions): Promise<StoredTokens> {
    const state = oidc.randomState();
    const verifier = oidc.randomPKCECodeVerifier();
    const loopback = await listenForRedirect({
      expectedState: state,
      timeoutMs: options.timeoutMs ?? DEFAULT_BROWSER_TIMEOUT_MS,
      signal: options.signal,
    });
    try {
      const redirectUri = options.externalRedirect ? await options.externalRedirect(loopback.redirectUri) : loopback.redirectUri;
      const url = oidc.buildAuthorizationUrl(this.config, {
        redirect_uri: redirectUri,
        scope: options.scopes.join(' '),
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        ...this.resourceParameter(),
      });
      await options.openBrowser(url);
      const received = await loopback.callback;
      return await this.exchangeCode(redirectUri, received, { state, verifier });
    } finally {
      loopback.close();
    }
  }

  /**
   * Exchanges the authorization response for tokens. `redirectUri` is the one the request named
   * (the token request must repeat it); `received` is where the browser landed.
   */
  async exchangeCode(redirectUri: string, received: URL, checks: { state: string; verifier: string }): Promise<StoredTokens> {
    const current = new URL(redirectUri);
    current.search = received.search;
    const response = await oidc.authorizationCodeGrant(
      this.config,
      current,
      { expectedState: checks.state, pkceCodeVerifier: checks.verifier, idTokenExpected: true },
      this.resourceParameter(),
    );
    return this.stored(response, undefined);
  }

  /** Starts the device flow: the code to show, and the wait for the person's approval. */
  async startDeviceSignIn(scopes: string[]): Promise<DeviceSignIn> {
    const started = await oidc.initiateDeviceAuthorization(this.config, { scope: scopes.join(' '), ...this.resourceParameter() });
    return {
      userCode: started.user_code,
      verificationUri: started.verification_uri,
      verificationUriComplete: started.verification_uri_complete,
      expiresInSeconds: started.expires_in,
      complete: async (signal) => {
        const polling = oidc.pollDeviceAuthorizationGrant(this.config, started, this.resourceParameter(), { signal });
        try {
          // The poll notices an abort only after its interval (seconds): a cancel answers at once.
          const response = await (signal ? Promise.race([polling, cancelled(signal)]) : polling);
          return this.stored(response, undefined);
        } catch (err) {
          polling.catch(() => {});
          if (signal?.aborted) throw new SignInCancelledError('sign-in cancelled');
          throw err;
        }
      },
    };
  }

  /** New tokens for the stored refresh token; SignInEndedError when the issuer refuses it. */
  async refresh(tokens: StoredTokens): Promise<StoredTokens> {
    if (!tokens.refresh_token) throw new SignInEndedError('no refresh token');
    try {
      const response = await oidc.refreshTokenGrant(this.config, tokens.refresh_token, this.resourceParameter());
      return this.stored(response, tokens);
    } catch (err) {
      if (err instanceof oidc.ResponseBodyError && (err.error === 'invalid_grant' || err.error === 'unauthorized_client')) {
        throw new SignInEndedError(err.error_description ?? err.error);
      }
      throw err;
    }
  }

  /**
   * Revokes the refresh token, which ends the grant at most issuers, then the access token. A JWT
   * access token is checked by the server on its own, so it lasts until it expires wherever the
   * issuer cannot revoke it (`unsupported_token_type`); that is why access tokens are short-lived.
   */
  async revoke(tokens: StoredTokens): Promise<void> {
    if (typeof this.config.serverMetadata().revocation_endpoint !== 'string') throw new Error('the issuer has no revocation endpoint');
    if (tokens.refresh_token) await oidc.tokenRevocation(this.config, tokens.refresh_token, { token_type_hint: 'refresh_token' });
    try {
      await oidc.tokenRevocation(this.config, tokens.access_token, { token_type_hint: 'access_token' });
    } catch (err) {
      if (!(err instanceof oidc.ResponseBodyError && err.error === 'unsupported_token_type')) throw err;
    }
  }

  private resourceParameter(): Record<string, string> {
    return this.settings.resource ? { resource: this.settings.resource } : {};
  }

  /** The response as stored; a renewal keeps the account and, when none came back, the refresh token. */
  private stored(
    response: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers,
    previous: StoredTokens | undefined,
  ): StoredTokens {
    const now = this.now();
    const expiresIn = response.expiresIn();
    const claims = response.claims();
    const account = previous?.account ?? (claims ? accountOf(claims) : undefined);
    if (!account) throw new Error('the issuer answered without an ID token: nobody to sign in as');
    const refreshToken = response.refresh_token ?? previous?.refresh_token;
    return {
      issuer: this.settings.issuer,
      client_id: this.settings.client_id,
      ...(this.settings.resource ? { resource: this.settings.resource } : {}),
      access_token: response.access_token,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
      obtained_at: now,
      expires_at: now + (expiresIn === undefined ? DEFAULT_ACCESS_TOKEN_LIFETIME_MS : expiresIn * 1000),
      ...(response.scope ? { scope: response.scope } : {}),
      account,
    };
  }
}

function accountOf(claims: oidc.IDToken): StoredTokens['account'] {
  const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);
  return { id: claims.sub, label: text(claims.email) ?? text(claims.preferred_username) ?? text(claims.name) ?? claims.sub };
}

function cancelled(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    const stop = () => reject(new SignInCancelledError('sign-in cancelled'));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
}

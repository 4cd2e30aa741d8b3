// A real OpenID provider for tests: `oidc-provider` (the certified Node implementation) on
// 127.0.0.1, with the client the extension signs in as (public, PKCE, loopback redirect, device
// code, refresh tokens), two users with passwords, and its own login and consent pages, which a
// scripted browser fills in as a person would. Access tokens are JWTs for the session server's
// audience (RFC 8707 resource indicators), signed with the provider's key and verifiable through
// its JWKS, which is what the server's OidcAuthenticator checks.
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { errorMessage } from '../../src/core/errors';

export const TEST_CLIENT_ID = 'ultraplan-vscode';
/** The session server's audience: a URI, as a resource indicator must be. */
export const TEST_AUDIENCE = 'https://ultraplan.test/api';
/** The scope the resource server defines for its API. */
export const TEST_API_SCOPE = 'sessions';
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface TestUser {
  password: string;
  email: string;
  name: string;
  groups: string[];
}

export const TEST_USERS: Record<string, TestUser> = {
  alice: { password: 'alice-correct-horse', email: 'alice@example.com', name: 'Alice', groups: ['reviewers'] },
  bob: { password: 'bob-battery-staple', email: 'bob@example.com', name: 'Bob', groups: ['developers', 'reviewers'] },
};

export interface OpenidProviderOptions {
  /** Lifetime of access tokens, seconds (default 600). */
  accessTokenTtl?: number;
  /** Offer the device authorization grant (default true). */
  deviceFlow?: boolean;
  /** The port on 127.0.0.1 (default: a free one). */
  port?: number;
}

export interface OpenidProvider {
  /** The issuer, as tokens carry it in `iss`. */
  readonly issuer: string;
  readonly clientId: string;
  readonly audience: string;
  /** The pages and endpoints requested, by method and path, in order. */
  readonly requests: string[];
  /** Logins refused for a wrong password, by login name. */
  readonly refusedLogins: string[];
  /** Every answer of the token endpoint, in order: the grant asked for, and what it gave. */
  readonly tokenResponses: TokenResponse[];
  /**
   * Ends every grant the person gave (as an administrator revoking a session does): their
   * refresh tokens stop working, so the next renewal is refused with `invalid_grant`. Returns
   * how many grants ended.
   */
  endGrants(login: string): Promise<number>;
  close(): Promise<void>;
}

export interface TokenResponse {
  /** `refresh_token`, `authorization_code`, or DEVICE_CODE_GRANT. */
  grantType: string;
  /** `issued`, or the OAuth error code (`invalid_grant`, `authorization_pending`, …). */
  outcome: string;
  /** Epoch ms. */
  at: number;
}

export async function startOpenidProvider(options: OpenidProviderOptions = {}): Promise<OpenidProvider> {
  const accessTokenTtl = options.accessTokenTtl ?? 600;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'op-key-1', alg: 'RS256', use: 'sig' };
  const requests: string[] = [];
  const refusedLogins: string[] = [];
  const tokenResponses: TokenResponse[] = [];
  /** Grant id → the account that gave it. */
  const grants = new Map<string, string>();

  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const grantTypes = ['authorization_code', 'refresh_token', ...(options.deviceFlow === false ? [] : [DEVICE_CODE_GRANT])];
  const configuration: Configuration = {
    clients: [
      {
        client_id: TEST_CLIENT_ID,
        client_name: 'Ultraplan for VS Code',
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        // RFC 8252 7.3: for a native client the provider accepts any port on these loopback URIs:
        // the extension's, and the review page's on a server started by the tests.
        redirect_uris: ['http://127.0.0.1/callback', 'http://127.0.0.1/review/auth/callback'],
        grant_types: grantTypes,
        response_types: ['code'],
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
      groups: ['groups'],
    },
    findAccount: (_ctx, id) => {
      const user = TEST_USERS[id];
      if (!user) return undefined;
      return {
        accountId: id,
        claims: () => ({ sub: id, email: user.email, email_verified: true, name: user.name, preferred_username: id, groups: user.groups }),
      };
    },
    // The server reads who the caller is from the access token alone.
    extraTokenClaims: (_ctx, token) => {
      const user = 'accountId' in token && typeof token.accountId === 'string' ? TEST_USERS[token.accountId] : undefined;
      return user ? { email: user.email, name: user.name, groups: user.groups } : undefined;
    },
    // Like most company issuers: a client allowed the refresh grant gets a refresh token without
    // forcing the consent page on every sign-in.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: { AccessToken: accessTokenTtl, DeviceCode: 300, Interaction: 600, Grant: 3600, Session: 3600, RefreshToken: 86_400 },
    features: {
      devInteractions: { enabled: false },
      deviceFlow: { enabled: options.deviceFlow !== false },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => TEST_AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== TEST_AUDIENCE) throw new errors.InvalidTarget();
          return {
            scope: TEST_API_SCOPE,
            audience: TEST_AUDIENCE,
            accessTokenTTL: accessTokenTtl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    renderError: (ctx: KoaContextWithOIDC, out) => {
      ctx.type = 'html';
      ctx.body = page('Error', `<p id="error">${escapeHtml(String(out.error))}: ${escapeHtml(String(out.error_description ?? ''))}</p>`);
    },
  };
  const provider = new Provider(issuer, configuration);
  const providerHandler = provider.callback();
  provider.on('grant.success', (ctx) => {
    tokenResponses.push({ grantType: String(ctx.oidc.params?.grant_type), outcome: 'issued', at: Date.now() });
  });
  provider.on('grant.error', (ctx, err) => {
    tokenResponses.push({ grantType: String(ctx.oidc.params?.grant_type), outcome: err.error, at: Date.now() });
  });
  provider.on('grant.saved', (grant) => {
    if (grant.accountId) grants.set(grant.jti, grant.accountId);
  });

  handler = (req, res) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    requests.push(`${req.method} ${path}`);
    const interaction = /^\/interaction\/([\w-]+)(?:\/(login|confirm|abort))?$/.exec(path);
    if (!interaction) return providerHandler(req, res);
    interactionPage(provider, req, res, interaction[2], refusedLogins).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/html' });
      res.end(page('Error', `<p id="error">${escapeHtml(errorMessage(err))}</p>`));
    });
  };

  return {
    issuer,
    clientId: TEST_CLIENT_ID,
    audience: TEST_AUDIENCE,
    requests,
    refusedLogins,
    tokenResponses,
    endGrants: async (login) => {
      let ended = 0;
      for (const [id, accountId] of grants) {
        if (accountId !== login) continue;
        await Promise.all([provider.RefreshToken.revokeByGrantId(id), provider.AccessToken.revokeByGrantId(id)]);
        const grant = await provider.Grant.find(id);
        if (grant) {
          await grant.destroy();
          ended++;
        }
        grants.delete(id);
      }
      return ended;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The provider's login and consent pages: what a person sees between the redirects. */
async function interactionPage(
  provider: Provider,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  action: string | undefined,
  refusedLogins: string[],
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const { uid, prompt, params } = details;
  if (req.method === 'GET' && action === undefined) {
    return sendHtml(res, prompt.name === 'login' ? loginForm(uid) : consentForm(uid, String(params.scope ?? '')));
  }
  if (req.method !== 'POST') return sendHtml(res, page('Error', '<p id="error">method not allowed</p>'), 405);
  const form = new URLSearchParams(await readBody(req));
  if (action === 'abort') {
    await provider.interactionFinished(
      req,
      res,
      { error: 'access_denied', error_description: 'the user refused' },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  if (action === 'login' && prompt.name === 'login') {
    const login = form.get('login') ?? '';
    const user = TEST_USERS[login];
    if (!user || form.get('password') !== user.password) {
      refusedLogins.push(login);
      return sendHtml(res, loginForm(uid, 'Wrong login or password.'), 200);
    }
    await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
    return;
  }
  if (action === 'confirm' && prompt.name === 'consent') {
    const accountId = details.session?.accountId;
    if (!accountId) throw new Error('consent without a login');
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId, clientId: String(params.client_id) });
    if (!grant) throw new Error('the grant is gone');
    const missing = prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
      grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  throw new Error(`no ${action ?? 'page'} for the ${prompt.name} prompt`);
}

function loginForm(uid: string, error?: string): string {
  return page(
    'Sign in',
    `${error ? `<p id="error">${escapeHtml(error)}</p>` : ''}
<form id="login" method="post" action="/interaction/${uid}/login">
  <input type="text" name="login" autocomplete="username">
  <input type="password" name="password" autocomplete="current-password">
  <button type="submit">Sign in</button>
</form>`,
  );
}

function consentForm(uid: string, scope: string): string {
  return page(
    'Authorize Ultraplan',
    `<p>Ultraplan for VS Code asks for: <span id="scopes">${escapeHtml(scope)}</span></p>
<form id="consent" method="post" action="/interaction/${uid}/confirm"><button type="submit">Allow</button></form>
<form id="abort" method="post" action="/interaction/${uid}/abort"><button type="submit">Deny</button></form>`,
  );
}

function page(title: string, body: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

function sendHtml(res: http.ServerResponse, html: string, status = 200): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(html);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 64 * 1024) throw new Error('form too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

// The extension's sign-in against a real OpenID provider (oidc-provider, test/support/openidProvider.ts):
// the code flow with PKCE through the loopback redirect, the device flow, renewal before expiry,
// revocation at sign-out, a forged redirect refused, and the access tokens it gets accepted by the
// server's own OidcAuthenticator. The "person" is a scripted browser filling in the provider's
// login and consent pages.
import assert from 'node:assert/strict';
import { SignInCancelledError, listenForRedirect } from '../../../src/client/auth/loopbackRedirect';
import { OAuthClient, SignInEndedError } from '../../../src/client/auth/oauthClient';
import { TokenKeeper, type TokenStore } from '../../../src/client/auth/tokenKeeper';
import type { StoredTokens } from '../../../src/client/auth/tokens';
import { OidcAuthenticator } from '../../../src/service/identity/oidcAuthenticator';
import { startOpenidProvider, TEST_API_SCOPE, TEST_AUDIENCE, TEST_USERS, type OpenidProvider } from '../../support/openidProvider';
import { ScriptedBrowser, type BrowserPage } from '../../support/scriptedBrowser';

const SCOPES = ['openid', 'offline_access', 'email', 'profile', 'groups', TEST_API_SCOPE];

function authenticatorFor(provider: OpenidProvider, audience = TEST_AUDIENCE): OidcAuthenticator {
  return new OidcAuthenticator({
    issuer: provider.issuer,
    audience,
    jwksUrl: null,
    groupsClaim: 'groups',
    reviewGroups: ['reviewers'],
    adminGroup: null,
    clockSkewSeconds: 0,
  });
}

/** Signs in on the provider's pages: the login form, then the consent form. */
async function signInOnPages(browser: ScriptedBrowser, start: BrowserPage, login: string): Promise<BrowserPage> {
  assert.match(start.html, /name="password"/, `not a login page: ${start.url}\n${start.html.slice(0, 500)}`);
  const consent = await browser.submit(start, 'login', { login, password: TEST_USERS[login]?.password ?? '' });
  assert.match(
    consent.html,
    /Authorize Ultraplan/,
    `not the consent page: ${consent.url} ${consent.status}\n${consent.html.slice(0, 600)}`,
  );
  return browser.submit(consent, 'consent');
}

function memoryStore(): TokenStore & { saved: StoredTokens[]; cleared: number } {
  let value: StoredTokens | undefined;
  const store = {
    saved: [] as StoredTokens[],
    cleared: 0,
    load: () => Promise.resolve(value),
    save: (tokens: StoredTokens) => {
      value = tokens;
      store.saved.push(tokens);
      return Promise.resolve();
    },
    clear: () => {
      value = undefined;
      store.cleared += 1;
      return Promise.resolve();
    },
  };
  return store;
}

describe('sign-in with the team issuer (a real OpenID provider)', function () {
  this.timeout(60_000);
  let provider: OpenidProvider;
  let client: OAuthClient;

  before(async () => {
    provider = await startOpenidProvider({ accessTokenTtl: 4 });
    client = await OAuthClient.discover({ issuer: provider.issuer, client_id: provider.clientId, resource: TEST_AUDIENCE });
  });
  after(async () => {
    await provider?.close();
  });

  /** The code flow as a person does it; `beforeBrowsing` runs once the loopback listens. */
  async function browserSignIn(login: string, beforeBrowsing?: (authorizationUrl: URL) => Promise<void>) {
    const browser = new ScriptedBrowser();
    let authorizationUrl: URL | undefined;
    let browsing: Promise<BrowserPage> | undefined;
    let pageFailure: unknown;
    const cancel = new AbortController();
    const signingIn = client.signInWithBrowser({
      scopes: SCOPES,
      timeoutMs: 30_000,
      signal: cancel.signal,
      openBrowser: async (url) => {
        authorizationUrl = url;
        await beforeBrowsing?.(url);
        browsing = browser.open(url.href).then(async (page) => {
          // A wrong password first: the provider's page says so and asks again.
          const again = await browser.submit(page, 'login', { login, password: 'wrong' });
          assert.match(again.html, /Wrong login or password/);
          return signInOnPages(browser, again, login);
        });
        // A failure on the pages fails the test at once instead of leaving the sign-in waiting.
        browsing.catch((err: unknown) => {
          pageFailure = err;
          cancel.abort();
        });
      },
    });
    const tokens = await signingIn.catch((err: unknown) => {
      throw pageFailure ?? err;
    });
    assert.ok(authorizationUrl && browsing);
    return { tokens, authorizationUrl, landed: await browsing, browser };
  }

  it('signs in with the code flow and PKCE through the loopback redirect; the server accepts the access token', async () => {
    const { tokens, authorizationUrl, landed } = await browserSignIn('alice');
    const params = authorizationUrl.searchParams;
    assert.equal(params.get('code_challenge_method'), 'S256');
    assert.match(params.get('code_challenge') ?? '', /^[\w-]{43}$/);
    assert.match(params.get('redirect_uri') ?? '', /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.equal(params.get('resource'), TEST_AUDIENCE);
    assert.ok((params.get('state') ?? '').length >= 32);
    // The browser ended on our loopback page, which then stopped listening.
    assert.match(landed.url, /^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/);
    assert.match(landed.html, /Signed in/);
    await assert.rejects(fetch(landed.url), /fetch failed/);
    assert.deepEqual(provider.refusedLogins.slice(-1), ['alice']);

    assert.deepEqual(tokens.account, { id: 'alice', label: 'alice@example.com' });
    assert.ok(tokens.refresh_token, 'no refresh token');
    assert.ok(tokens.expires_at - tokens.obtained_at <= 4000);
    const principal = await authenticatorFor(provider).verify(tokens.access_token);
    assert.deepEqual(principal, {
      kind: 'user',
      sub: 'alice',
      name: 'alice@example.com',
      groups: ['reviewers'],
      reviewGroups: ['reviewers'],
      admin: false,
    });
    // For this server's audience only.
    await assert.rejects(authenticatorFor(provider, 'https://another.test/api').verify(tokens.access_token), /aud/);
  });

  it('refuses a redirect carrying another state and still completes the real one', async () => {
    let forged: Response | undefined;
    const { tokens } = await browserSignIn('bob', async (url) => {
      const redirect = new URL(url.searchParams.get('redirect_uri') ?? '');
      redirect.search = new URLSearchParams({ code: 'attacker-code', state: 'not-the-state', iss: provider.issuer }).toString();
      forged = await fetch(redirect);
    });
    assert.equal(forged?.status, 400);
    assert.match(await forged.text(), /does not belong to the sign-in in progress/);
    assert.equal(tokens.account.id, 'bob');
  });

  it('refuses an authorization response whose state differs, before any token request', async () => {
    const tokenRequests = () => provider.requests.filter((r) => r === 'POST /token').length;
    const before = tokenRequests();
    const received = new URL(`http://127.0.0.1:1/callback?code=abc&state=evil&iss=${encodeURIComponent(provider.issuer)}`);
    await assert.rejects(
      client.exchangeCode('http://127.0.0.1:1/callback', received, { state: 'expected', verifier: 'v'.repeat(43) }),
      (err: Error) => {
        assert.match(String(err.cause instanceof Error ? err.cause.message : err.message), /"state"/);
        return true;
      },
    );
    assert.equal(tokenRequests(), before);
  });

  it('stops listening when the sign-in is cancelled or times out', async () => {
    const controller = new AbortController();
    const listening = await listenForRedirect({ expectedState: 's', timeoutMs: 30_000, signal: controller.signal });
    controller.abort();
    await assert.rejects(listening.callback, SignInCancelledError);
    await assert.rejects(fetch(listening.redirectUri), /fetch failed/);
    const timed = await listenForRedirect({ expectedState: 's', timeoutMs: 50 });
    await assert.rejects(timed.callback, /no answer from the browser/);
  });

  it('renews the access token before it expires, and the renewed token is accepted', async () => {
    const { tokens } = await browserSignIn('alice');
    const store = memoryStore();
    const changes: (StoredTokens | undefined)[] = [];
    let renewed: (value: StoredTokens | undefined) => void = () => {};
    const firstChange = new Promise<StoredTokens | undefined>((resolve) => (renewed = resolve));
    const keeper = new TokenKeeper({
      store,
      renew: (t) => client.refresh(t),
      onChange: (t) => {
        changes.push(t);
        if (t !== tokens) renewed(t);
      },
    });
    try {
      await keeper.adopt(tokens);
      const next = await firstChange;
      const at = Date.now();
      assert.ok(next, 'signed out instead of renewed');
      assert.ok(at < tokens.expires_at, `renewed ${at - tokens.expires_at} ms after expiry`);
      assert.notEqual(next.access_token, tokens.access_token);
      assert.ok(next.refresh_token && next.refresh_token !== tokens.refresh_token, 'the refresh token was not rotated');
      assert.deepEqual(next.account, tokens.account);
      assert.equal(store.saved.at(-1), next);
      assert.equal(await keeper.accessToken(), next.access_token);
      assert.equal((await authenticatorFor(provider).verify(next.access_token)).sub, 'alice');
      // The rotated-out refresh token is refused by the issuer.
      await assert.rejects(client.refresh(tokens), SignInEndedError);
    } finally {
      keeper.dispose();
    }
  });

  it('signs out by revoking: the refresh token stops working and the keeper forgets the sign-in', async () => {
    const { tokens } = await browserSignIn('bob');
    const store = memoryStore();
    const changes: (StoredTokens | undefined)[] = [];
    const keeper = new TokenKeeper({ store, renew: (t) => client.refresh(t), onChange: (t) => changes.push(t) });
    try {
      await keeper.adopt(tokens);
      const revocations = () => provider.requests.filter((r) => r === 'POST /token/revocation').length;
      const before = revocations();
      await client.revoke(tokens);
      // The refresh token, then the access token (a JWT, which this issuer answers it cannot revoke).
      assert.equal(revocations() - before, 2);
      await assert.rejects(client.refresh(tokens), SignInEndedError);
      // A keeper still holding the revoked tokens is signed out at its next renewal.
      assert.equal(await keeper.renewNow(), undefined);
      assert.equal(keeper.current, undefined);
      assert.equal(store.cleared, 1);
      assert.equal(changes.at(-1), undefined);
    } finally {
      keeper.dispose();
    }
  });

  it('signs in with the device code on the provider’s own pages; the server accepts the token', async () => {
    assert.equal(client.offersDeviceFlow, true);
    const device = await client.startDeviceSignIn(SCOPES);
    assert.match(device.userCode, /^[A-Z-]+$/);
    assert.ok(device.verificationUriComplete);
    const waiting = device.complete(AbortSignal.timeout(45_000));
    // Another device, another browser: the person types the code shown in VS Code.
    const browser = new ScriptedBrowser();
    const input = await browser.open(device.verificationUri);
    const confirm = await browser.submit(input, 'op.deviceInputForm', { user_code: device.userCode });
    assert.match(confirm.html, /op\.deviceConfirmForm/);
    const login = await browser.submit(confirm, 'op.deviceConfirmForm');
    const done = await signInOnPages(browser, login, 'bob');
    assert.match(done.html, /Sign-in Success/i);
    const tokens = await waiting;
    assert.deepEqual(tokens.account, { id: 'bob', label: 'bob@example.com' });
    assert.ok(tokens.refresh_token);
    const principal = await authenticatorFor(provider).verify(tokens.access_token);
    assert.equal(principal.kind === 'user' && principal.sub, 'bob');
    assert.deepEqual(principal.kind === 'user' && principal.groups, ['developers', 'reviewers']);
  });

  it('stops waiting for a device approval when cancelled', async () => {
    const device = await client.startDeviceSignIn(SCOPES);
    const controller = new AbortController();
    const waiting = device.complete(controller.signal);
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await assert.rejects(waiting, SignInCancelledError);
    // At once, not after the poll's interval (5 s).
    assert.ok(Date.now() - started < 1000);
  });
});

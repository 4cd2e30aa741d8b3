// The team server's review page in real Chromium: the link is the plain page, the browser signs in
// on the real OpenID provider's own login page (oidc-provider, Authorization Code + PKCE), comes
// back with a session cookie, and approves. Another user signed in the same way is refused the
// session, on the page and on its routes, because the page is exactly who the API would say.
import { strict as assert } from 'node:assert';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { OAuthClient } from '../../../../src/client/auth/oauthClient';
import { fetchAuthMetadata } from '../../../../src/client/auth/authMetadataRequest';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../../e2e/harness/browser';
import { startOpenidProvider, TEST_USERS, type OpenidProvider } from '../../../support/openidProvider';
import { ScriptedBrowser } from '../../../support/scriptedBrowser';
import { ensureServerBuilt, startServer, type ServerProcess } from '../../../support/serverProcess';
import { waitFor } from '../../../support/wait';
import { createRequest, example } from '../../hostTestKit';
import { bearerCall, ensureReviewPageBuilt, rawRequest, signInOnProvider, teamServerArgs } from './reviewPageKit';

describe('the review page on a team server: sign-in through the issuer in real Chromium', function () {
  this.timeout(120_000);
  let provider: OpenidProvider;
  let server: ServerProcess;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  async function accessToken(user: 'alice' | 'bob'): Promise<string> {
    const metadata = await fetchAuthMetadata(server.url);
    const client = await OAuthClient.discover(metadata);
    const scripted = new ScriptedBrowser();
    const tokens = await client.signInWithBrowser({
      scopes: metadata.scopes,
      timeoutMs: 30_000,
      openBrowser: async (url) => {
        void scripted.open(url.href).then(async (login) => {
          const consent = await scripted.submit(login, 'login', { login: user, password: TEST_USERS[user]?.password ?? '' });
          await scripted.submit(consent, 'consent');
        });
      },
    });
    return tokens.access_token;
  }

  const api = (token: string, method: string, path: string, body?: unknown) => bearerCall(server, token, method, path, body);
  const signIn = (page: Page, link: string, user: 'alice' | 'bob') => signInOnProvider(page, link, user, provider.issuer);

  before(async () => {
    ensureServerBuilt();
    ensureReviewPageBuilt();
    provider = await startOpenidProvider({ deviceFlow: false });
    server = await startServer({
      token: null,
      env: { ULTRAPLAN_SERVER_TOKEN: '' },
      scenario: example('approve.json'),
      extraArgs: teamServerArgs(provider.issuer),
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  });
  after(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.stop();
    await provider?.close();
  });

  it("signs Alice in on the issuer's page, opens her session and approves; Bob is refused it", async () => {
    const alice = await accessToken('alice');
    const created = await api(alice, 'POST', '/v1/sessions', createRequest('Plan the release'));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id as string;
    const minted = await api(alice, 'POST', '/v1/ultraplan/review-links', { session_id: id });
    assert.deepEqual(minted.body, { path: `/review/${id}`, one_time: false, expires_at: null }, 'a team link is the plain page');
    const link = `${server.url}${minted.body.path}`;

    const aliceContext = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    contexts.push(aliceContext);
    const page = await aliceContext.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await signIn(page, link, 'alice');
    await page.locator('#plan').getByText('Add a CHANGELOG.md.').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Approve', exact: true }).tap();
    await page.locator('.outcome').getByText('Done.').waitFor({ timeout: 30_000 });
    const events = await api(alice, 'GET', `/v1/sessions/${id}/events?limit=1000`);
    const answered = events.body.data.some(
      (e: any) =>
        e.type === 'user' &&
        Array.isArray(e.message?.content) &&
        e.message.content.some((b: any) => b?.type === 'tool_result' && !b.is_error),
    );
    assert.ok(answered, 'the approval reached the agent');
    assert.deepEqual(errors, []);

    // Bob signs in the same way: the page and the session's routes refuse him Alice's session.
    const bobContext = await browser.newContext();
    contexts.push(bobContext);
    const bobPage = await bobContext.newPage();
    await bobPage.goto(link);
    await bobPage.waitForURL((url) => url.origin === provider.issuer);
    await bobPage.locator('input[name="login"]').fill('bob');
    await bobPage.locator('input[name="password"]').fill(TEST_USERS.bob?.password ?? '');
    await bobPage.getByRole('button', { name: 'Sign in' }).click();
    await waitFor(
      async () => {
        if (new URL(bobPage.url()).origin === provider.issuer) {
          const allow = bobPage.getByRole('button', { name: 'Allow' });
          if ((await allow.count()) > 0) await allow.click();
          return undefined;
        }
        return (await bobPage.getByText('You may not review this session').count()) > 0 || undefined;
      },
      { message: "Bob's refusal page", timeoutMs: 30_000 },
    );
    // From a document of the server's origin without the page's CSP (an asset), as the page's own script would.
    await bobPage.goto(`${server.url}/review/assets/icon.svg`);
    const viaRoute = await bobPage.evaluate(async (sessionId) => (await fetch(`/v1/sessions/${sessionId}/events`)).status, id);
    assert.equal(viaRoute, 403);
  });

  it('Sign out on a phone, from the keyboard: the page says so, offers Sign in again, and the cookie opens nothing more', async () => {
    const alice = await accessToken('alice');
    const created = await api(alice, 'POST', '/v1/sessions', createRequest('Plan the docs'));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id as string;
    const link = `${server.url}/review/${id}`;
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await signIn(page, link, 'alice');
    await page.locator('#plan').getByText('Add a CHANGELOG.md.').waitFor({ timeout: 30_000 });
    const signOut = page.getByRole('button', { name: 'Sign out' });
    const box = await signOut.boundingBox();
    assert.ok(
      box && box.height >= 44 && box.x >= 0 && box.x + box.width <= 390,
      `the button fits a finger and the phone: ${JSON.stringify(box)}`,
    );
    const readStatus = () => page.evaluate(async (sessionId) => (await fetch(`/v1/sessions/${sessionId}`)).status, id);
    assert.equal(await readStatus(), 200, 'signed in before');
    // The keyboard reaches it: it is the page's first control.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Sign out');
    await page.keyboard.press('Enter');
    const heading = page.getByRole('heading', { name: 'Signed out' });
    await heading.waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Signed out', 'focus moves to what happened');
    assert.equal(await page.locator('#plan').count(), 0, 'nothing of the session stays on the page');
    assert.equal(await signOut.count(), 0);
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'no draft is kept in this tab');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling');
    const again = page.getByRole('link', { name: 'Sign in again' });
    assert.equal(await again.getAttribute('href'), `/review/${id}`);
    // The server ended the browser session: the page's own calls are refused from now on.
    assert.equal(await readStatus(), 401);
    const cookie = (await context.cookies(server.url)).map((c) => `${c.name}=${c.value}`).join('; ');
    const post = await page.evaluate(
      async (sessionId) =>
        (
          await fetch(`/v1/sessions/${sessionId}/events`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"events":[]}',
          })
        ).status,
      id,
    );
    assert.equal(post, 401, 'a POST too');
    assert.doesNotMatch(cookie, /ultraplan-review=[^;]/, 'the cookie is cleared');
    assert.deepEqual(errors, []);
    // Sign in again goes through the issuer (which may let her straight back through its own session).
    const visited: string[] = [];
    page.on('request', (request) => {
      if (request.isNavigationRequest()) visited.push(request.url());
    });
    await again.tap();
    await waitFor(async () => visited.some((u) => u.startsWith(provider.issuer)) || undefined, {
      message: 'Sign in again to go to the issuer',
      timeoutMs: 30_000,
    });
  });

  it("refuses a callback this browser did not start (a sign-in planted with an attacker's code)", async () => {
    // As a browser following the issuer's redirect: a navigation from another site (node:http: exactly these headers).
    const answer = await rawRequest(`${server.url}/review/auth/callback?code=attackers-code&state=attackers-state`, 'GET', {
      cookie: 'ultraplan-signin=someone-elses-state-0123456789',
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'navigate',
    });
    assert.equal(answer.status, 403);
    assert.match(answer.body, /not started in this browser/);
    assert.ok(!String(answer.headers['set-cookie'] ?? '').includes('ultraplan-review='), 'no session cookie');
  });
});

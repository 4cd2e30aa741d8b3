// Signing in to a team server from code-server, as a person does: `ultraplan.server.url` is all
// that is set; **Ultraplan: Sign In to Server…** reads the server's published issuer and, since
// code-server forwards a loopback listener through a path of its own that no issuer registers,
// shows a device code; the person enters it on the real OpenID provider's own pages
// (oidc-provider, test/support) in another tab, signs in and allows. The plan started next is that
// person's on the server; signing out from the Accounts menu revokes the token at the issuer.
// With access tokens that last 30 seconds and a server that allows no clock skew, the extension
// renews each before it expires and keeps working with no prompt; when the issuer refuses a
// renewal (the person's grant ended), the window says it signed out, once, and offers the sign-in.
import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import {
  clickNotificationButton,
  notifications,
  openTestWindow,
  runCommand,
  screenshot,
  waitFor,
  waitForNotification,
  type TestWindow,
} from './harness';
import {
  DEVICE_CODE_GRANT,
  startOpenidProvider,
  TEST_API_SCOPE,
  TEST_AUDIENCE,
  TEST_CLIENT_ID,
  TEST_USERS,
  type OpenidProvider,
  type OpenidProviderOptions,
} from '../support/openidProvider';
import { startServer, type ServerProcess } from '../support/serverProcess';
import { extensionLog, planTask, reportIfFailed, reviewFrame } from './ultraplanSteps';

const DEVICE_PROMPT = /enter the code ([A-Z-]+) at (http:\/\/\S+?)\.?$/m;

/** A team server that takes the provider's tokens and offers the device code; `extraArgs` after. */
function startTeamServer(provider: OpenidProvider, extraArgs: string[] = []): Promise<ServerProcess> {
  return startServer({
    token: null,
    env: { ULTRAPLAN_SERVER_TOKEN: '' },
    extraArgs: [
      '--oidc-issuer',
      provider.issuer,
      '--oidc-audience',
      TEST_AUDIENCE,
      '--oidc-client-id',
      TEST_CLIENT_ID,
      '--oidc-scopes',
      `openid offline_access email profile groups ${TEST_API_SCOPE}`,
      '--oidc-device-flow',
      'yes',
      ...extraArgs,
    ],
  });
}

function openWindow(suite: string, server: ServerProcess): Promise<TestWindow> {
  return openTestWindow({
    suite,
    files: { 'README.md': '# Demo project\n' },
    settings: { 'ultraplan.backend': 'server', 'ultraplan.server.url': server.url },
  });
}

/** A suite's provider, team server and code-server window: made before its tests, closed after. */
function teamSuite(
  suite: string,
  providerOptions: OpenidProviderOptions,
  serverArgs: string[] = [],
): { provider: OpenidProvider; server: ServerProcess; window: TestWindow | undefined } {
  const the = {} as { provider: OpenidProvider; server: ServerProcess; window: TestWindow | undefined };
  before(async function () {
    this.timeout(120_000);
    the.provider = await startOpenidProvider(providerOptions);
    the.server = await startTeamServer(the.provider, serverArgs);
    the.window = await openWindow(suite, the.server);
  });
  afterEach(async function () {
    await reportIfFailed(this, the.window);
  });
  after(async () => {
    await the.window?.close();
    await the.server?.stop();
    await the.provider?.close();
  });
  return the;
}

describe('sign in to a team server from code-server (a real OpenID provider)', function () {
  const the = teamSuite('sign-in', {});

  it('signs in with a device code on the issuer’s own pages, plans as that person, and signing out revokes at the issuer', async function () {
    this.timeout(240_000);
    const { page } = the.window!;
    await runCommand(page, 'Ultraplan: Sign In to Server…');
    await signInWithDeviceCode(page, the.provider, 'alice');

    await planTask(page, 'add a changelog');
    const frame = await reviewFrame(page, '#plan li');
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();
    // The server took the signed-in person's token: its audit names alice as who approved.
    await waitFor(() => (/"audit":"allow"[^\n]*"user":"alice"/.test(the.server.stderr()) ? true : undefined), {
      timeoutMs: 30_000,
      message: `alice's approval in the server's audit:\n${the.server.stderr().slice(-2000)}`,
    });

    await signOut(page);
    await waitFor(() => (the.provider.requests.some((r) => r.startsWith('POST /token/revocation')) ? true : undefined), {
      timeoutMs: 30_000,
      message: 'the revocation at the issuer',
    });
  });
});

/** Access tokens that last this long (seconds): the extension renews each a quarter before (src/client/auth/tokens.ts). */
const SHORT_TTL_S = 30;
/** One line per request in the server's log: `<ISO time> <METHOD> <path> <status> <ms>ms`. */
const REQUEST_LINE = /(\d{4}-\d\d-\d\dT[\d:.]+Z) (GET|POST|PUT|PATCH|DELETE) (\S+) (\d{3}) /gm;

function requestsLogged(server: ServerProcess): Array<{ at: number; method: string; path: string; status: number }> {
  return [...server.stderr().matchAll(REQUEST_LINE)].map((m) => ({
    at: Date.parse(m[1]!),
    method: m[2]!,
    path: m[3]!,
    status: Number(m[4]),
  }));
}

describe('staying signed in to a team server from code-server (30-second access tokens, the real OpenID provider)', function () {
  // No clock skew allowed: a token past its expiry is refused, so every request answered after
  // the first token's expiry carried a renewed one.
  const the = teamSuite('sign-in-renewal', { accessTokenTtl: SHORT_TTL_S }, ['--oidc-clock-skew-seconds', '0']);
  /** When the device sign-in's access token expires, epoch ms. */
  let firstExpiry = 0;

  const refreshes = (outcome: string) =>
    the.provider.tokenResponses.filter((r) => r.grantType === 'refresh_token' && r.outcome === outcome);

  it('renews the access token before it expires and keeps reaching the server with the new one, with no sign-in prompt', async function () {
    this.timeout(240_000);
    const { page } = the.window!;
    await runCommand(page, 'Ultraplan: Sign In to Server…');
    await signInWithDeviceCode(page, the.provider, 'alice');
    const signedIn = the.provider.tokenResponses.filter((r) => r.grantType === DEVICE_CODE_GRANT && r.outcome === 'issued');
    assert.equal(signedIn.length, 1, 'one device sign-in');
    firstExpiry = signedIn[0]!.at + SHORT_TTL_S * 1000;

    const renewed = await waitFor(() => refreshes('issued')[0], {
      timeoutMs: SHORT_TTL_S * 1000 + 30_000,
      message: 'a refresh_token grant at the issuer',
    });
    assert.ok(renewed.at < firstExpiry, `renewed ${firstExpiry - renewed.at} ms before the first token expired`);
    // Past the first token's expiry (and the server's, which allows no skew), a plan and its approval.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstExpiry + 1000 - Date.now())));
    await planTask(page, 'add a changelog');
    const frame = await reviewFrame(page, '#plan li');
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();
    await waitFor(() => (/"audit":"allow"[^\n]*"user":"alice"/.test(the.server.stderr()) ? true : undefined), {
      timeoutMs: 30_000,
      message: `alice's approval in the server's audit:\n${the.server.stderr().slice(-2000)}`,
    });

    // The server logs a request once its answer is sent, which can be after the audit line it wrote
    // while handling it.
    const logged = await waitFor(() => requestsLogged(the.server), {
      timeoutMs: 30_000,
      message: "the approval's request in the server's log",
      until: (lines) => lines.some((r) => r.method === 'POST' && /\/events$/.test(r.path)),
    });
    // The session's start and the approval, both answered after the first token expired.
    const afterExpiry = logged.filter((r) => r.at > firstExpiry && r.method === 'POST' && r.status < 300).map((r) => r.path);
    assert.ok(
      afterExpiry.some((p) => /^\/v1(\/code)?\/sessions$/.test(p)) &&
        afterExpiry.some((p) => /^\/v1(\/code)?\/sessions\/[^/]+\/events$/.test(p)),
      `the server answered the session's requests after the first token expired: ${JSON.stringify(afterExpiry)}\n${the.server.stderr().slice(-3000)}`,
    );
    assert.deepEqual(
      logged.filter((r) => r.status === 401),
      [],
      'the server never refused a token: none was sent past its expiry',
    );
    // And again, each renewal before the token it replaces expires.
    const again = await waitFor(() => refreshes('issued')[1], { timeoutMs: SHORT_TTL_S * 1000, message: 'a second renewal' });
    assert.ok(again.at < renewed.at + SHORT_TTL_S * 1000, `renewed again ${renewed.at + SHORT_TTL_S * 1000 - again.at} ms before expiry`);
    assert.deepEqual(refreshes('invalid_grant'), [], 'no renewal refused');
    assert.deepEqual(
      the.provider.tokenResponses.filter((r) => r.grantType === DEVICE_CODE_GRANT && r.outcome === 'issued'),
      signedIn,
      'signed in once: no second sign-in',
    );
    const shown = await notifications(page);
    assert.ok(!shown.some((text) => DEVICE_PROMPT.test(text) || /Signed out/.test(text)), `no sign-in prompt: ${JSON.stringify(shown)}`);
    assert.equal(await page.getByRole('button', { name: 'Allow' }).count(), 0, 'no consent asked again');
  });

  it('when the issuer refuses a renewal (the grant ended), says it signed out, once, and offers the sign-in again', async function () {
    this.timeout(240_000);
    const { page } = the.window!;
    assert.ok(firstExpiry > 0, 'signed in by the test before');
    assert.ok((await the.provider.endGrants('alice')) >= 1, "alice's grant ended at the issuer");
    const endedAt = Date.now();
    const deviceStarts = () => the.provider.requests.filter((r) => r === 'POST /device/auth').length;
    const startsBefore = deviceStarts();
    const toast = await waitForNotification(page, 'Signed out of', { timeoutMs: SHORT_TTL_S * 1000 + 30_000 });
    const said = (await toast.innerText()).trim();
    assert.ok(
      said.includes(`Signed out of ${new URL(the.server.url).origin}: its issuer refused to renew the sign-in`),
      `the notice says what happened: ${said}`,
    );
    await screenshot(page, 'signed-out');
    assert.deepEqual(
      refreshes('invalid_grant').map((r) => r.at >= endedAt),
      [true],
      'one renewal refused, after the grant ended',
    );
    assert.equal(deviceStarts(), startsBefore, 'no sign-in started on its own');

    // The way back in is the notification's button: it starts the sign-in (and, clicked, the notice goes).
    await clickNotificationButton(page, 'Signed out of', 'Sign In…');
    await deviceCodeShown(page);
    // A whole renewal period later: the issuer was not asked to renew again, and the sign-in ended once.
    const issuedBefore = refreshes('issued').length;
    await new Promise((resolve) => setTimeout(resolve, SHORT_TTL_S * 1000));
    assert.equal(refreshes('invalid_grant').length, 1, 'no renewal tried again after the refusal');
    assert.equal(refreshes('issued').length, issuedBefore);
    assert.equal(deviceStarts(), startsBefore + 1, 'one sign-in: the one the button started');
    const ends = extensionLog(the.window!).match(/the issuer refused the refresh token \(grant request is invalid\); signed out/g) ?? [];
    assert.equal(ends.length, 1, 'the sign-in ended once');
    assert.equal((await notifications(page)).filter((text) => text.includes('Signed out of')).length, 0, 'not said again');
  });
});

/**
 * After a sign-in was asked for: VS Code's consent for the extension (when it asks), the device
 * code shown, the provider's pages in another tab as a person types the address and the code,
 * and the wait for the sign-in to finish.
 */
async function signInWithDeviceCode(page: Page, provider: OpenidProvider, login: keyof typeof TEST_USERS): Promise<void> {
  const [, userCode, verificationUri] = await deviceCodeShown(page);
  assert.ok(verificationUri!.startsWith(provider.issuer), `the issuer's own page: ${verificationUri}`);
  await screenshot(page, 'device-code');
  const tab = await page.context().newPage();
  try {
    await enterDeviceCode(tab, verificationUri!, userCode!, login);
  } finally {
    await tab.close();
  }
  await waitFor(async () => ((await notifications(page)).some((text) => DEVICE_PROMPT.test(text)) ? undefined : true), {
    timeoutMs: 60_000,
    message: 'the sign-in to finish',
  });
}

/** The device code notification, once VS Code's consent (asked before a first sign-in) is given. */
async function deviceCodeShown(page: Page): Promise<RegExpExecArray> {
  const allow = page.getByRole('button', { name: 'Allow' }).first();
  return waitFor(
    async () => {
      if (await allow.isVisible()) await allow.click();
      return (await notifications(page)).map((text) => DEVICE_PROMPT.exec(text)).find((m) => m !== null) ?? undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500, message: 'the device code notification' },
  );
}

/** The provider's device pages: the code, then its confirm, login and consent pages. */
async function enterDeviceCode(tab: Page, verificationUri: string, userCode: string, login: keyof typeof TEST_USERS): Promise<void> {
  await tab.goto(verificationUri);
  await tab.locator('input[name="user_code"]').fill(userCode, { timeout: 30_000 });
  await tab.locator('form#op\\.deviceInputForm').evaluate((form: HTMLFormElement) => form.requestSubmit());
  await tab.locator('form#op\\.deviceConfirmForm').evaluate((form: HTMLFormElement) => form.requestSubmit(), { timeout: 30_000 });
  await tab.locator('input[name="login"]').fill(login, { timeout: 30_000 });
  await tab.locator('input[name="password"]').fill(TEST_USERS[login]!.password);
  await tab.getByRole('button', { name: 'Sign in' }).click();
  await tab.getByRole('button', { name: 'Allow' }).click({ timeout: 30_000 });
  await tab.getByText(/Sign-in Success/i).waitFor({ timeout: 30_000 });
}

/** Accounts menu → the Ultraplan Server account → Sign Out, and VS Code's confirmation. */
async function signOut(page: Page): Promise<void> {
  await page.locator('.activitybar li.action-item[aria-label="Accounts"]').click();
  const account = page.locator('.monaco-menu .action-item', { hasText: /alice@example\.com/ }).first();
  await account.hover({ timeout: 15_000 });
  await screenshot(page, 'accounts-menu');
  const item = page.locator('.monaco-menu .action-item', { hasText: /^Sign Out$/ }).first();
  await item.click({ timeout: 15_000 });
  // A click that lands while the submenu redraws (the pointer crossed its parent) does nothing:
  // the item stays highlighted, and Enter chooses it as the keyboard would.
  const confirm = page.getByRole('button', { name: 'Sign Out' });
  for (let attempt = 1; ; attempt++) {
    try {
      await confirm.waitFor({ state: 'visible', timeout: 3000 });
      break;
    } catch (err) {
      if (attempt >= 3 || !(await item.isVisible())) throw err;
      await page.keyboard.press('Enter');
    }
  }
  await confirm.click({ timeout: 15_000 });
}

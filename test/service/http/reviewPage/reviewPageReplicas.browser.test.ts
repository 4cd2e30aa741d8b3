// The review page across two replicas of the team server, for real: one real PostgreSQL, two
// ultraplan-server processes and a worker, the real OpenID provider (oidc-provider, its own login
// page), real Chromium. Alice signs in on replica A and approves; her page says 1 of 2; Bob signs
// in on replica B and approves; the agent is let go once (2 of 2) and both pages see it and say
// "Approved by 2 of 2: …". Alice's cookie from A works on B, her sign-out on A holds on B, and B
// refuses a cross-site POST and a POST without the CSRF token. On two replicas with the shared
// token, a one-time link redeemed on both at the same moment opens once; with --public-url the
// links, the issuer's redirect and the same-origin guard use the public origin.
import { strict as assert } from 'node:assert';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { controlResponseEvent } from '../../../../src/core/protocol';
import { approvalOf, approvalSummary } from '../../../../src/core/planApprovals';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../../e2e/harness/browser';
import { startOpenidProvider, type OpenidProvider } from '../../../support/openidProvider';
import { signInAs } from '../../../support/providerSignIn';
import { freePort, sharedPostgresCluster } from '../../../support/postgresCluster';
import {
  EXAMPLES_DIR,
  ensureServerBuilt,
  startServer,
  startWorker,
  type ServerProcess,
  type WorkerProcess,
} from '../../../support/serverProcess';
import { waitFor } from '../../../support/wait';
import { fetchAuthMetadata } from '../../../../src/client/auth/authMetadataRequest';
import { createRequest } from '../../hostTestKit';
import {
  bearerCall,
  ensureReviewPageBuilt,
  exchangeLink,
  mintLink,
  pageCsrfToken,
  rawRequest,
  sameOrigin,
  signInOnProvider,
  teamServerArgs,
} from './reviewPageKit';

const allows = (log: any[]) => log.filter((e) => e.type === 'control_response' && e.response?.response?.behavior === 'allow');
const said = (log: any[], text: string) =>
  log.filter((e) => e.type === 'assistant' && JSON.stringify(e.message?.content ?? '').includes(text)).length;

describe('the review page across two replicas (PostgreSQL, the real issuer, real Chromium)', function () {
  this.timeout(240_000);
  let provider: OpenidProvider;
  let replicas: ServerProcess[] = [];
  let worker: WorkerProcess | undefined;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  before(async () => {
    ensureServerBuilt();
    ensureReviewPageBuilt();
    provider = await startOpenidProvider({ deviceFlow: false });
    const database = await (await sharedPostgresCluster()).createDatabase();
    const args = [...teamServerArgs(provider.issuer), '--oidc-review-groups', 'reviewers', '--require-approvals', '2'];
    replicas = await Promise.all([0, 1].map(() => startServer({ store: database, extraArgs: args })));
    worker = await startWorker({ store: database, agent: `scripted:${EXAMPLES_DIR}/approve.json` });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  });
  after(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await Promise.all([...replicas.map((r) => r.stop()), worker?.stop()]);
    await provider?.close();
  });

  const signIn = (page: Page, link: string, user: 'alice' | 'bob') => signInOnProvider(page, link, user, provider.issuer);

  async function cookieOf(context: BrowserContext): Promise<string> {
    const cookie = (await context.cookies()).find((c) => c.name === 'ultraplan-review');
    assert.ok(cookie, 'the browser holds the review cookie');
    return `${cookie.name}=${cookie.value}`;
  }

  it('alice approves on replica A, bob on replica B: the agent goes once, both pages see it; cookies, sign-out and CSRF hold across replicas', async () => {
    const [a, b] = replicas as [ServerProcess, ServerProcess];
    const aliceToken = (await signInAs(await fetchAuthMetadata(a.url), 'alice')).access_token;
    const created = await bearerCall(a, aliceToken, 'POST', '/v1/sessions', createRequest('Plan the release'));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id as string;
    const events = async () => (await bearerCall(b, aliceToken, 'GET', `/v1/sessions/${id}/events?limit=1000`)).body.data as any[];
    const request = await waitFor(
      async () => (await events()).find((e) => e.type === 'control_request' && e.request?.subtype === 'can_use_tool'),
      {
        message: 'the plan request',
        timeoutMs: 60_000,
      },
    );
    const minted = await bearerCall(a, aliceToken, 'POST', '/v1/ultraplan/review-links', { session_id: id });
    assert.deepEqual(minted.body, { path: `/review/${id}`, one_time: false, expires_at: null }, 'a team link is the plain page');
    const onA = `${a.url}/review/${id}`;
    const onB = `${b.url}/review/${id}`;

    const aliceContext = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    contexts.push(aliceContext);
    const alicePage = await aliceContext.newPage();
    const errors: string[] = [];
    alicePage.on('pageerror', (err) => errors.push(err.message));
    await signIn(alicePage, onA, 'alice');
    await alicePage.locator('#plan').getByText('Add a CHANGELOG.md.').waitFor({ timeout: 30_000 });
    await alicePage.getByRole('button', { name: 'Approve', exact: true }).tap();
    const quorum = alicePage.locator('.approval-quorum');
    await quorum.getByText(/1 of 2 approvals: alice@example\.com; waiting for one more/).waitFor({ timeout: 30_000 });
    assert.equal(allows(await events()).length, 0, 'one approval of two lets nothing go');

    // Alice's cookie, set by A, opens the page on B: no trip to the issuer.
    const alicePageOnB = await aliceContext.newPage();
    const visited: string[] = [];
    alicePageOnB.on('framenavigated', (frame) => visited.push(frame.url()));
    await alicePageOnB.goto(onB);
    await alicePageOnB.locator('#plan').getByText('Add a CHANGELOG.md.').waitFor({ timeout: 30_000 });
    assert.ok(!visited.some((u) => u.startsWith(provider.issuer)), `B sent alice to sign in again: ${visited.join(' ')}`);
    await alicePageOnB
      .locator('.approval-quorum')
      .getByText(/1 of 2 approvals: alice@example\.com/)
      .waitFor({ timeout: 30_000 });
    await alicePageOnB.close();

    const bobContext = await browser.newContext();
    contexts.push(bobContext);
    const bobPage = await bobContext.newPage();
    bobPage.on('pageerror', (err) => errors.push(err.message));
    await signIn(bobPage, onB, 'bob');
    await bobPage.locator('#plan').getByText('Add a CHANGELOG.md.').waitFor({ timeout: 30_000 });
    await bobPage.getByRole('button', { name: 'Approve', exact: true }).click();

    const log = await waitFor(
      async () => {
        const now = await events();
        return said(now, 'Done.') > 0 ? now : undefined;
      },
      { message: 'the agent to carry the plan out', timeoutMs: 60_000 },
    );
    assert.equal(allows(log).length, 1, 'one allow reached the agent');
    assert.equal(allows(log)[0].response.response.updatedInput.plan, request.request.input.plan);
    assert.equal(said(log, 'Done.'), 1, 'the agent carried the plan out once');
    // The quorum's record both pages read: alice's approval, then both, released once.
    const states = log.map(approvalOf).filter((x) => x !== null);
    assert.deepEqual(
      states.map((x) => [approvalSummary(x), x.released]),
      [
        ['1 of 2 approvals: alice@example.com; waiting for one more', false],
        ['2 of 2 approvals: alice@example.com, bob@example.com; approved', true],
      ],
    );
    // Each page, on its own replica's stream, sees the plan go and the agent finish.
    for (const page of [alicePage, bobPage]) await page.locator('.outcome').getByText('Done.').waitFor({ timeout: 30_000 });
    // And each says who let it go, in the header the panel has too: the releasing event's words.
    for (const page of [alicePage, bobPage]) {
      const approvedBy = page.locator('.approved-by');
      await approvedBy.waitFor({ state: 'visible', timeout: 30_000 });
      assert.equal((await approvedBy.textContent())?.trim(), 'Approved by 2 of 2: alice@example.com, bob@example.com', page.url());
    }
    assert.deepEqual(errors, []);

    // Bob's session on B refuses a POST without the CSRF token, and a cross-site one with it.
    const bobCookie = await cookieOf(bobContext);
    const csrf = await pageCsrfToken(b, id, bobCookie);
    const post = (headers: Record<string, string>) =>
      rawRequest(
        `${b.url}/v1/sessions/${id}/events`,
        'POST',
        { 'content-type': 'application/json', cookie: bobCookie, ...headers },
        JSON.stringify({ events: [controlResponseEvent(request.request_id, { behavior: 'deny', message: 'no' })] }),
      );
    const noToken = await post(sameOrigin(b));
    assert.equal(noToken.status, 403, noToken.body);
    assert.equal(JSON.parse(noToken.body).error.reason, 'csrf_refused');
    const crossSite = await post({
      origin: 'http://attacker.test',
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'cors',
      'x-csrf-token': csrf,
    });
    assert.equal(crossSite.status, 403, crossSite.body);
    // The listening address of the other replica is another origin too.
    const otherReplica = await post({ ...sameOrigin(a), 'sec-fetch-site': 'same-site', 'x-csrf-token': csrf });
    assert.equal(otherReplica.status, 403, otherReplica.body);

    // Alice signs out on A (the page's POST, with its token): B refuses her cookie from then on.
    const aliceCookie = await cookieOf(aliceContext);
    const read = () => rawRequest(`${b.url}/v1/sessions/${id}`, 'GET', { ...sameOrigin(b), cookie: aliceCookie });
    assert.equal((await read()).status, 200, 'signed in on B before');
    const signOutRefused = await rawRequest(`${a.url}/review/auth/sign-out`, 'POST', {
      ...sameOrigin(a),
      'content-type': 'application/json',
      cookie: aliceCookie,
    });
    assert.equal(signOutRefused.status, 403, 'a sign-out needs the CSRF token too');
    const signedOut = await rawRequest(`${a.url}/review/auth/sign-out`, 'POST', {
      ...sameOrigin(a),
      'content-type': 'application/json',
      cookie: aliceCookie,
      'x-csrf-token': await pageCsrfToken(a, id, aliceCookie),
    });
    assert.equal(signedOut.status, 200, signedOut.body);
    assert.ok(String(signedOut.headers['set-cookie']).includes('ultraplan-review=; Path=/; Max-Age=0'), 'the cookie is cleared');
    const after = await read();
    assert.equal(after.status, 401, after.body);
    assert.equal(JSON.parse(after.body).error.reason, 'browser_session_expired');
    const pageAfter = await rawRequest(onB, 'GET', { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', cookie: aliceCookie });
    assert.equal(pageAfter.status, 302, 'B sends her to sign in again');
    assert.ok(String(pageAfter.headers.location).startsWith(provider.issuer));
  });
});

describe('one-time links and --public-url on two replicas with the shared token (PostgreSQL)', function () {
  this.timeout(120_000);
  let replicas: ServerProcess[] = [];
  let port = 0;

  before(async () => {
    ensureServerBuilt();
    ensureReviewPageBuilt();
    const database = await (await sharedPostgresCluster()).createDatabase();
    port = await freePort();
    // A as a proxy in front would be reached: `localhost` is the public name, 127.0.0.1 the listening one.
    const token = 'a-shared-token-for-both-replicas-0123456789';
    replicas = await Promise.all([
      startServer({ store: database, token, extraArgs: ['--port', String(port), '--public-url', `http://localhost:${port}`] }),
      startServer({ store: database, token }),
    ]);
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
  });

  it('a one-time link opened on both replicas at the same moment opens once; its cookie works on the other', async () => {
    const [a, b] = replicas as [ServerProcess, ServerProcess];
    const created = await fetch(`${b.url}/v1/sessions`, {
      method: 'POST',
      headers: b.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(createRequest('Plan the release')),
    });
    const id = ((await created.json()) as { id: string }).id;
    for (let i = 0; i < 10; i++) {
      const link = await mintLink(b, id);
      assert.equal(link.one_time, true);
      const answers = await Promise.all([exchangeLink(b, link), exchangeLink({ ...b, url: `http://localhost:${port}` }, link)]);
      const opened = answers.filter((x) => x.answer.status === 303);
      assert.equal(opened.length, 1, `link ${i}: ${answers.map((x) => x.answer.status).join(', ')}`);
      assert.equal(answers.filter((x) => x.answer.status === 403).length, 1);
      if (i > 0) continue;
      const cookie = opened[0]?.cookie as string;
      for (const server of [a, b]) {
        const origin = server === a ? `http://localhost:${port}` : server.url;
        const read = await rawRequest(`${server.url}/v1/sessions/${id}`, 'GET', { origin, 'sec-fetch-site': 'same-origin', cookie });
        assert.equal(read.status, 200, read.body);
      }
    }
  });

  it('with --public-url: the link is on the public origin, and the page is let in from that origin alone', async () => {
    const a = replicas[0] as ServerProcess;
    const created = await fetch(`${a.url}/v1/sessions`, {
      method: 'POST',
      headers: a.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(createRequest('Plan the release')),
    });
    const id = ((await created.json()) as { id: string }).id;
    const link = await mintLink(a, id);
    assert.equal(link.url, `http://localhost:${port}${link.path}`);
    const viaListening = await exchangeLink(a, link);
    assert.equal(viaListening.answer.status, 403, 'the listening address is not the public origin');
    const viaPublic = await exchangeLink({ ...a, url: `http://localhost:${port}` }, link);
    assert.equal(viaPublic.answer.status, 303, viaPublic.answer.body);
  });
});

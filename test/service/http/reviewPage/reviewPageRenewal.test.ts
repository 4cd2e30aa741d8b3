// A browser signed in to the review page is who the issuer says for its access token's lifetime
// only, against the real server, the real OpenID provider (3-second access tokens) and real
// Chromium for the sign-in on the issuer's page: then its next request renews the sign-in with the
// refresh token, so Bob, taken out of the review group at the issuer, can no longer read or
// approve Alice's session from the page; and a grant the issuer ended ends the browser session.
import { strict as assert } from 'node:assert';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { fetchAuthMetadata } from '../../../../src/client/auth/authMetadataRequest';
import { controlResponseEvent } from '../../../../src/core/protocol';
import { PLAIN_COOKIE } from '../../../../src/service/http/reviewPage/cookies';
import { startOpenidProvider, TEST_USERS, type OpenidProvider } from '../../../support/openidProvider';
import { signInAs } from '../../../support/providerSignIn';
import { ensureServerBuilt, startServer, type ServerProcess } from '../../../support/serverProcess';
import { waitFor } from '../../../support/wait';
import { createRequest, example } from '../../hostTestKit';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../../e2e/harness/browser';
import {
  bearerCall,
  ensureReviewPageBuilt,
  pageCsrfToken,
  rawRequest,
  sameOrigin,
  signInOnProvider,
  teamServerArgs,
} from './reviewPageKit';

const TOKEN_TTL_S = 3;

describe('the review page renews a signed-in browser’s groups from the issuer (real server, real issuer)', function () {
  this.timeout(90_000);
  let provider: OpenidProvider;
  let server: ServerProcess;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const bobGroups = TEST_USERS.bob!.groups;

  before(async () => {
    ensureServerBuilt();
    ensureReviewPageBuilt();
    provider = await startOpenidProvider({ deviceFlow: false, accessTokenTtl: TOKEN_TTL_S });
    server = await startServer({
      token: null,
      env: { ULTRAPLAN_SERVER_TOKEN: '' },
      scenario: example('approve.json'),
      extraArgs: [...teamServerArgs(provider.issuer), '--oidc-review-groups', 'reviewers'],
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  });
  afterEach(() => {
    TEST_USERS.bob!.groups = bobGroups;
  });
  after(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.stop();
    await provider?.close();
  });

  /** Alice's session, waiting on its plan: its id and the plan request's id. */
  async function alicesSession(): Promise<{ id: string; requestId: string }> {
    const alice = (await signInAs(await fetchAuthMetadata(server.url), 'alice')).access_token;
    const created = await bearerCall(server, alice, 'POST', '/v1/sessions', createRequest('Plan the release'));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id as string;
    const requestId = await waitFor(
      async () => {
        const events = (await bearerCall(server, alice, 'GET', `/v1/sessions/${id}/events?limit=1000`)).body.data as any[];
        return events.find((e) => e.type === 'control_request' && e.request?.subtype === 'can_use_tool')?.request_id as string | undefined;
      },
      { message: 'the plan request', timeoutMs: 30_000 },
    );
    return { id, requestId };
  }

  /** Bob signs in on the issuer's pages from the session's review page, in Chromium; his browser's cookie. */
  async function bobOnThePage(id: string): Promise<string> {
    const context = await browser.newContext();
    contexts.push(context);
    const link = `${server.url}/review/${id}`;
    const page = await context.newPage();
    await signInOnProvider(page, link, 'bob', provider.issuer);
    // The test's requests alone use the cookie from here on (the page would poll with it).
    await page.close();
    const cookie = (await context.cookies()).find((c) => c.name === PLAIN_COOKIE);
    assert.ok(cookie, 'the browser holds the review cookie');
    return `${cookie.name}=${cookie.value}`;
  }

  const read = (id: string, cookie: string) => rawRequest(`${server.url}/v1/sessions/${id}`, 'GET', { ...sameOrigin(server), cookie });
  const pastTheToken = () => new Promise((resolve) => setTimeout(resolve, TOKEN_TTL_S * 1000 + 500));

  it('Bob, taken out of the review group at the issuer, loses Alice’s session on the page once his token would have expired', async () => {
    const { id, requestId } = await alicesSession();
    const cookie = await bobOnThePage(id);
    assert.equal((await read(id, cookie)).status, 200, 'a fellow reviewer sees the session');
    const csrf = await pageCsrfToken(server, id, cookie);

    // Past the token's lifetime, still a reviewer: renewed, nothing changes for him.
    await pastTheToken();
    assert.equal((await read(id, cookie)).status, 200, 'renewed with the same groups');
    const renewals = () => provider.tokenResponses.filter((r) => r.grantType === 'refresh_token' && r.outcome === 'issued').length;
    assert.equal(renewals(), 1, 'the page renewed the sign-in once');

    TEST_USERS.bob!.groups = ['developers'];
    assert.equal((await read(id, cookie)).status, 200, 'within the renewed token’s lifetime: as he was');
    await pastTheToken();
    const refused = await read(id, cookie);
    assert.ok(refused.status === 403 || refused.status === 404, `refused once renewed: ${refused.status} ${refused.body}`);
    assert.equal(renewals(), 2);
    const approve = await rawRequest(
      `${server.url}/v1/sessions/${id}/events`,
      'POST',
      { ...sameOrigin(server), 'content-type': 'application/json', cookie, 'x-csrf-token': csrf },
      JSON.stringify({ events: [controlResponseEvent(requestId, { behavior: 'allow', updatedInput: {} })] }),
    );
    assert.ok(approve.status === 403 || approve.status === 404, `his approval refused: ${approve.status} ${approve.body}`);
    const page = await rawRequest(`${server.url}/review/${id}`, 'GET', { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', cookie });
    assert.match(page.body, /You may not review this session|No such session/);
  });

  it('a grant the issuer ended ends the browser session at its next renewal', async () => {
    const { id } = await alicesSession();
    const cookie = await bobOnThePage(id);
    assert.equal((await read(id, cookie)).status, 200);
    assert.ok((await provider.endGrants('bob')) >= 1);
    await pastTheToken();
    const ended = await read(id, cookie);
    assert.equal(ended.status, 401, ended.body);
    assert.equal(JSON.parse(ended.body).error.reason, 'browser_session_expired');
    assert.match(JSON.parse(ended.body).error.message, /your sign-in ended at the issuer/);
    assert.equal((await read(id, cookie)).status, 401, 'and stays ended');
  });
});

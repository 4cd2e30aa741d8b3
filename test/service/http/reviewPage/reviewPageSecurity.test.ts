// The review page's boundary at the HTTP level, against the real server process: what a browser
// session may reach and what it may not, each refusal with its status and reason. Requests are
// forged with node:http, so each test sets exactly the Origin, Sec-Fetch-Site, cookie and CSRF
// token it is about.
import { strict as assert } from 'node:assert';
import { ensureServerBuilt, startServer, type ServerProcess } from '../../../support/serverProcess';
import { example } from '../../hostTestKit';
import { allEvents, createSession, waitForStatus } from '../../server/serverTestKit';
import { exchangeLink, mintLink, pageCsrfToken, rawRequest, sameOrigin } from './reviewPageKit';

const PLANTED = JSON.stringify({ events: [{ type: 'user', message: { role: 'user', content: 'planted' } }] });

function reason(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { error?: { reason?: string } }).error?.reason;
  } catch {
    return undefined;
  }
}

describe('the review page boundary (real server, forged requests)', function () {
  this.timeout(60_000);
  let server: ServerProcess;
  let id: string;
  let other: string;
  let cookie: string;
  let csrf: string;

  before(async () => {
    ensureServerBuilt();
    server = await startServer({ scenario: example('approve.json') });
    id = await createSession(server, 'Plan A');
    other = await createSession(server, 'Plan B');
    await waitForStatus(server, id, 'requires_action');
    const opened = await exchangeLink(server, await mintLink(server, id));
    assert.equal(opened.answer.status, 303);
    assert.equal(opened.answer.headers.location, `/review/${id}`);
    const setCookie = opened.answer.headers['set-cookie']?.[0] ?? '';
    assert.match(setCookie, /; HttpOnly/);
    assert.match(setCookie, /; SameSite=Strict/);
    assert.doesNotMatch(setCookie, /Secure/, 'no Secure flag on plain http (the browser would drop the cookie)');
    cookie = opened.cookie ?? '';
    csrf = await pageCsrfToken(server, id, cookie);
  });
  after(async () => {
    if (server) assert.equal(await server.stop(), 0);
  });

  it('serves the page under a strict CSP: scripts by nonce only, no inline code, no eval, never framed', async () => {
    const answer = await rawRequest(`${server.url}/review/${id}`, 'GET', {
      'sec-fetch-site': 'same-origin',
      'sec-fetch-mode': 'navigate',
      cookie,
    });
    assert.equal(answer.status, 200);
    const csp = String(answer.headers['content-security-policy']);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce, csp);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /default-src 'none'/);
    // Every script element is an external file with the nonce: none carries code of its own.
    const scripts = [...answer.body.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.length, 1);
    // (A base64 nonce may hold `+` and `/`: compared as text, not as a pattern.)
    assert.ok((scripts[0]?.[1] ?? '').includes(`nonce="${nonce}" src="/review/assets/review-page.js"`), scripts[0]?.[1]);
    assert.equal(scripts[0]?.[2], '');
    const again = await rawRequest(`${server.url}/review/${id}`, 'GET', {
      'sec-fetch-site': 'same-origin',
      'sec-fetch-mode': 'navigate',
      cookie,
    });
    assert.notEqual(/nonce-([^']+)/.exec(String(again.headers['content-security-policy']))?.[1], nonce, 'a fresh nonce per load');
  });

  it('lets the page read and post with its cookie and CSRF token', async () => {
    const read = await rawRequest(`${server.url}/v1/sessions/${id}/events`, 'GET', { ...sameOrigin(server), cookie });
    assert.equal(read.status, 200, read.body);
    assert.ok((JSON.parse(read.body) as { data: unknown[] }).data.length > 0);
  });

  it('refuses a POST without the CSRF token, or with a wrong one', async () => {
    const before = (await allEvents(server, id)).length;
    const headers = { ...sameOrigin(server), cookie, 'content-type': 'application/json' };
    const missing = await rawRequest(`${server.url}/v1/sessions/${id}/events`, 'POST', headers, PLANTED);
    assert.equal(missing.status, 403, missing.body);
    assert.equal(reason(missing.body), 'csrf_refused');
    const wrong = await rawRequest(
      `${server.url}/v1/sessions/${id}/events`,
      'POST',
      { ...headers, 'x-csrf-token': `${csrf.slice(0, -2)}xx` },
      PLANTED,
    );
    assert.equal(wrong.status, 403, wrong.body);
    assert.equal(reason(wrong.body), 'csrf_refused');
    assert.equal((await allEvents(server, id)).length, before, 'nothing was planted');
  });

  it('refuses a cross-site POST even with the cookie and the right token', async () => {
    const before = (await allEvents(server, id)).length;
    const headers = { cookie, 'content-type': 'application/json', 'x-csrf-token': csrf };
    const sites: Array<Record<string, string>> = [
      { origin: 'http://attacker.test', 'sec-fetch-site': 'cross-site' },
      { origin: 'http://attacker.test' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
    ];
    for (const site of sites) {
      const answer = await rawRequest(`${server.url}/v1/sessions/${id}/events`, 'POST', { ...headers, ...site }, PLANTED);
      assert.equal(answer.status, 403, `${JSON.stringify(site)}: ${answer.body}`);
      assert.equal(reason(answer.body), 'request_refused');
    }
    assert.equal((await allEvents(server, id)).length, before);
  });

  it("refuses another session's routes and page to a browser let in for one session", async () => {
    const read = await rawRequest(`${server.url}/v1/sessions/${other}/events`, 'GET', { ...sameOrigin(server), cookie });
    assert.equal(read.status, 403, read.body);
    assert.equal(reason(read.body), 'browser_session_scope');
    const page = await rawRequest(`${server.url}/review/${other}`, 'GET', {
      'sec-fetch-site': 'same-origin',
      'sec-fetch-mode': 'navigate',
      cookie,
    });
    assert.equal(page.status, 403);
    assert.doesNotMatch(page.body, /ultraplan-csrf/);
  });

  it('keeps the page to its routes: no list, no other API, and a cookie never stands for the token', async () => {
    for (const path of ['/v1/sessions', '/v1/code/sessions', `/v1/ultraplan/sessions/${id}/changes`]) {
      const answer = await rawRequest(`${server.url}${path}`, 'GET', { ...sameOrigin(server), cookie });
      assert.equal(answer.status, 403, `${path}: ${answer.body}`);
    }
    const mint = await rawRequest(
      `${server.url}/v1/ultraplan/review-links`,
      'POST',
      { ...sameOrigin(server), cookie, 'content-type': 'application/json', 'x-csrf-token': csrf },
      JSON.stringify({ session_id: id }),
    );
    assert.equal(mint.status, 403, 'the page cannot mint links');
    // A program (no Origin, no fetch metadata) with the cookie and no bearer token: 401.
    const program = await rawRequest(`${server.url}/v1/sessions/${id}`, 'GET', { cookie });
    assert.equal(program.status, 401);
  });

  it('refuses a one-time link the second time, and a link for another session', async () => {
    const link = await mintLink(server, id);
    const first = await exchangeLink(server, link);
    assert.equal(first.answer.status, 303);
    const second = await exchangeLink(server, link);
    assert.equal(second.answer.status, 403);
    assert.equal(second.cookie, undefined);
    assert.match(second.answer.body, /already used/);
    const forOther = await mintLink(server, other);
    const moved = await exchangeLink(server, { ...forOther, path: forOther.path.replace(other, id) });
    assert.equal(moved.answer.status, 403);
    assert.match(moved.answer.body, /another session/);
    // The link page itself does not spend the token (a chat's link preview is a GET).
    const fresh = await mintLink(server, id);
    const preview = await rawRequest(`${server.url}${fresh.path}`, 'GET', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' });
    assert.equal(preview.status, 200);
    assert.equal((await exchangeLink(server, fresh)).answer.status, 303);
  });

  it('refuses a browser without a session, and a cookie the server never set', async () => {
    const none = await rawRequest(`${server.url}/v1/sessions/${id}/events`, 'GET', sameOrigin(server));
    assert.equal(none.status, 401);
    assert.equal(reason(none.body), 'browser_session_missing');
    const forged = await rawRequest(`${server.url}/v1/sessions/${id}/events`, 'GET', {
      ...sameOrigin(server),
      cookie: 'ultraplan-review=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    });
    assert.equal(forged.status, 401);
    assert.equal(reason(forged.body), 'browser_session_expired');
  });
});

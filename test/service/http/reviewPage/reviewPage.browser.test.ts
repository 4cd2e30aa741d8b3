// The review page in real Chromium against the real server process: a one-time link opened on a
// phone (390x844, touch) and on a desktop, a line comment sent with a reject, the revision
// approved, and what the agent received checked in the session's own log. The page runs under its
// strict CSP: any violation (an inline script, an eval) shows up as a console error and fails.
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../../e2e/harness/browser';
import { REPO_ROOT, ensureServerBuilt, startServer, type ServerProcess } from '../../../support/serverProcess';
import { waitFor } from '../../../support/wait';
import { example } from '../../hostTestKit';
import { allEvents, createSession, waitForStatus } from '../../server/serverTestKit';
import { ensureReviewPageBuilt, mintLink } from './reviewPageKit';

const IMAGES = path.join(REPO_ROOT, 'docs', 'images');
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
const DESKTOP = { viewport: { width: 1280, height: 900 } };

/** The text of every tool_result the agent received for its ExitPlanMode calls, in order. */
function planAnswers(events: any[]): string[] {
  const answers: string[] = [];
  for (const event of events) {
    if (event.type !== 'user' || !Array.isArray(event.message?.content)) continue;
    for (const block of event.message.content) {
      if (block?.type !== 'tool_result') continue;
      const content = block.content;
      answers.push(typeof content === 'string' ? content : JSON.stringify(content));
    }
  }
  return answers;
}

describe('the review page in real Chromium (ultraplan-server /review/<id>)', function () {
  this.timeout(120_000);
  let server: ServerProcess;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  async function open(device: typeof PHONE | typeof DESKTOP): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext(device);
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (err) => errors.push(err.message));
    return { page, errors };
  }

  /** Opens the one-time link as a person does: the link, then the one button. */
  async function openLink(page: Page, sessionId: string, tap: boolean): Promise<void> {
    const link = await mintLink(server, sessionId);
    assert.equal(link.one_time, true);
    await page.goto(`${server.url}${link.path}`);
    const openButton = page.getByRole('button', { name: 'Open the review' });
    if (tap) await openButton.tap();
    else await openButton.click();
    await page.waitForURL(`${server.url}/review/${sessionId}`);
  }

  before(async () => {
    ensureServerBuilt();
    ensureReviewPageBuilt();
    server = await startServer({ scenario: example('revise.json') });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  });
  after(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    if (server) assert.equal(await server.stop(), 0);
  });

  it('on a phone: opens the link, comments on a line, rejects, and approves the revision', async () => {
    const id = await createSession(server, 'Fix the parser');
    await waitForStatus(server, id, 'requires_action');
    const { page, errors } = await open(PHONE);
    await openLink(page, id, true);
    const plan = page.locator('#plan');
    await plan.getByText('Rewrite the parser.').waitFor();
    // The cookie is the page's alone: a script cannot read it.
    assert.equal(await page.evaluate(() => document.cookie), '');
    // Plan text wraps: nothing scrolls sideways at 390 px.
    const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, view: window.innerWidth }));
    assert.ok(widths.scroll <= widths.view, `the page scrolls sideways: ${widths.scroll} > ${widths.view}`);

    await page.locator('#plan li', { hasText: 'Rewrite the parser.' }).tap();
    await page.locator('.comment-composer textarea').fill('Keep the parser; the bug is in the tokenizer');
    await page.getByRole('button', { name: 'Add comment' }).tap();
    assert.equal(await page.locator('.comment-card').count(), 1);
    await page.getByRole('button', { name: 'Reject', exact: true }).tap();

    await plan.getByText('Fix the tokenizer').waitFor({ timeout: 30_000 });
    await page.screenshot({ path: path.join(IMAGES, 'review-page-phone.png'), fullPage: true });
    await page.getByRole('button', { name: 'Approve', exact: true }).tap();
    await page.locator('.outcome').getByText('Executing plan v2.').waitFor({ timeout: 30_000 });

    const answers = planAnswers(await allEvents(server, id));
    assert.equal(answers.length >= 2, true, `two plan answers: ${JSON.stringify(answers)}`);
    assert.match(answers[0] ?? '', /Keep the parser; the bug is in the tokenizer/);
    assert.match(answers[0] ?? '', /Rewrite the parser/, 'the comment quotes the line it is on');
    assert.deepEqual(errors, [], 'no console error (a CSP violation would be one)');
  });

  it('on a desktop: opens the link and approves; the link does not open a second time', async () => {
    const id = await createSession(server, 'Plan the release');
    await waitForStatus(server, id, 'requires_action');
    const { page, errors } = await open(DESKTOP);
    const link = await mintLink(server, id);
    await page.goto(`${server.url}${link.path}`);
    await page.getByRole('button', { name: 'Open the review' }).click();
    await page.waitForURL(`${server.url}/review/${id}`);
    await page.locator('#plan').getByText('Rewrite the parser.').waitFor();
    await page.screenshot({ path: path.join(IMAGES, 'review-page-desktop.png') });
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await waitFor(async () => planAnswers(await allEvents(server, id)).length === 1 || undefined, {
      message: 'the approval to reach the agent',
    });

    // The same link in another browser: used up.
    const other = await open(DESKTOP);
    await other.page.goto(`${server.url}${link.path}`);
    await other.page.getByRole('button', { name: 'Open the review' }).click();
    await other.page.getByText('already used').waitFor();
    assert.deepEqual(errors, []);
  });

  it("a one-time link's browser session ends with Sign out: its drafts go, and its cookie reads nothing more", async () => {
    const id = await createSession(server, 'Plan the cleanup');
    await waitForStatus(server, id, 'requires_action');
    const { page, errors } = await open(DESKTOP);
    await openLink(page, id, false);
    await page.locator('#plan').getByText('Rewrite the parser.').waitFor();
    await page.locator('#feedback').fill('A draft that must not outlive the sign-out');
    await page.evaluate(() => window.dispatchEvent(new Event('pagehide')));
    assert.ok((await page.evaluate(() => sessionStorage.length)) > 0, 'the draft was kept in the tab while signed in');
    const readStatus = () => page.evaluate(async (sessionId) => (await fetch(`/v1/sessions/${sessionId}/events`)).status, id);
    assert.equal(await readStatus(), 200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Signed out' }).waitFor();
    await page.getByText('To review again, open a new review link.').waitFor();
    assert.equal(await page.getByRole('link', { name: 'Sign in again' }).count(), 0, 'a used link cannot sign in again');
    assert.equal(await page.locator('#plan').count(), 0);
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'the draft is gone from the tab');
    // Before the refused reads below (Chromium logs a refused fetch as a console error).
    assert.deepEqual(errors, []);
    assert.equal(await readStatus(), 401);
    await page.reload();
    assert.equal(await page.locator('#plan').count(), 0, 'the page does not open again without a new link');
  });

  it('a page on another site cannot post to the session, even with the reviewer signed in', async () => {
    const id = await createSession(server, 'Plan the migration');
    await waitForStatus(server, id, 'requires_action');
    const { page } = await open(DESKTOP);
    await openLink(page, id, false);
    await page.locator('#plan').getByText('Rewrite the parser.').waitFor();
    const before = (await allEvents(server, id)).length;
    // Another site in the same browser: `localhost` is not the same site as 127.0.0.1.
    const attacker = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>cats</title>');
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const attackerPage = await page.context().newPage();
      await attackerPage.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
      const target = `${server.url}/v1/sessions/${id}/events`;
      const body = JSON.stringify({ events: [{ type: 'user', message: { role: 'user', content: 'planted' } }] });
      await attackerPage.evaluate(
        async ({ target, body }) => {
          await fetch(target, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body });
        },
        { target, body },
      );
      await waitFor(
        () =>
          server
            .stderr()
            .split('\n')
            .find((l) => l.includes(`POST /v1/sessions/${id}/events 403`)),
        {
          message: 'the server to refuse the cross-site POST',
        },
      );
      assert.equal((await allEvents(server, id)).length, before, 'nothing was planted');
    } finally {
      attacker.close();
    }
  });
});

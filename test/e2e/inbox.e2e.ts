// The plan inbox in real code-server + Chromium: three sessions on two backends (the real
// ultraplan-server on 127.0.0.1 and the embedded demo) at different phases are listed in the right
// groups; a plan that arrives while its review is hidden raises exactly one notification, and a
// reload neither repeats it nor loses the view or the history; Clear History forgets the finished
// session and keeps the live ones.
import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { dismissNotifications, notificationCenterMessages, readStatusBar, runCommand, screenshot, waitFor } from './harness';
import { SIDEBAR, inboxGroups, listSessions, planTask, reviewFrame, scenario, suiteWindow } from './ultraplanSteps';
import { toCodeSessionId } from '../../src/core/codeSessions';
import type { ServerProcess } from '../support/serverProcess';

/** The inbox's sessions: each group and the session titles under it, without "Plans on disk" (plansOnDisk.ts, a group of files). */
async function inboxRows(page: Page): Promise<Record<string, string[]>> {
  const { ['Plans on disk']: _files, ...sessions } = await inboxGroups(page);
  return sessions;
}

async function waitForInbox(page: Page, expected: Record<string, string[]>, what: string): Promise<void> {
  // On timeout waitFor quotes the rows it last saw.
  await waitFor(() => inboxRows(page), {
    timeoutMs: 40_000,
    intervalMs: 500,
    message: `${what}: the inbox to show ${JSON.stringify(expected)}`,
    until: (rows) => JSON.stringify(rows) === JSON.stringify(expected),
  });
}

/** The reads of a session (its status or its events, not its stream) the server has answered: one log line each. */
function readsOf(server: ServerProcess, sessionId: string): number {
  const path = ` GET /v1/code/sessions/${toCodeSessionId(sessionId)}`;
  return server
    .stderr()
    .split('\n')
    .filter((line) => line.includes(path) && !line.includes('/events/stream')).length;
}

/** Waits until the extension has read the session `count` more times: each read could announce its plan again. */
async function morePolls(server: ServerProcess, title: string, count: number): Promise<void> {
  const sessions = await listSessions(server);
  const session = sessions.find((s) => s.title.includes(title));
  if (!session) throw new Error(`no session "${title}" on the server (it has ${JSON.stringify(sessions.map((s) => s.title))})`);
  const from = readsOf(server, session.id);
  await waitFor(() => readsOf(server, session.id) >= from + count || undefined, {
    timeoutMs: 30_000,
    intervalMs: 250,
    message: `${count} more reads of "${title}" (${from} so far)`,
  });
}

/** The notifications that announce a need (a plan ready, a question). */
const needs = (texts: string[]) => texts.filter((t) => /ready for "|asks a question in "/.test(t));

/** Drags the side bar's edge so rows show their descriptions (for the screenshots). */
async function widenSidebar(page: Page, width: number): Promise<void> {
  const box = await page.locator(SIDEBAR).boundingBox();
  if (!box) throw new Error('the side bar is not shown');
  await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + width, box.y + box.height / 2, { steps: 8 });
  await page.mouse.up();
}

async function showInbox(page: Page, probe: { executeCommand(command: string): Promise<unknown> }): Promise<void> {
  await probe.executeCommand('ultraplan.inbox.focus');
  await page.locator(`${SIDEBAR} .monaco-list-row`).first().waitFor({ state: 'visible', timeout: 20_000 });
}

describe('the plan inbox: three sessions on two backends, one notification, a reload, Clear History', function () {
  const suite = suiteWindow({ suite: 'inbox', scenario: scenario('inbox.json') });

  it('lists a done server session, a running one and the embedded demo waiting for an answer in their groups', async function () {
    const w = suite.window;
    const { page, probe } = w;
    // Empty: the welcome, with its buttons.
    await probe.executeCommand('ultraplan.inbox.focus');
    const welcome = page.locator(`${SIDEBAR} .welcome-view-content`);
    await welcome.waitFor({ state: 'visible', timeout: 20_000 });
    assert.match((await welcome.textContent()) ?? '', /No planning sessions yet/);
    assert.deepEqual(
      (await welcome.locator('.monaco-button').allInnerTexts()).map((t) => t.trim()),
      ['Plan a Task', 'Choose Backend', 'Attach to Session…'],
    );
    await screenshot(page, 'inbox-welcome');
    // Server session 1: planned, approved in its review (open all along: no notification), completed.
    await planTask(page, 'first server task');
    const first = await reviewFrame(page, '#plan li');
    await first.getByRole('button', { name: 'Approve', exact: true }).click();
    await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 30_000 });

    // The embedded demo: it asks a question at once, its review on screen.
    await probe.updateConfiguration('ultraplan', 'backend', 'embedded');
    await probe.updateConfiguration('ultraplan', 'agent.choice', 'demo');
    await planTask(page, 'demo task', 'Ultraplan: needs input');

    // Server session 2: its review is closed while the agent is still planning.
    await probe.updateConfiguration('ultraplan', 'backend', 'server');
    await planTask(page, 'second server task', 'Ultraplan: needs input');
    await waitFor(async () => ((await listSessions(suite.server)).length === 2 ? true : undefined), {
      timeoutMs: 20_000,
      message: 'the second server session',
    });
    await waitFor(
      async () => {
        const frame = await reviewFrame(page, 'h1.title');
        return /second server task/.test((await frame.locator('h1.title').textContent()) ?? '') ? true : undefined;
      },
      { timeoutMs: 15_000, message: 'the review of the second server session' },
    );
    await probe.executeCommand('workbench.action.closeAllEditors');

    await showInbox(page, probe);
    await waitForInbox(
      page,
      { 'Needs you': ['demo task'], Running: ['second server task'], Done: ['first server task'] },
      'while the second server session plans',
    );
    const badge = await page.locator('.activitybar .badge-content').allInnerTexts();
    assert.ok(badge.includes('1'), `the badge counts the one session that needs you (badges: ${JSON.stringify(badge)})`);

    // The row's tooltip: phase, backend, and the mode the session reported (the scripted agent's init says plan).
    await dismissNotifications(page);
    await widenSidebar(page, 520);
    const hover = page.locator('.monaco-hover', { hasText: 'Agent mode' }).first();
    // A hover shows after a delay and goes when the row is re-rendered: move in again until it shows.
    await waitFor(
      async () => {
        await page.mouse.move(700, 600);
        await page.locator(`${SIDEBAR} .monaco-list-row`, { hasText: 'second server task' }).hover();
        return hover.waitFor({ state: 'visible', timeout: 3_000 }).then(
          () => true,
          () => undefined,
        );
      },
      { timeoutMs: 15_000, intervalMs: 100, message: "the row's tooltip" },
    );
    const tip = (await hover.innerText()).replace(/\s+/g, ' ');
    assert.match(tip, /second server task Phase: Planning Backend: Server http:\/\/127\.0\.0\.1:\d+ Agent mode: plan Revisions: 0/);
    await screenshot(page, 'inbox-running');
  });

  it('raises one notification when the plan arrives while its review is hidden, and none for reviews on screen', async function () {
    const { page } = suite.window;
    await waitForInbox(
      page,
      { 'Needs you': ['second server task', 'demo task'], Done: ['first server task'] },
      'once the second plan is ready',
    );
    // A few more polls of the same plan: still one.
    await morePolls(suite.server, 'second server task', 2);
    assert.deepEqual(needs(await notificationCenterMessages(page)), ['Ultraplan: plan ready for "second server task".']);
    const badge = await page.locator('.activitybar .badge-content').allInnerTexts();
    assert.ok(badge.includes('2'), `the badge counts two sessions (badges: ${JSON.stringify(badge)})`);
    // A click on the row opens that session's review.
    await page.locator(`${SIDEBAR} .monaco-list-row`, { hasText: 'second server task' }).click();
    const frame = await reviewFrame(page, '#plan li');
    assert.match((await frame.locator('h1.title').textContent()) ?? '', /second server task/);
    await screenshot(page, 'inbox');
  });

  it('comes back after a window reload with the same groups and history, without announcing the plan again', async function () {
    const w = suite.window;
    await w.reload();
    await readStatusBar(w.page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    await showInbox(w.page, w.probe);
    await waitForInbox(w.page, { 'Needs you': ['second server task', 'demo task'], Done: ['first server task'] }, 'after the reload');
    // The re-attached session replays its log (the plan comes up again): give it a few polls.
    await morePolls(suite.server, 'second server task', 2);
    assert.deepEqual(needs(await notificationCenterMessages(w.page)), []);
  });

  it('Clear History forgets the finished session after a confirmation and keeps the live ones', async function () {
    const { page, probe } = suite.window;
    await showInbox(page, probe);
    await runCommand(page, 'Ultraplan: Clear History');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 10_000 });
    assert.match((await dialog.textContent()) ?? '', /Forget 1 finished session/);
    await dialog.locator('.monaco-button', { hasText: 'Clear History' }).first().click();
    await waitForInbox(page, { 'Needs you': ['second server task', 'demo task'] }, 'after Clear History');
    await screenshot(page, 'inbox-cleared');
  });

  it('lists the plan a teleport saved under its session, in Done, and opens it from there', async function () {
    const { page, probe } = suite.window;
    await probe.updateConfiguration('ultraplan', 'teleport.target', 'file');
    await page.locator(`${SIDEBAR} .monaco-list-row`, { hasText: 'second server task' }).click();
    const frame = await reviewFrame(page, '#plan li');
    await waitFor(async () => ((await frame.getByRole('button', { name: 'Teleport', exact: true }).isEnabled()) ? true : undefined), {
      timeoutMs: 15_000,
      message: 'the plan to be decidable',
    });
    await frame.getByRole('button', { name: 'Teleport', exact: true }).click();
    await waitForInbox(page, { 'Needs you': ['demo task'], Done: ['second server task'] }, 'after the teleport');
    const openedPlan = () => probe.editors().then((open) => open.some((e) => /\/\.ultraplan\/plans\/[^/]+\.md$/.test(e.uri)));
    await waitFor(async () => ((await openedPlan()) ? true : undefined), { timeoutMs: 15_000, message: 'the teleport to open the plan' });
    await probe.executeCommand('workbench.action.closeAllEditors');
    await waitFor(async () => ((await openedPlan()) ? undefined : true), { timeoutMs: 10_000, message: 'the editors to close' });
    // The session row expands to the saved file; a click opens it. The row may still be redrawn
    // (the teleport archives the session), which can swallow a click on its twistie: click again
    // while it shows collapsed.
    const twistie = page
      .locator(`${SIDEBAR} .monaco-list-row`, { hasText: 'second server task' })
      .locator('.monaco-tl-twistie.collapsible');
    const planRow = page.locator(`${SIDEBAR} .monaco-list-row[aria-level="3"]`);
    await waitFor(
      async () => {
        if (await planRow.isVisible()) return true;
        if (await twistie.evaluate((e) => e.classList.contains('collapsed'), undefined, { timeout: 2_000 }).catch(() => false)) {
          await twistie.click({ timeout: 2_000 }).catch(() => undefined);
        }
        return undefined;
      },
      { timeoutMs: 15_000, message: 'the session row to be expandable and expand to its saved plan' },
    );
    const name = ((await planRow.locator('.label-name').textContent()) ?? '').trim();
    assert.match(name, /^\d{4}-\d{2}-\d{2}-add-a-changelog\.plan\.md$/);
    await planRow.click();
    await waitFor(async () => ((await probe.editors()).some((e) => e.uri.endsWith(`.ultraplan/plans/${name}`)) ? true : undefined), {
      timeoutMs: 15_000,
      message: 'the saved plan to open from the inbox',
    });
    await screenshot(page, 'inbox-saved-plan');
  });

  it("stops a running session and removes a finished one from the row's buttons", async function () {
    const { page } = suite.window;
    const row = (title: string) => page.locator(`${SIDEBAR} .monaco-list-row`, { hasText: title });
    const rowButton = async (title: string, action: string) => {
      await row(title).hover();
      await row(title).locator(`.action-label[aria-label="${action}"]`).click();
    };
    // Stop asks first (the agent is stopped and its session archived).
    await rowButton('demo task', 'Stop Session');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 10_000 });
    assert.match((await dialog.textContent()) ?? '', /Stop "demo task"\?/);
    await dialog.locator('.monaco-button', { hasText: 'Stop Session' }).first().click();
    await waitForInbox(page, { Done: ['demo task', 'second server task'] }, 'after Stop');
    // Remove from History is on finished sessions only, and asks nothing (Clear History does).
    await rowButton('second server task', 'Remove from History');
    await waitForInbox(page, { Done: ['demo task'] }, 'after Remove from History');
    await screenshot(page, 'inbox-stopped-removed');
  });
});

// A clarifying question answered from the panel, then a window reload while the plan waits:
// the session is re-attached from workspace state, the panel comes back through its serializer,
// and the plan is approved after the reload. Then kill -9 of the server while the next plan waits:
// the panel says it is reconnecting, and once the server runs again the plan is decided (real
// server, real code-server + Chromium).
import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { readStatusBar, screenshot, waitFor } from './harness';
import { startServer, type ServerProcess } from '../support/serverProcess';
import {
  decisionsSent,
  exitPlanResults,
  HOST_NOTICE,
  listSessions,
  onlySession,
  planTask,
  reviewFrame,
  scenario,
  sessionEvents,
  suiteWindow,
  waitForEvents,
  AFTER_RELOAD_MS,
} from './ultraplanSteps';

/** Answers the agent's question from the panel (Ctrl+Enter in the reply box) and waits for the plan. */
async function replyThenPlan(page: Page, server: ServerProcess, sessionId: string): Promise<void> {
  const frame = await reviewFrame(page, '.question');
  assert.match((await frame.locator('.question').textContent()) ?? '', /Node 20 or Node 22/);
  await frame.getByLabel('Your reply').fill('Node 20, please.');
  await screenshot(page, 'question');
  // Ctrl+Enter in the reply box sends it, as in the comment composer.
  await frame.getByLabel('Your reply').press('Control+Enter');
  await waitForEvents(
    server,
    sessionId,
    (events) => events.some((e) => e.type === 'user' && (e as { message?: { content?: unknown } }).message?.content === 'Node 20, please.'),
    'the reply to reach the session',
  );
  await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
  const plan = await reviewFrame(page, '#plan li');
  assert.match((await plan.locator('#plan').textContent()) ?? '', /Target node20 in esbuild/);
}

/** The text of the host's notice in the review panel ('' when none is shown). */
async function panelNotice(page: Page): Promise<string> {
  const frame = await reviewFrame(page, '#plan');
  const notice = frame.locator(HOST_NOTICE);
  return (await notice.isVisible()) ? ((await notice.textContent()) ?? '') : '';
}

describe('question -> reply -> plan, then a window reload and approve by keybinding (server backend)', function () {
  const suite = suiteWindow({ suite: 'question-reload', scenario: scenario('question.json') });
  let sessionId = '';

  it("shows the agent's question with a reply box; the reply reaches the agent and a plan follows", async function () {
    const { page } = suite.window;
    await planTask(page, 'make the build target one Node version', 'Ultraplan: needs input');
    sessionId = (await onlySession(suite.server)).id;
    await replyThenPlan(page, suite.server, sessionId);
  });

  it('comes back after a window reload with the plan still ready, then approves it', async function () {
    const w = suite.window;
    const before = w.probe.announcement();
    const after = await w.reload();
    assert.notEqual(after.startedAt, before?.startedAt, 'a new extension host');
    await readStatusBar(w.page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    const frame = await reviewFrame(w.page, '#plan li', AFTER_RELOAD_MS);
    await waitFor(async () => ((await frame.getByRole('button', { name: 'Approve', exact: true }).isEnabled()) ? true : undefined), {
      timeoutMs: 20_000,
      message: 'Approve to be enabled after the reload',
    });
    await screenshot(w.page, 'after-reload');
    assert.equal(decisionsSent(await sessionEvents(suite.server, sessionId)).length, 0, 'nothing decided by the reload itself');
    // Approve with the keybinding while the review panel has focus (Ctrl+Alt+A).
    await frame.locator('h1.title').click();
    await w.page.keyboard.press('Control+Alt+KeyA');
    const approved = await waitForEvents(suite.server, sessionId, (e) => exitPlanResults(e).find((r) => !r.isError), 'the approval');
    assert.match(approved.text, /## Approved Plan:\n# Plan: build for Node 20/);
    await readStatusBar(w.page, 'Ultraplan: approved · completed', { timeoutMs: 30_000 });
    await screenshot(w.page, 'approved-after-reload');
  });

  it('kill -9 of the server while a plan waits: the panel says it is reconnecting; the server started again brings the plan back, and Approve reaches it', async function () {
    const { page } = suite.window;
    const server = suite.server;
    await planTask(page, 'the build target again', 'Ultraplan: needs input');
    const next = (await listSessions(server)).find((s) => s.id !== sessionId);
    assert.ok(next, 'a second session');
    await replyThenPlan(page, server, next.id);

    await server.kill();
    const reconnecting = await waitFor(
      async () => {
        const notice = await panelNotice(page);
        return notice.startsWith('Reconnecting') ? notice : undefined;
      },
      {
        timeoutMs: 20_000,
        message: 'the panel to say it is reconnecting',
        retryErrors: true,
      },
    );
    assert.match(reconnecting, /could not be read .*Trying again in \d+ s \(\d of 5 attempts failed\)/);
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 5_000 });
    await screenshot(page, 'reconnecting');

    // The same data directory, port and token: what it acknowledged before the kill is on disk.
    const again = await startServer({
      scenario: scenario('question.json'),
      dataDir: server.dataDir,
      token: server.token,
      keepAliveMs: 2000,
      extraArgs: ['--port', new URL(server.url).port],
    });
    try {
      await waitFor(async () => ((await panelNotice(page)) === '' ? true : undefined), {
        timeoutMs: 20_000,
        message: 'the reconnecting notice to go once the server answers',
        retryErrors: true,
      });
      const frame = await reviewFrame(page, '#plan li');
      await frame.getByRole('button', { name: 'Approve', exact: true }).click();
      const approved = await waitForEvents(again, next.id, (e) => exitPlanResults(e).find((r) => !r.isError), 'the approval');
      assert.match(approved.text, /# Plan: build for Node 20/);
      await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 30_000 });
    } finally {
      await again.stop();
    }
  });
});

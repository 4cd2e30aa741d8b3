// A clarifying question answered from the panel, then a window reload while the plan waits:
// the session is re-attached from workspace state, the panel comes back through its serializer,
// and the plan is approved after the reload (real server, real code-server + Chromium).
import * as assert from 'node:assert/strict';
import { readStatusBar, screenshot, waitFor } from './harness';
import {
  decisionsSent,
  exitPlanResults,
  onlySession,
  planTask,
  reviewFrame,
  scenario,
  sessionEvents,
  suiteWindow,
  waitForEvents,
} from './ultraplanSteps';

describe('question -> reply -> plan, then a window reload and approve by keybinding (server backend)', function () {
  const suite = suiteWindow({ suite: 'question-reload', scenario: scenario('question.json') });
  let sessionId = '';

  it("shows the agent's question with a reply box; the reply reaches the agent and a plan follows", async function () {
    const { page } = suite.window;
    await planTask(page, 'make the build target one Node version', 'Ultraplan: needs input');
    sessionId = (await onlySession(suite.server)).id;
    const frame = await reviewFrame(page, '.question');
    assert.match((await frame.locator('.question').textContent()) ?? '', /Node 20 or Node 22/);
    await frame.getByLabel('Your reply').fill('Node 20, please.');
    await screenshot(page, 'question');
    // Ctrl+Enter in the reply box sends it, as in the comment composer.
    await frame.getByLabel('Your reply').press('Control+Enter');
    await waitForEvents(
      suite.server,
      sessionId,
      (events) =>
        events.some((e) => e.type === 'user' && (e as { message?: { content?: unknown } }).message?.content === 'Node 20, please.'),
      'the reply to reach the session',
    );
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    const plan = await reviewFrame(page, '#plan li');
    assert.match((await plan.locator('#plan').textContent()) ?? '', /Target node20 in esbuild/);
  });

  it('comes back after a window reload with the plan still ready, then approves it', async function () {
    const w = suite.window;
    const before = w.probe.announcement();
    const after = await w.reload();
    assert.notEqual(after.startedAt, before?.startedAt, 'a new extension host');
    await readStatusBar(w.page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    const frame = await reviewFrame(w.page, '#plan li');
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
});

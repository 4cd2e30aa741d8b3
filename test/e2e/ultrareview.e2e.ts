// Ultrareview in real code-server + Chromium: a real git repository (branch, commits, staged and
// unstaged work), the real Claude ACP adapter as the fleet's agent with only its model scripted.
// The findings appear as comment threads on their lines; the refuted one does not; Dismiss with a
// reason holds across a window reload and a second review; Fix starts a planning session whose plan
// opens in the review panel.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import {
  answerInputBox,
  answerQuickPick,
  openTestWindow,
  readStatusBar,
  runCommand,
  screenshot,
  waitFor,
  type TestWindow,
} from './harness';
import { killGroupsLeft, processesWithHome } from '../support/processes';
import { anthropicApi } from '../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer, type ModelReply, type ModelRequestView } from '../support/modelApi/scenario';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanFile } from '../support/realAgents';
import { ReviewRepo } from '../support/review/gitRepo';
import { DIVISION, OFF_BY_ONE, TOKEN, verdictFor } from '../support/review/findings';
import { FINDER_MARK, VERIFIER_MARK, json } from '../support/review/reviewAgents';
import { reportIfFailed, reviewFrame } from './ultraplanSteps';

const FIX_PLAN = '# Stop logging the token\n\n1. Remove the console.log of the token in src/login.ts.\n';

/** Finders report three findings, verifiers refute the division; a Fix session plans and asks to exit plan mode. */
function route(view: ModelRequestView): ModelReply {
  const text = view.lastUser.text;
  if (text.includes(VERIFIER_MARK)) return verdictFor(/^Title: (.*)$/m.exec(text)?.[1] ?? '');
  if (text.includes(FINDER_MARK)) return json({ findings: [OFF_BY_ONE, DIVISION, TOKEN] });
  const last = view.lastUser.toolResults.at(-1);
  if (!last) return { toolCalls: [{ name: 'Write', input: { file_path: claudePlanFile(view), content: FIX_PLAN } }] };
  if (last.name === 'Write') return { toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] };
  if (last.name === 'ToolSearch') return { toolCalls: [{ name: 'ExitPlanMode', input: {} }] };
  return { text: 'Waiting for the review.' };
}

async function openFile(page: Page, file: string): Promise<void> {
  await page.keyboard.press('Control+P');
  await answerInputBox(page, file, { submit: false });
  await answerQuickPick(page, path.basename(file));
  await page.locator(`.tab.active[aria-label*="${path.basename(file)}"]`).waitFor({ timeout: 10_000 });
}

/** The thread widget whose title reads `title`, in the active editor. */
function thread(page: Page, title: string): Locator {
  return page.locator('.review-widget', { has: page.locator('.review-title', { hasText: title }) });
}

/** The 1-based line the thread's zone widget follows: its top against the editor's line height. */
async function threadLine(page: Page, title: string): Promise<number> {
  const zone = page.locator('.zone-widget', { has: page.locator('.review-title', { hasText: title }) }).first();
  await zone.waitFor({ timeout: 20_000 });
  const top = await zone.evaluate((el) => parseFloat((el as HTMLElement).style.top));
  const lineHeight = await page
    .locator('.monaco-editor .view-line')
    .first()
    .evaluate((el) => parseFloat((el as HTMLElement).style.height));
  return Math.round(top / lineHeight);
}

async function reviewChanges(page: Page): Promise<void> {
  await runCommand(page, 'Ultraplan: Review Changes…');
  await answerQuickPick(page, 'This branch and uncommitted work');
}

describe('ultrareview in code-server: findings as threads, Dismiss across a reload, Fix plans', function () {
  const home = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-ultrareview-home-'));
  const repo = new ReviewRepo();
  const model = new ScriptedModelServer(anthropicApi, new Scenario(Array.from({ length: 200 }, () => route)));
  let window: TestWindow | undefined;

  before(async function () {
    this.timeout(180_000);
    await model.start();
    await repo.open();
    const env = claudeEnv(home, model.url);
    window = await openTestWindow({
      suite: 'ultrareview',
      workspace: repo.root,
      settings: {
        'ultraplan.backend': 'embedded',
        'ultraplan.agent.choice': 'custom',
        'ultraplan.agent.command': ['/usr/bin/env', ...Object.entries(env).map(([key, value]) => `${key}=${value}`), CLAUDE_ADAPTER],
        'ultraplan.review.finders': 2,
      },
    });
  });
  afterEach(async function () {
    await reportIfFailed(this, window);
  });
  after(async function () {
    await window?.close();
    killGroupsLeft(processesWithHome(home));
    await model.close();
    await repo.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('Review Changes…: the verified findings are threads on their lines, the refuted one is not shown', async function () {
    this.timeout(240_000);
    const { page } = window!;
    await reviewChanges(page);
    await readStatusBar(page, 'Review: 2 open', { timeoutMs: 180_000 });
    await openFile(page, 'src/app.ts');
    assert.equal(await threadLine(page, OFF_BY_ONE.title), 3);
    const widget = thread(page, OFF_BY_ONE.title);
    const body = await widget.locator('.review-comment').first().innerText();
    assert.match(body, /verified by 2 of 2/);
    // The custom command runs through /usr/bin/env, so the agent is labelled after it.
    assert.match(body, /Found by env \(ACP\) #1, env \(ACP\) #2; confirmed by env \(ACP\) verifier/);
    assert.equal(await thread(page, DIVISION.title).count(), 0);
    await screenshot(page, 'ultrareview-threads');
    await openFile(page, 'src/login.ts');
    assert.equal(await threadLine(page, TOKEN.title), 2);
    // The secret was never sent to the model.
    assert.ok(model.requests.every((r) => !JSON.stringify(r.body ?? '').includes('do-not-send')));
  });

  it('Dismiss with a reason: gone, still gone after a reload, and not raised again by a second review', async function () {
    this.timeout(300_000);
    const win = window!;
    await openFile(win.page, 'src/app.ts');
    await thread(win.page, OFF_BY_ONE.title).getByRole('button', { name: 'Dismiss…' }).click();
    await answerInputBox(win.page, 'items never grows past the bound here', { title: 'Dismiss' });
    await readStatusBar(win.page, 'Review: 1 open', { timeoutMs: 20_000 });
    // The workspace state is written at once, but the browser's storage flushes on its own timer: a
    // person does not reload within the second of a click, and neither does this test.
    await win.page.waitForTimeout(3000);
    await win.reload();
    await readStatusBar(win.page, 'Review: 1 open', { timeoutMs: 60_000 });
    await openFile(win.page, 'src/login.ts');
    assert.equal(await threadLine(win.page, TOKEN.title), 2);
    const findersBefore = model.rounds.filter((r) => r.view?.lastUser.text.includes(FINDER_MARK)).length;
    await reviewChanges(win.page);
    await waitFor(
      () => (model.rounds.filter((r) => r.view?.lastUser.text.includes(FINDER_MARK)).length >= findersBefore + 2 ? true : undefined),
      {
        timeoutMs: 120_000,
        message: 'the second review to run its finders',
      },
    );
    await readStatusBar(win.page, 'Review: 1 open', { timeoutMs: 180_000 });
    await openFile(win.page, 'src/app.ts');
    await win.page.waitForTimeout(1000);
    assert.equal(await thread(win.page, OFF_BY_ONE.title).count(), 0);
    await screenshot(win.page, 'ultrareview-after-dismiss');
  });

  it('Fix starts a planning session for the finding, and its plan opens in the review panel', async function () {
    this.timeout(240_000);
    const { page } = window!;
    await openFile(page, 'src/login.ts');
    await thread(page, TOKEN.title).getByRole('button', { name: 'Fix' }).click();
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 180_000 });
    const frame = await reviewFrame(page, '#plan li');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Remove the console\.log of the token/);
    const fixPrompt = model.rounds.find((r) => r.view?.lastUser.text.includes('Fix this review finding'));
    assert.match(fixPrompt?.view?.lastUser.text ?? '', /src\/login\.ts \(lines 2-2\): The login token is written to the log/);
    await screenshot(page, 'ultrareview-fix-plan');
  });
});

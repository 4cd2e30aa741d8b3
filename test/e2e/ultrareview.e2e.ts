// Ultrareview in real code-server + Chromium: a real git repository (branch, commits, staged and
// unstaged work), the real Claude ACP adapter as the fleet's agent with only its model scripted.
// The findings appear as comment threads on their lines; the refuted one does not; Dismiss with a
// reason holds across a window reload and a second review; Fix starts a planning session whose plan
// opens in the review panel; Copy, Resolve and Reopen (across a reload); threads follow edits or
// turn outdated. Claude Code's own review runs through its stand-in (claudeUltrareviewStandIn.mjs):
// the billing notice first, its findings as threads, its {error} output as a failure.
import { UNSANDBOXED_AGENT } from './realAgentWindow';
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import {
  answerInputBox,
  answerQuickPick,
  EXTENSION_ID,
  openTestWindow,
  waitForNotification,
  readStatusBar,
  runCommand,
  screenshot,
  waitFor,
  uriArg,
  waitForStoredWorkspaceState,
  type TestWindow,
} from './harness';
import { readPersistedReviews } from '../../src/core/review/persisted';
import { REVIEW_THREADS_KEY } from '../../src/core/stateKeys';
import { killGroupsLeft, processesWithHome } from '../support/processes';
import { anthropicApi } from '../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer, type ModelReply, type ModelRequestView } from '../support/modelApi/scenario';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanFile } from '../support/realAgents';
import { startServer } from '../support/serverProcess';
import { LOGGER, ReviewRepo } from '../support/review/gitRepo';
import { DIVISION, OFF_BY_ONE, TOKEN, verdictFor } from '../support/review/findings';
import { FINDER_MARK, VERIFIER_MARK, json } from '../support/review/reviewAgents';
import { reportIfFailed, reviewFrame } from './ultraplanSteps';

const CLAUDE_STAND_IN = path.resolve(__dirname, '..', 'support', 'review', 'claudeUltrareviewStandIn.mjs');

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

/** Opens a file of the workspace in the editor (by the extension host, not the file search, which a busy machine slows). */
async function openFile(win: TestWindow, file: string): Promise<void> {
  await win.probe.executeCommand('vscode.open', uriArg(path.join(win.workspace, file)));
  await win.page.locator(`.tab.active[data-resource-name="${path.basename(file)}"]`).waitFor({ timeout: 20_000 });
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

/** Every comment zone in the page, for a failure message: its title, top, display and editor. */
async function zoneReport(page: Page): Promise<string> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('.zone-widget')]
      .map((el) => {
        const title = el.querySelector('.review-title')?.textContent?.trim() ?? '(no title)';
        const editor = el.closest('.editor-instance, .monaco-editor')?.getAttribute('data-uri') ?? '';
        return `${title} top=${el.style.top} display=${el.style.display} height=${el.style.height} ${editor}`;
      })
      .join('\n'),
  );
}

async function reviewChanges(page: Page, reviewers?: string): Promise<void> {
  await runCommand(page, 'Ultraplan: Review Changes…');
  await answerQuickPick(page, 'This branch and uncommitted work');
  if (reviewers) await answerQuickPick(page, reviewers);
}

/** Opens a folded thread as a person does: a click on its row in the Comments panel. */
async function expandThread(page: Page, title: string): Promise<void> {
  await runCommand(page, 'Comments: Focus on Comments View');
  await page.locator('.monaco-list-row', { hasText: title }).first().click();
}

describe('ultrareview in code-server: findings as threads, Dismiss across a reload, Fix plans', function () {
  const home = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-ultrareview-home-'));
  const repo = new ReviewRepo();
  const model = new ScriptedModelServer(anthropicApi, new Scenario(Array.from({ length: 200 }, () => route)));
  const claudeScenario = path.join(home, 'claude-ultrareview.json');
  const claudeCalls = path.join(home, 'claude-calls.jsonl');
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
        ...UNSANDBOXED_AGENT,
        'ultraplan.review.finders': 2,
      },
      env: { STANDIN_ULTRAREVIEW_FILE: claudeScenario, STANDIN_CALLS: claudeCalls },
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
    await openFile(window!, 'src/app.ts');
    assert.equal(await threadLine(page, OFF_BY_ONE.title), 3);
    const widget = thread(page, OFF_BY_ONE.title);
    const body = await widget.locator('.review-comment').first().innerText();
    assert.match(body, /verified by 2 of 2/);
    // The custom command runs through /usr/bin/env, so the agent is labelled after it.
    assert.match(body, /Found by env \(ACP\) #1, env \(ACP\) #2; confirmed by env \(ACP\) verifier/);
    assert.equal(await thread(page, DIVISION.title).count(), 0);
    await screenshot(page, 'ultrareview-threads');
    await openFile(window!, 'src/login.ts');
    assert.equal(await threadLine(page, TOKEN.title), 2);
    // The secret was never sent to the model.
    assert.ok(model.requests.every((r) => !JSON.stringify(r.body ?? '').includes('do-not-send')));
  });

  it('Dismiss with a reason: gone, still gone after a reload, and not raised again by a second review', async function () {
    this.timeout(300_000);
    const win = window!;
    await openFile(win, 'src/app.ts');
    await thread(win.page, OFF_BY_ONE.title).getByRole('button', { name: 'Dismiss…' }).click();
    await answerInputBox(win.page, 'items never grows past the bound here', { title: 'Dismiss' });
    await readStatusBar(win.page, 'Review: 1 open', { timeoutMs: 20_000 });
    // The workspace state is written at once, but the browser's storage flushes on its own timer: a
    // person does not reload within the second of a click, and this test waits until it is stored.
    await waitForStoredWorkspaceState(
      win.page,
      EXTENSION_ID,
      REVIEW_THREADS_KEY,
      (saved) => JSON.stringify(saved ?? null).includes('items never grows past the bound here'),
      'the dismissal in the browser storage',
    );
    await win.reload();
    await readStatusBar(win.page, 'Review: 1 open', { timeoutMs: 60_000 });
    await openFile(win, 'src/login.ts');
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
    await openFile(win, 'src/app.ts');
    await win.page.waitForTimeout(1000);
    assert.equal(await thread(win.page, OFF_BY_ONE.title).count(), 0);
    await screenshot(win.page, 'ultrareview-after-dismiss');
  });

  it('Fix starts a planning session for the finding, and its plan opens in the review panel', async function () {
    this.timeout(240_000);
    const { page } = window!;
    await openFile(window!, 'src/login.ts');
    await thread(page, TOKEN.title).getByRole('button', { name: 'Fix' }).click();
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 180_000 });
    const frame = await reviewFrame(page, '#plan li');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Remove the console\.log of the token/);
    const fixPrompt = model.rounds.find((r) => r.view?.lastUser.text.includes('Fix this review finding'));
    assert.match(fixPrompt?.view?.lastUser.text ?? '', /src\/login\.ts \(lines 2-2\): The login token is written to the log/);
    await screenshot(page, 'ultrareview-fix-plan');
  });

  it('Copy puts the finding on the clipboard; Resolve and Reopen change its state, kept across a reload', async function () {
    this.timeout(180_000);
    const win = window!;
    await win.workbench.context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await openFile(win, 'src/login.ts');
    await thread(win.page, TOKEN.title).getByRole('button', { name: 'Copy Finding' }).click();
    const copied = await waitFor(
      async () => {
        const text = await win.page.evaluate(() => navigator.clipboard.readText()).catch(() => '');
        return text.includes(TOKEN.title) ? text : undefined;
      },
      { timeoutMs: 15_000, message: 'the finding on the clipboard' },
    );
    assert.match(
      copied,
      /^src\/login\.ts:2-2 \[critical\] The login token is written to the log\n\nconsole\.log prints the token in clear text\./,
    );
    assert.match(copied, /verified by 2 of 2; found by env \(ACP\) #1, env \(ACP\) #2$/);

    await thread(win.page, TOKEN.title).getByRole('button', { name: 'Resolve' }).click();
    await readStatusBar(win.page, 'Review: 0 open', { timeoutMs: 20_000 });
    // A resolved thread folds away; it is still there, resolved, after a reload.
    await thread(win.page, TOKEN.title).waitFor({ state: 'hidden', timeout: 10_000 });
    await waitForStoredWorkspaceState(
      win.page,
      EXTENSION_ID,
      REVIEW_THREADS_KEY,
      (saved) => {
        const read = readPersistedReviews(saved);
        return read.ok && !!read.value?.threads.some((t) => t.title === TOKEN.title && t.state === 'resolved');
      },
      'the resolved thread in the browser storage',
    );
    await win.reload();
    await readStatusBar(win.page, 'Review: 0 open', { timeoutMs: 60_000 });
    await openFile(win, 'src/login.ts');
    await expandThread(win.page, TOKEN.title);
    await thread(win.page, TOKEN.title).getByRole('button', { name: 'Reopen' }).click();
    await readStatusBar(win.page, 'Review: 1 open', { timeoutMs: 20_000 });
    await thread(win.page, TOKEN.title).getByRole('button', { name: 'Resolve' }).waitFor({ timeout: 10_000 });
  });

  it("threads follow edits: a line added above moves the thread with its code; an edit of the finding's own line marks it outdated", async function () {
    this.timeout(120_000);
    const { page } = window!;
    await openFile(window!, 'src/login.ts');
    assert.equal(await threadLine(page, TOKEN.title), 2);
    await page.keyboard.press('Control+Home');
    // A statement, not a comment: Enter after a line comment would continue it onto the next line.
    await page.keyboard.type('const reviewed = true;\n');
    await waitFor(async () => ((await threadLine(page, TOKEN.title)) === 3 ? true : undefined), {
      timeoutMs: 60_000,
      message: 'the thread to move down with its line',
    });
    // Now the finding's own line (line 3) changes: the code it was raised on is gone.
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
    await page.keyboard.type(' // still logs it');
    await thread(page, TOKEN.title).waitFor({ state: 'hidden', timeout: 15_000 });
    await expandThread(page, TOKEN.title);
    await page.locator('.review-title', { hasText: `(outdated) [critical] ${TOKEN.title}` }).waitFor({ timeout: 10_000 });
    await screenshot(page, 'ultrareview-outdated');
    // Back to the reviewed code, on disk and in the editor, for the tests after this one.
    await repo.write('src/login.ts', LOGGER);
    await openFile(window!, 'src/login.ts');
    await runCommand(page, 'File: Revert File');
    // Its code is back: the thread is no longer outdated (its title says so), open on its line again.
    await page.locator('.review-title', { hasText: new RegExp(`^\\s*\\[critical\\] ${TOKEN.title}`) }).waitFor({ timeout: 30_000 });
    await waitFor(async () => ({ line: await threadLine(page, TOKEN.title), zones: await zoneReport(page) }), {
      until: ({ line }) => line === 2,
      timeoutMs: 30_000,
      message: 'the thread back on line 2',
    });
  });

  it("Claude Code's own review: the billing notice before it starts, its findings as threads, its {error} output a failure", async function () {
    this.timeout(120_000);
    const { page, probe } = window!;
    await probe.call({ op: 'updateConfiguration', section: 'ultraplan.review', key: 'claudeCommand', value: CLAUDE_STAND_IN });
    writeFileSync(
      claudeScenario,
      JSON.stringify({
        kind: 'findings',
        findings: [
          {
            file_path: 'src/app.ts',
            start_line: 8,
            end_line: 8,
            severity: 'nit',
            pr_comment: 'average() divides with no guard\n\nSay why an empty list returns 0.',
            reasoning: 'The early return is easy to miss.',
          },
        ],
      }),
    );
    await reviewChanges(page, "Claude Code's review");
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 20_000 });
    assert.match((await dialog.textContent()) ?? '', /After your free runs, Anthropic bills each review as extra usage/);
    assert.equal(existsSync(claudeCalls), false, 'Claude Code ran before the person confirmed');
    await screenshot(page, 'ultrareview-claude-notice');
    await dialog.getByRole('button', { name: 'Start Review' }).click();
    await readStatusBar(page, 'Review: 1 open', { timeoutMs: 60_000 });
    await openFile(window!, 'src/app.ts');
    assert.equal(await threadLine(page, 'average() divides with no guard'), 8);
    const body = await thread(page, 'average() divides with no guard').locator('.review-comment').first().innerText();
    assert.match(body, /Found by Claude Code ultrareview/);

    writeFileSync(claudeScenario, JSON.stringify({ kind: 'error', error: 'cloud session was archived before producing output' }));
    await reviewChanges(page, "Claude Code's review");
    await dialog.waitFor({ state: 'visible', timeout: 20_000 });
    await dialog.getByRole('button', { name: 'Start Review' }).click();
    await waitForNotification(
      page,
      'The review failed: Claude Code ultrareview failed: cloud session was archived before producing output',
      {
        timeoutMs: 60_000,
      },
    );
    await readStatusBar(page, 'Review failed', { timeoutMs: 20_000 });
  });

  it("on a session server: the reviewers are a real ultraplan-server's agent, its findings threads as before, its sessions archived", async function () {
    this.timeout(240_000);
    const { page, probe } = window!;
    const server = await startServer({
      agent: `acp:${JSON.stringify(CLAUDE_ADAPTER)}`,
      extraArgs: ['--workspace', repo.root],
      env: claudeEnv(home, model.url),
    });
    try {
      await probe.call({ op: 'updateConfiguration', section: 'ultraplan', key: 'server.url', value: server.url });
      await probe.call({ op: 'updateConfiguration', section: 'ultraplan', key: 'backend', value: 'server' });
      await runCommand(page, 'Ultraplan: Set Server Token…');
      await answerInputBox(page, server.token!, { title: 'token for' });
      // Claude Code is found now (the test before set its command): the agents review.
      await reviewChanges(page, 'Agents');
      // The off-by-one stays dismissed and the division is refuted: the token finding is the one thread.
      await waitForNotification(page, '2 issues found by 2 reviewers (1 dismissed before, not shown)', { timeoutMs: 180_000 });
      await readStatusBar(page, 'Review: 1 open', { timeoutMs: 20_000 });
      await openFile(window!, 'src/login.ts');
      assert.equal(await threadLine(page, TOKEN.title), 2);
      const body = await thread(page, TOKEN.title).locator('.review-comment').first().innerText();
      assert.match(body, new RegExp(`Found by Server ${server.url.replace(/[.]/g, '\\.')}[^#]*#1`));
      const listed = (await (await fetch(`${server.url}/v1/code/sessions`, { headers: server.headers() })).json()) as {
        data: Array<{ session_status?: string; status?: string }>;
      };
      // Two finders and a verifier for each of their six findings, every one archived (its agent stopped).
      assert.equal(listed.data.length, 8);
      assert.ok(
        listed.data.every((session) => (session.session_status ?? session.status) === 'archived'),
        JSON.stringify(listed.data),
      );
    } finally {
      await probe.call({ op: 'updateConfiguration', section: 'ultraplan', key: 'backend', value: 'embedded' }).catch(() => undefined);
      await server.stop();
    }
  });
});

// The real Codex ACP adapter (pinned, installed by scripts/setup-agents.mjs) as the embedded agent
// in real code-server + Chromium, with only the model scripted: plan -> reject with feedback ->
// revision 2 -> approve -> Codex's edit lands. Prints the time from Codex's plan request (the
// extension's log line) to "Ultraplan: plan ready" painted in the status bar.
import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { readStatusBar, screenshot, waitFor } from './harness';
import { agentBin } from '../../scripts/agents-config.cjs';
import { startScriptedResponses, userTexts, type ScriptedResponsesApi } from '../support/modelApi/openaiResponses';
import { processGroupMembers, waitGone } from '../support/processes';
import { codexConfig } from '../support/realAgents';
import { extensionLog, planTask, reviewFrame, revisionFrame, suiteWindow, writeReview } from './ultraplanSteps';
import { ORIGINAL_APP } from '../support/acpFixtures';

const IMPLEMENTED = 'export const greeting = "hello";\n';
const PLAN_1 = '# Add a greeting\n\n1. Export `greeting` from src/app.ts\n2. Test it';
const PLAN_2 = '# Add a greeting (v2)\n\n1. Export `greeting` from src/app.ts\n2. Handle an empty name\n3. Test it';
const proposed = (plan: string) => ({ text: `Here is the plan.\n\n<proposed_plan>\n${plan}\n</proposed_plan>` });

/** Installs, in the page, a watcher that notes when a status bar item first reads `text` (epoch ms). */
async function watchStatusBar(page: Page, key: string, text: string): Promise<void> {
  // A string, so the test's compiler adds no helpers the page does not have.
  await page.evaluate(`(() => {
    const marks = (window.__marks ??= {});
    const key = ${JSON.stringify(key)};
    const text = ${JSON.stringify(text)};
    function check() {
      if (marks[key]) return;
      const bar = document.getElementById('workbench.parts.statusbar');
      for (const item of bar ? bar.querySelectorAll('.statusbar-item') : []) {
        // The workbench renders spaces in labels as no-break spaces (160).
        if ((item.textContent || '').split(String.fromCharCode(160)).join(' ').includes(text)) marks[key] = performance.timeOrigin + performance.now();
      }
    }
    new MutationObserver(check).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    check();
  })()`);
}

async function mark(page: Page, key: string): Promise<number> {
  return waitFor(
    async () => (await page.evaluate((k) => (window as unknown as { __marks?: Record<string, number> }).__marks?.[k], key)) || undefined,
    {
      timeoutMs: 30_000,
      message: `the status bar mark ${key}`,
    },
  );
}

/** Epoch ms of each extension log line containing `needle` (VS Code logs local time with ms). */
function logTimes(log: string, needle: string): number[] {
  return log
    .split('\n')
    .filter((line) => line.includes(needle))
    .map((line) => {
      // VS Code's log lines carry local time; the session service's, UTC (ISO 8601).
      const stamp = /^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)\.(\d{3})(Z?)/.exec(line);
      if (!stamp) return NaN;
      const [y, mo, d, h, mi, s, ms] = stamp.slice(1, 8).map(Number) as number[];
      return stamp[8] === 'Z' ? Date.UTC(y!, mo! - 1, d!, h!, mi!, s!, ms!) : new Date(y!, mo! - 1, d!, h!, mi!, s!, ms!).getTime();
    })
    .filter((time) => !Number.isNaN(time));
}

describe('the real Codex ACP adapter in code-server, with only the model scripted', function () {
  const root = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-codex-e2e-'));
  const codexHome = path.join(root, 'codex-home');
  mkdirSync(codexHome);
  let api: ScriptedResponsesApi | undefined;
  let feedbackSeen: string[] = [];

  before(async function () {
    this.timeout(600_000);
    const { setupAgents } = await import('../../scripts/setup-agents.mjs');
    await setupAgents(['codex']);
    api = await startScriptedResponses([
      { calls: [{ type: 'function', name: 'exec_command', arguments: { cmd: 'cat src/app.ts' } }] },
      proposed(PLAN_1),
      (request) => {
        feedbackSeen = userTexts(request);
        return proposed(PLAN_2);
      },
      {
        calls: [
          { type: 'function', name: 'exec_command', arguments: { cmd: `printf 'export const greeting = "hello";\\n' > src/app.ts` } },
        ],
      },
      { text: 'Done: src/app.ts exports greeting.' },
    ]);
    writeFileSync(path.join(codexHome, 'config.toml'), codexConfig(api.baseUrl));
  });

  const suite = suiteWindow({
    suite: 'codex-agent',
    files: { 'README.md': '# Demo project\n', 'src/app.ts': ORIGINAL_APP },
    settings: {
      'ultraplan.agent.choice': 'custom',
      'ultraplan.agent.command': [agentBin('codex')],
      'ultraplan.afterApproval': 'acceptEdits',
      // Its model provider is configured in a CODEX_HOME of the test's, outside the session's HOME:
      // a sandbox does not show it (docs/security.md, "Not done yet").
      'ultraplan.localService.sandbox': 'off',
    },
    env: { CODEX_HOME: codexHome, OPENAI_API_KEY: 'sk-scripted', NO_BROWSER: '1' },
  });

  after(async () => {
    await api?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('plans read-only, shows the real plan, revises on feedback, and implements after approval; the adapter ends', async function () {
    const { page, workspace } = suite.window;
    await watchStatusBar(page, 'ready1', 'Ultraplan: plan ready');
    await planTask(page, 'add a greeting');
    const painted = await mark(page, 'ready1');
    const requested = logTimes(extensionLog(suite.window), 'plan review requested')[0];
    assert.ok(requested, 'the extension logged the plan request');
    console.log(
      `      Codex plan request -> status bar "plan ready" painted: ${Math.round(painted - requested)} ms (log timestamps have ms resolution)`,
    );

    const frame = await reviewFrame(page, '#plan li');
    assert.match(
      (await frame.locator('#plan').textContent()) ?? '',
      /Export greeting from src\/app\.ts|Export `?greeting`? from src\/app\.ts/,
    );
    assert.equal(readFileSync(path.join(workspace, 'src', 'app.ts'), 'utf8'), ORIGINAL_APP);
    await screenshot(page, 'codex-plan-ready');

    await writeReview(frame, { line: 'Test it', comment: 'Cover the empty name', feedback: 'Also handle an empty name.' });
    await frame.getByRole('button', { name: 'Reject', exact: true }).click();
    const revised = await revisionFrame(page, 'Revision 2 of 2');
    assert.match((await revised.locator('#plan').textContent()) ?? '', /Handle an empty name/);
    assert.ok(
      feedbackSeen.some((text) => text.includes('Also handle an empty name.')),
      `the model was sent: ${JSON.stringify(feedbackSeen)}`,
    );
    await revised.getByRole('button', { name: 'Approve', exact: true }).click();

    await waitFor(() => (readFileSync(path.join(workspace, 'src', 'app.ts'), 'utf8') === IMPLEMENTED ? true : undefined), {
      timeoutMs: 60_000,
      message: "Codex's edit to land",
    });
    await readStatusBar(page, 'Ultraplan: approved', { timeoutMs: 30_000 });
    await screenshot(page, 'codex-approved');

    const pid = Number(/started \S*codex-acp \(pid (\d+)[,)]/.exec(extensionLog(suite.window))?.[1]);
    assert.ok(pid > 0, 'the extension logged the adapter pid');
    assert.ok(await waitGone(pid, 20_000), `the adapter ${pid} did not end after the approved plan's result`);
    await waitFor(() => (processGroupMembers(pid).length === 0 ? true : undefined), {
      timeoutMs: 20_000,
      message: `process group ${pid} to empty`,
    });
  });
});

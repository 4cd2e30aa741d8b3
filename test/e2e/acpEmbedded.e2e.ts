// The embedded default with a real ACP agent program (the scripted fake, spawned through the
// extension's real path) in real code-server + Chromium: the agent chosen in "Choose Backend…"
// as a custom command line, plan -> reject with a line comment -> revised plan -> approve; the
// agent's own record proves the feedback (with the quoted line) and the approval (the manual
// allow option, not a bypass) arrived; the agent label shows in the panel and the tooltip; Stop
// ends the agent process; extension deactivation leaves it to the session service.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import {
  answerInputBox,
  answerQuickPick,
  assertHostSuitePassed,
  filterQuickPick,
  readQuickInput,
  readStatusBar,
  runCommand,
  screenshot,
  statusBarItem,
  waitFor,
} from './harness';
import { fakeAgentCommand, readAgentRecord, RECORD_OUTSIDE_SANDBOX } from '../support/fakeAcpAgent';
import { isAlive, killGroupsLeft, waitGone } from '../support/processes';
import { planTask, reviewFrame, revisionFrame, suiteWindow, writeReview } from './ultraplanSteps';

const AGENT_LABEL = 'fake-acp-agent.mjs (ACP)';

interface RecordEntry {
  at: number;
  kind: string;
  pid?: number;
  cwd?: string;
  message?: { method?: string; id?: unknown; params?: Record<string, unknown>; result?: Record<string, unknown> };
}

const readRecord = (file: string): RecordEntry[] => readAgentRecord<RecordEntry>(file);

/** The option ids the client chose in its answers to the agent's permission requests, in order. */
function chosenOptions(record: RecordEntry[]): string[] {
  return record.flatMap((entry) => {
    const outcome =
      entry.kind === 'received' ? (entry.message?.result?.outcome as { outcome?: string; optionId?: string } | undefined) : undefined;
    return outcome?.outcome === 'selected' && outcome.optionId ? [outcome.optionId] : [];
  });
}

/** The texts of every session/prompt the agent received, in order. */
function prompts(record: RecordEntry[]): string[] {
  return record.flatMap((entry) => {
    if (entry.kind !== 'received' || entry.message?.method !== 'session/prompt') return [];
    const blocks = (entry.message.params?.prompt ?? []) as Array<{ type: string; text?: string }>;
    return [blocks.map((b) => b.text ?? '').join('')];
  });
}

function startedPids(record: RecordEntry[]): number[] {
  return record.filter((e) => e.kind === 'started' && typeof e.pid === 'number').map((e) => e.pid as number);
}

/** The status bar item's hover (the tooltip VS Code shows on mouse over). */
async function statusTooltip(page: Page, text: string): Promise<string> {
  await statusBarItem(page, text).hover();
  const hover = page.locator('.workbench-hover, .monaco-hover').filter({ hasText: 'Ultraplan' }).first();
  await hover.waitFor({ state: 'visible', timeout: 10_000 });
  const content = (await hover.innerText()).trim();
  await page.mouse.move(400, 300);
  return content;
}

describe('embedded ACP agent (the fake agent program) in code-server', function () {
  // No agent settings: the embedded backend and the automatic choice are the defaults.
  const suite = suiteWindow({
    suite: 'acp-embedded',
    files: { 'README.md': '# Demo project\n', 'src/greet.ts': 'export {};\n' },
    settings: {
      ...RECORD_OUTSIDE_SANDBOX,
    },
  });
  let dir = '';
  let record = '';

  before(async function () {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-acp-e2e-'));
    record = path.join(dir, 'record.jsonl');
  });
  after(async function () {
    // Runs after suiteWindow's own (the window is closed). Nothing of ours may outlive the suite, whatever failed.
    killGroupsLeft(startedPids(readRecord(record)));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('"Choose Backend…" lists each known agent with its availability; a custom command line is stored as argv', async function () {
    const { page, probe } = suite.window;
    await runCommand(page, 'Ultraplan: Choose Backend…');
    const shown = await readQuickInput(page);
    for (const label of [
      'Embedded · Automatic',
      'Claude (ACP) · Embedded',
      'Gemini CLI (ACP) · Embedded',
      'Codex (ACP) · Embedded',
      'Qwen Code (ACP) · Embedded',
    ]) {
      assert.ok(shown.items.includes(label), `"${label}" listed; items: ${JSON.stringify(shown.items)}`);
    }
    // The rows below the visible ones are not in the page (the list is virtual): found by typing, as a person would.
    for (const label of ['Embedded · Custom command…', 'Embedded · Demo (scripted)', 'Server']) await filterQuickPick(page, label, label);
    await filterQuickPick(page, '', 'Embedded · Automatic');
    const descriptions = await page.locator('.quick-input-list .monaco-list-row').evaluateAll((rows) =>
      rows.map((row) => ({
        label: row.querySelector('.label-name')?.textContent?.trim() ?? '',
        description: row.querySelector('.label-description')?.textContent?.trim() ?? '',
      })),
    );
    for (const name of ['Claude (ACP)', 'Gemini CLI (ACP)', 'Codex (ACP)', 'Qwen Code (ACP)']) {
      const row = descriptions.find((d) => d.label === `${name} · Embedded`);
      assert.match(row?.description ?? '', /^(installed|not installed; runs through npx|not found)/, `${name}: ${JSON.stringify(row)}`);
    }
    await screenshot(page, 'choose-backend');
    await answerQuickPick(page, 'Embedded · Custom command…');
    // Typed as a person would: one command line, split into argv without a shell.
    await answerInputBox(page, fakeAgentCommand('claude-plan.json', record).join(' '));
    await waitFor(async () => ((await probe.getConfiguration('ultraplan', 'agent.choice')) === 'custom' ? true : undefined), {
      timeoutMs: 10_000,
      message: 'ultraplan.agent.choice to become "custom"',
    });
    assert.deepEqual(await probe.getConfiguration('ultraplan', 'agent.command'), fakeAgentCommand('claude-plan.json', record));
    assert.equal(await probe.getConfiguration('ultraplan', 'backend'), 'embedded');
  });

  it('plans with the agent in the workspace: plan ready, its label in the panel and the status bar tooltip, no demo badge', async function () {
    const { page, workspace } = suite.window;
    await planTask(page, 'add a greeting');
    const entries = readRecord(record);
    const started = entries.find((e) => e.kind === 'started');
    assert.ok(started?.pid, 'the agent process recorded its start');
    assert.equal(started.cwd, workspace, 'the agent runs in the workspace folder');
    const modeSwitch = entries.find((e) => e.message?.method === 'session/set_mode' || e.message?.method === 'session/set_config_option');
    assert.ok(modeSwitch, 'the agent was switched to its plan mode');
    assert.equal(modeSwitch.message?.params?.modeId ?? modeSwitch.message?.params?.value, 'plan');
    assert.deepEqual(prompts(entries), ['add a greeting'], 'one prompt: the task');

    const frame = await reviewFrame(page, '#plan li');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Write greet\(\)/);
    // The agent's mode as it reported it, held read-only while it plans.
    assert.equal(
      (await frame.locator('.backend-label').textContent())?.trim(),
      `Embedded · ${AGENT_LABEL} · mode: plan "Plan Mode" (read-only)`,
    );
    assert.equal(await frame.locator('.demo-badge').isVisible(), false, 'a real agent is not labelled as a demo');
    // The hover renders spaces as no-break spaces; compare the words.
    const tooltip = (await statusTooltip(page, 'Ultraplan: plan ready')).replace(/\s+/g, ' ');
    assert.ok(tooltip.includes(`Backend: Embedded · Agent: ${AGENT_LABEL}`), tooltip);
    assert.ok(tooltip.includes('Agent mode: plan "Plan Mode" (read-only)'), tooltip);
    await screenshot(page, 'plan-ready');
  });

  it('rejects with feedback and a line comment: the agent gets the reject option, then the feedback with the quoted line as its next prompt', async function () {
    const { page } = suite.window;
    const frame = await reviewFrame(page, '#plan li');
    await writeReview(frame, {
      line: 'Write greet()',
      comment: 'Take the name as a parameter',
      feedback: 'Almost: greet someone in particular.',
    });
    await screenshot(page, 'line-comment');
    await frame.getByRole('button', { name: 'Reject', exact: true }).click();

    const feedback = await waitFor(() => prompts(readRecord(record))[1], {
      timeoutMs: 30_000,
      message: 'the feedback prompt to reach the agent',
    });
    assert.deepEqual(chosenOptions(readRecord(record)), ['plan'], 'the reject option ("No, keep planning")');
    assert.match(feedback, /Almost: greet someone in particular\./);
    assert.match(feedback, /> 1\. Write greet\(\)\n\nTake the name as a parameter/);
  });

  it('shows the revised plan as revision 2, approves it: the agent gets the manual allow option, never a bypass; its process ends with the result', async function () {
    const { page } = suite.window;
    const frame = await revisionFrame(page, 'Revision 2 of 2');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Write greet\(name\)/);
    await screenshot(page, 'revision-2');
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();

    await waitFor(() => (chosenOptions(readRecord(record)).length === 2 ? true : undefined), {
      timeoutMs: 30_000,
      message: 'the approval to reach the agent',
    });
    // ultraplan.afterApproval is "default": edits stay manually approved.
    assert.deepEqual(chosenOptions(readRecord(record)), ['plan', 'default']);
    await readStatusBar(page, 'Ultraplan: approved', { timeoutMs: 30_000 });
    const outcome = await reviewFrame(page, '.outcome');
    await waitFor(async () => ((await outcome.locator('.outcome').textContent()) ?? '').includes('Implementing v2.') || undefined, {
      timeoutMs: 30_000,
      message: "the agent's closing message as the outcome",
    });
    await screenshot(page, 'approved');
    // The session has its outcome: nothing talks to its agent again, so its process is gone.
    const [pid] = startedPids(readRecord(record));
    assert.ok(pid, 'the agent recorded its pid');
    assert.ok(await waitGone(pid, 15_000), `agent pid ${pid} did not end after the approved plan's result`);
  });

  it('Stop Session ends the agent process of a session in flight', async function () {
    const { page } = suite.window;
    const before = startedPids(readRecord(record));
    await planTask(page, 'add a farewell');
    const pid = await waitFor(() => startedPids(readRecord(record)).find((p) => !before.includes(p)), {
      timeoutMs: 20_000,
      message: 'a second agent process',
    });
    assert.equal(isAlive(pid), true, 'the agent runs while its plan waits');
    await runCommand(page, 'Ultraplan: Stop Session');
    assert.ok(await waitGone(pid, 15_000), `agent pid ${pid} still running after Stop`);
    await screenshot(page, 'stopped');
  });

  it('deactivating the extension leaves its agents planning in the session service (checked in the extension host)', async function () {
    const results = await suite.window.probe.runSuite('acpDeactivate', { timeoutMs: 90_000 });
    assertHostSuitePassed(results);
  });
});

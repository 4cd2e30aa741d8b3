// The real Claude ACP adapter (@agentclientprotocol/claude-agent-acp 0.101.0) as the embedded
// agent in real code-server + Chromium, with only its model scripted (the Anthropic Messages API on
// 127.0.0.1, in this process). Started as a custom command through `env`, which points it at the
// scripted model and a throwaway home. Through the review panel: the plan the model wrote is shown,
// a reject with a line comment reaches the model as its next prompt, revision 2 is shown and
// approved, and the adapter's edit lands in the workspace (ultraplan.afterApproval = acceptEdits).
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readdirSync } from 'node:fs';
import { openTestWindow, readStatusBar, screenshot, waitFor, type TestWindow } from './harness';
import { killGroupsLeft } from '../support/processes';
import { anthropicApi } from '../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer } from '../support/modelApi/scenario';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanFile } from '../support/realAgents';
import { planTask, reportIfFailed, reviewFrame, revisionFrame, writeReview } from './ultraplanSteps';

const ORIGINAL = 'export const original = true;\n';
const UPDATED = 'export const original = false;\n';
const PLAN_V1 = '# Flip the flag\n\n1. Set original to false in src/app.ts.\n2. Run the tests.\n';
const PLAN_V2 = '# Flip the flag (v2)\n\n1. Set original to false in src/app.ts.\n2. Say why in the commit message.\n3. Run the tests.\n';

/** The processes this suite's agent runs as: the only ones with its throwaway HOME. */
function agentPids(home: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`HOME=${home}`)) out.push(Number(entry));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out;
}

describe('the real Claude ACP adapter in code-server, with only the model scripted', function () {
  const home = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-real-claude-home-'));
  let planFile = '';
  const model = new ScriptedModelServer(
    anthropicApi,
    new Scenario([
      (view) => {
        planFile = claudePlanFile(view);
        return { toolCalls: [{ name: 'Write', input: { file_path: planFile, content: PLAN_V1 } }] };
      },
      () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
      () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
      () => ({ toolCalls: [{ name: 'Write', input: { file_path: planFile, content: PLAN_V2 } }] }),
      () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
      () => ({ toolCalls: [{ name: 'Read', input: { file_path: path.join(suite.window.workspace, 'src', 'app.ts') } }] }),
      () => ({ toolCalls: [{ name: 'Write', input: { file_path: path.join(suite.window.workspace, 'src', 'app.ts'), content: UPDATED } }] }),
      () => ({ text: 'Done: src/app.ts flipped.' }),
    ]),
  );
  let window: TestWindow | undefined;
  const suite = {
    get window(): TestWindow {
      if (!window) throw new Error('the real-claude window is not open (its before hook failed)');
      return window;
    },
  };

  before(async function () {
    // The model first: the agent's command line names its address.
    await model.start();
    const env = claudeEnv(home, model.url);
    window = await openTestWindow({
      suite: 'real-claude',
      files: { 'README.md': '# Demo project\n', 'src/app.ts': ORIGINAL },
      settings: {
        'ultraplan.backend': 'embedded',
        'ultraplan.agent.choice': 'custom',
        // `env` sets the model's address and a throwaway home, then execs the adapter.
        'ultraplan.agent.command': ['/usr/bin/env', ...Object.entries(env).map(([key, value]) => `${key}=${value}`), CLAUDE_ADAPTER],
        'ultraplan.afterApproval': 'acceptEdits',
      },
    });
  });
  afterEach(async function () {
    await reportIfFailed(this, window);
  });
  after(async function () {
    await window?.close();
    killGroupsLeft(agentPids(home));
    await model.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('shows the plan the model wrote, in plan mode from the first prompt', async function () {
    this.timeout(180_000);
    const { page } = suite.window;
    await planTask(page, 'flip the flag in src/app.ts');
    const frame = await reviewFrame(page, '#plan li');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Set original to false in src\/app\.ts/);
    assert.match(model.rounds[0]?.view?.allText ?? '', /Plan mode is active/);
    assert.equal(readFileSync(path.join(suite.window.workspace, 'src', 'app.ts'), 'utf8'), ORIGINAL);
    await screenshot(page, 'real-claude-plan');
  });

  it('reject with a line comment: the feedback and the quoted line reach the model; revision 2 is shown', async function () {
    this.timeout(180_000);
    const { page } = suite.window;
    const frame = await reviewFrame(page, '#plan li');
    await writeReview(frame, { line: 'Run the tests', comment: 'Say why first.', feedback: 'Explain the change.' });
    await frame.getByRole('button', { name: 'Reject', exact: true }).click();
    const feedbackRound = await model.waitForRound(4, 90_000);
    assert.match(feedbackRound.view?.lastUser.text ?? '', /Explain the change\./);
    assert.match(feedbackRound.view?.lastUser.text ?? '', /Run the tests[\s\S]*Say why first\./);
    const revised = await revisionFrame(page, 'Revision 2 of 2');
    assert.match((await revised.locator('#plan').textContent()) ?? '', /Say why in the commit message/);
    await screenshot(page, 'real-claude-revision-2');
  });

  it('approve: the adapter edits src/app.ts (edits accepted), the session completes, no adapter process is left', async function () {
    this.timeout(180_000);
    const { page, workspace } = suite.window;
    const frame = await revisionFrame(page, 'Revision 2 of 2');
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();
    await waitFor(() => (readFileSync(path.join(workspace, 'src', 'app.ts'), 'utf8') === UPDATED ? true : undefined), {
      timeoutMs: 90_000,
      message: 'the edit to land in src/app.ts',
    });
    await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 60_000 });
    assert.deepEqual(model.scenario.overruns, []);
    await screenshot(page, 'real-claude-completed');
    // The session has its outcome: nothing talks to its agent again, so its processes are gone.
    await waitFor(() => (agentPids(home).length === 0 ? true : undefined), { timeoutMs: 30_000, message: 'the adapter and its children to end after the result' });
  });
});

// Sessions outlive the window (docs/service.md): the real Claude ACP adapter, only its model
// scripted on 127.0.0.1, plans in the local session service while the window around it goes away
// in every way a person's can: a reload, kill -9 of the extension host, the window closed and
// opened again. Each time the plan is back on screen with Approve enabled, and the same agent
// process is still the one waiting. Then a second window on the same folder shows the same
// session; Approve there reaches the agent, which writes the file, and the first window shows
// the decision too.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { openTestWindow, readStatusBar, screenshot, waitFor, type TestWindow } from './harness';
import { isAlive, processesWithHome } from '../support/processes';
import { anthropicApi } from '../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer } from '../support/modelApi/scenario';
import { servicePids } from '../support/serviceProcess';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanFile } from '../support/realAgents';
import { closeRealAgentRun, realAgentSettings } from './realAgentWindow';
import { planTask, reportIfFailed, reviewFrame } from './ultraplanSteps';
import { ORIGINAL_APP } from '../support/acpFixtures';

const UPDATED = 'export const original = false;\n';
const PLAN = '# Flip the flag\n\n1. Set original to false in src/app.ts.\n2. Run the tests.\n';

/** The plan on screen with Approve enabled: what a person needs to decide. */
async function planOnScreen(page: Page): Promise<void> {
  await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 60_000 });
  const frame = await reviewFrame(page, '#plan li');
  assert.match((await frame.locator('#plan').textContent()) ?? '', /Set original to false in src\/app\.ts/);
  await waitFor(async () => ((await frame.getByRole('button', { name: 'Approve', exact: true }).isEnabled()) ? true : undefined), {
    timeoutMs: 30_000,
    message: 'Approve to be enabled',
  });
}

describe('sessions outlive the window: the real Claude adapter in the local session service', function () {
  const home = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-service-e2e-home-'));
  let window: TestWindow | undefined;
  let agentPids: number[] = [];
  let servicePid = 0;
  const workspace = (): string => {
    if (!window) throw new Error('the window is not open (its before hook failed)');
    return window.workspace;
  };
  let planFile = '';
  const model = new ScriptedModelServer(
    anthropicApi,
    new Scenario([
      (view) => {
        planFile = claudePlanFile(view);
        return { toolCalls: [{ name: 'Write', input: { file_path: planFile, content: PLAN } }] };
      },
      () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
      () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
      () => ({ toolCalls: [{ name: 'Read', input: { file_path: path.join(workspace(), 'src', 'app.ts') } }] }),
      () => ({ toolCalls: [{ name: 'Write', input: { file_path: path.join(workspace(), 'src', 'app.ts'), content: UPDATED } }] }),
      () => ({ text: 'Done: src/app.ts flipped.' }),
    ]),
  );

  before(async function () {
    await model.start();
    const env = claudeEnv(home, model.url);
    window = await openTestWindow({
      suite: 'session-service',
      files: { 'README.md': '# Demo project\n', 'src/app.ts': ORIGINAL_APP },
      settings: realAgentSettings(env, [CLAUDE_ADAPTER]),
    });
  });
  afterEach(async function () {
    await reportIfFailed(this, window);
  });
  after(async function () {
    await closeRealAgentRun(window, home, model);
  });

  it('a plan is ready; the agent runs in the session service, not in the extension host', async function () {
    this.timeout(180_000);
    const { page, probe } = window!;
    await planTask(page, 'flip the flag in src/app.ts');
    await planOnScreen(page);
    agentPids = processesWithHome(home);
    assert.ok(agentPids.length > 0, 'the agent runs');
    servicePid = servicePids(window!.server.serviceDir)[0] ?? 0;
    assert.ok(servicePid, 'a session service runs');
    const hostPid = probe.announcement()?.pid;
    assert.ok(hostPid && !agentPids.includes(hostPid), 'the agent is not the extension host');
    await screenshot(page, 'plan-ready');
  });

  it('after a window reload the plan is on screen again and the same agent waits', async function () {
    this.timeout(180_000);
    await window!.reload();
    await planOnScreen(window!.page);
    assert.deepEqual(
      agentPids.filter((pid) => !isAlive(pid)),
      [],
      'the same agent processes still run',
    );
    assert.deepEqual(servicePids(window!.server.serviceDir), [servicePid]);
  });

  it('after kill -9 of the extension host the plan is back with the next host', async function () {
    this.timeout(180_000);
    const w = window!;
    const before = w.probe.announcement();
    assert.ok(before?.pid, 'the probe names the extension host');
    process.kill(before.pid, 'SIGKILL');
    await w.page.reload({ waitUntil: 'domcontentloaded' });
    await w.probe.ready({ after: before });
    await planOnScreen(w.page);
    assert.ok(!isAlive(before.pid), 'the old extension host is gone');
    assert.deepEqual(
      agentPids.filter((pid) => !isAlive(pid)),
      [],
      'the agent kept waiting',
    );
  });

  it('closing the window and opening it again shows the plan again', async function () {
    this.timeout(180_000);
    const w = window!;
    const before = w.probe.announcement();
    await w.page.close();
    const page = await w.workbench.context.newPage();
    await page.goto(w.server.workspaceUrl, { waitUntil: 'domcontentloaded' });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
    await w.probe.ready(before ? { after: before } : {});
    await planOnScreen(page);
    assert.deepEqual(
      agentPids.filter((pid) => !isAlive(pid)),
      [],
    );
    w.workbench.page = page;
  });

  it('a second window on the folder shows the same session; Approve there reaches the agent, which writes the file, and the first window shows it', async function () {
    this.timeout(240_000);
    const w = window!;
    const first = w.workbench.page;
    const second = await w.workbench.context.newPage();
    await second.goto(w.server.workspaceUrl, { waitUntil: 'domcontentloaded' });
    await second.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
    await planOnScreen(second);
    await screenshot(second, 'second-window-plan');
    const frame = await reviewFrame(second, '#plan li');
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();
    await waitFor(() => (readFileSync(path.join(workspace(), 'src', 'app.ts'), 'utf8') === UPDATED ? true : undefined), {
      timeoutMs: 90_000,
      message: 'the agent to write src/app.ts',
    });
    await readStatusBar(second, 'Ultraplan: approved · completed', { timeoutMs: 60_000 });
    await readStatusBar(first, 'Ultraplan: approved · completed', { timeoutMs: 60_000 });
    await screenshot(first, 'first-window-approved');
    assert.deepEqual(model.scenario.overruns, []);
    await second.close();
  });
});

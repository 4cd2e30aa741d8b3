// Sessions outlive the window (docs/service.md): the real Claude ACP adapter, only its model
// scripted on 127.0.0.1, plans in the local session service while the window around it goes away
// in every way a person's can: a reload, kill -9 of the extension host, the window closed and
// opened again. Each time the plan is back on screen with Approve enabled, and the same agent
// process is still the one waiting. Then a second window on the same folder shows the same
// session; Approve there reaches the agent, which writes the file, and the first window shows
// the decision too. Last, a second window open beforehand follows a new session on its own, and
// the session service itself is killed (kill -9) while that plan waits: the windows start it
// again, the agent comes back with session/load, and Reject then Approve reach it.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { openTestWindow, readStatusBar, screenshot, waitFor, type TestWindow } from './harness';
import { agentRootsWithHome, isAlive, processesWithHome } from '../support/processes';
import { anthropicApi } from '../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer } from '../support/modelApi/scenario';
import { servicePids } from '../support/serviceProcess';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanning } from '../support/realAgents';
import { closeRealAgentRun, realAgentSettings } from './realAgentWindow';
import { extensionLog, planTask, reportIfFailed, reviewFrame } from './ultraplanSteps';
import { ORIGINAL_APP } from '../support/acpFixtures';

const UPDATED = 'export const original = false;\n';
const PLAN = '# Flip the flag\n\n1. Set original to false in src/app.ts.\n2. Run the tests.\n';
const PLAN_BACK = '# Flip it back\n\n1. Set original to true again in src/app.ts.\n';

/** The plan on screen with Approve enabled: what a person needs to decide. */
async function planOnScreen(page: Page, plan = /Set original to false in src\/app\.ts/): Promise<void> {
  await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 60_000 });
  const frame = await reviewFrame(page, '#plan li');
  await waitFor(async () => (plan.test((await frame.locator('#plan').textContent()) ?? '') ? true : undefined), {
    timeoutMs: 30_000,
    message: `the plan ${plan} in the panel`,
  });
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
      ...claudePlanning(PLAN, (file) => (planFile = file)),
      () => ({ toolCalls: [{ name: 'Read', input: { file_path: path.join(workspace(), 'src', 'app.ts') } }] }),
      () => ({ toolCalls: [{ name: 'Write', input: { file_path: path.join(workspace(), 'src', 'app.ts'), content: UPDATED } }] }),
      () => ({ text: 'Done: src/app.ts flipped.' }),
      // The second session, whose service is killed while its plan waits.
      ...claudePlanning(PLAN_BACK, (file) => (planFile = file)),
      // After the restart, in the conversation session/load brought back: the reviewer's feedback.
      (view) => {
        const feedback = /Say why in a comment/.test(view.lastUser.text) ? 'Say why in a comment.' : 'No feedback reached me.';
        const remembered = view.allText.includes(planFile) ? '' : ' (the conversation was lost)';
        return { toolCalls: [{ name: 'Write', input: { file_path: planFile, content: `${PLAN_BACK}2. ${feedback}${remembered}\n` } }] };
      },
      () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
      () => ({ toolCalls: [{ name: 'Write', input: { file_path: path.join(workspace(), 'src', 'app.ts'), content: ORIGINAL_APP } }] }),
      () => ({ text: 'Done: flipped back.' }),
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
    agentPids = agentRootsWithHome(home);
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

  it('kill -9 of the session service while a plan waits (a second window followed the session on its own): it starts again, the agent resumes with session/load, Reject then Approve reach it', async function () {
    this.timeout(300_000);
    const started = Date.now();
    const page = window!.workbench.page;
    // A second window on the folder, open before the session starts: it follows it on its own.
    const other = await window!.workbench.context.newPage();
    await other.goto(window!.server.workspaceUrl, { waitUntil: 'domcontentloaded' });
    await readStatusBar(other, 'Ultraplan: approved · completed', { timeoutMs: 60_000 });
    await planTask(page, 'flip the flag back in src/app.ts');
    await planOnScreen(page, /Set original to true again in src\/app\.ts/);
    await readStatusBar(other, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    const [killed] = servicePids(window!.server.serviceDir);
    assert.ok(killed, 'a session service runs');
    const agents = processesWithHome(home);
    assert.ok(agents.length > 0, 'the agent of the second plan runs');
    process.kill(killed, 'SIGKILL');

    // Nothing to click: the window's event stream finds no service and starts it again; the agent
    // of the killed service exits on its own, and the new service loads its conversation.
    const restarted = await waitFor(() => servicePids(window!.server.serviceDir).find((pid) => pid !== killed), {
      timeoutMs: 60_000,
      message: 'the window to start the session service again',
    });
    await waitFor(() => (agents.every((pid) => !isAlive(pid)) ? true : undefined), {
      timeoutMs: 15_000,
      message: "the killed service's agent to exit",
    });
    await planOnScreen(page, /Set original to true again in src\/app\.ts/);
    await waitFor(() => (/agent resumed its conversation/.test(extensionLog(window!)) ? true : undefined), {
      timeoutMs: 60_000,
      message: 'the agent to resume with session/load',
    });
    await screenshot(page, 'service-restarted-plan-waits');

    const frame = await reviewFrame(page, '#plan li');
    await frame.locator('#feedback').fill('Say why in a comment.');
    await frame.getByRole('button', { name: 'Reject', exact: true }).click();
    // The revision the model wrote with the conversation it had (else it says the conversation was lost).
    await planOnScreen(page, /Say why in a comment\.(?!\s*\(the conversation was lost\))/);
    assert.equal(readFileSync(path.join(workspace(), 'src', 'app.ts'), 'utf8'), UPDATED, 'still read-only while planning');

    await (await reviewFrame(page, '#plan li')).getByRole('button', { name: 'Approve', exact: true }).click();
    await waitFor(() => (readFileSync(path.join(workspace(), 'src', 'app.ts'), 'utf8') === ORIGINAL_APP ? true : undefined), {
      timeoutMs: 90_000,
      message: 'the agent to write src/app.ts back',
    });
    await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 60_000 });
    await readStatusBar(other, 'Ultraplan: approved · completed', { timeoutMs: 30_000 });
    await other.close();
    assert.deepEqual(servicePids(window!.server.serviceDir), [restarted], 'one service for both windows');
    assert.deepEqual(model.scenario.overruns, []);
    console.log(`      kill -9 of the service → resumed, rejected, approved, written: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });
});

// A first run as a new user has it, in real code-server + Chromium, with no agent installed: the
// walkthrough, the no-agent notice (with "Don't Show Again", which holds across a reload) and
// the scripted demo planning the task it was given, in the prompt's words, labelled as a demo.
// Then an agent that only npx can run: its first fetch shows its progress in a notification, a
// failed fetch names the cause and the command, a good one starts the session. npm and npx are
// the real ones, against a registry on 127.0.0.1 (test/support/npmRegistry.ts) that serves a
// package under the adapter's pinned name whose program is the fake ACP agent.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import {
  answerQuickPick,
  clickNotificationButton,
  dismissNotifications,
  notifications,
  readQuickInput,
  readStatusBar,
  runCommand,
  screenshot,
  waitFor,
  waitForNotification,
} from './harness';
import { fakeAgentProgram, fakeAgentScenario, readAgentRecord, RECORD_OUTSIDE_SANDBOX } from '../support/fakeAcpAgent';
import { startNpmRegistry, type NpmRegistry } from '../support/npmRegistry';
import { extensionLogFiles, planTask, reviewFrame, suiteWindow } from './ultraplanSteps';

const NO_AGENT = 'No ACP agent was found';

/** Once the demo of `task` asks its question in the review (the status bar may show another session first). */
async function waitForDemoQuestion(page: Page, task: string): Promise<void> {
  await waitFor(
    async () => {
      const frame = await reviewFrame(page, '.question');
      return (
        (
          (await frame
            .locator('.question')
            .textContent()
            .catch(() => '')) ?? ''
        ).includes(`for "${task}"`) || undefined
      );
    },
    { timeoutMs: 30_000, message: `the demo's question about "${task}"` },
  );
}

const CODEX = { package: '@agentclientprotocol/codex-acp', version: '2.6.0', bin: 'codex-acp' };
const FETCHING = `Ultraplan: fetching Codex (ACP) (${CODEX.package}@${CODEX.version}) for npx`;

/** A package under the Codex adapter's pinned name whose program is the fake ACP agent playing `scenario`. */
function writeAgentPackage(folder: string, scenario: string, record: string): void {
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(
    path.join(folder, 'package.json'),
    JSON.stringify({ name: CODEX.package, version: CODEX.version, bin: { [CODEX.bin]: 'agent.mjs' }, engines: { node: '>=20' } }),
  );
  fs.writeFileSync(
    path.join(folder, 'agent.mjs'),
    `#!/usr/bin/env node\nprocess.argv.splice(2, process.argv.length, ${JSON.stringify(scenario)}, ${JSON.stringify(record)});\n` +
      `await import(${JSON.stringify(pathToFileURL(fakeAgentProgram()).href)});\n`,
  );
}

describe('first run: walkthrough, the no-agent notice, the demo, an agent fetched by npx', function () {
  // npm's own settings for this window: its registry (written once the registry listens) and an
  // empty cache, so npx has nothing of the agent yet.
  const npmHome = fs.mkdtempSync(path.join(os.tmpdir(), 'ultraplan-e2e-npm-'));
  const npmrc = path.join(npmHome, 'npmrc');
  let registry: NpmRegistry | undefined;
  const suite = suiteWindow({
    suite: 'first-run',
    settings: {
      'ultraplan.backend': 'embedded',
      'ultraplan.agent.choice': 'auto',
      ...RECORD_OUTSIDE_SANDBOX,
    },
    // Only the system's folders: no agent a developer installed may be found (npx is there).
    env: {
      PATH: '/usr/bin:/bin',
      npm_config_userconfig: npmrc,
      npm_config_cache: path.join(npmHome, 'cache'),
      npm_config_update_notifier: 'false',
    },
  });
  before(async function () {
    registry = await startNpmRegistry();
    fs.writeFileSync(npmrc, `registry=${registry.url}\n`);
  });
  after(async function () {
    await registry?.stop();
    fs.rmSync(npmHome, { recursive: true, force: true });
  });

  it('opens the walkthrough from "Ultraplan: Get Started" with its four steps', async function () {
    const { page } = suite.window;
    await runCommand(page, 'Ultraplan: Get Started');
    await page.getByText('Get started with Ultraplan').first().waitFor({ state: 'visible', timeout: 20_000 });
    for (const step of ['Choose where the agent plans', 'Install or pick an agent', 'Plan a first task', 'Review the plan']) {
      await page.getByText(step, { exact: true }).first().waitFor({ state: 'visible', timeout: 10_000 });
    }
    await screenshot(page, 'walkthrough');
    await suite.window.probe.executeCommand('workbench.action.closeAllEditors');
  });

  it('runs the demo on the task it was given and says so, with "Don\'t Show Again"; teleport offers Task only once set up', async function () {
    const { page } = suite.window;
    await planTask(page, 'Add a dark theme to the settings page', 'Ultraplan: needs input');
    await waitForNotification(page, NO_AGENT);
    await screenshot(page, 'no-agent-notice');
    await clickNotificationButton(page, NO_AGENT, "Don't Show Again");
    // Written to the user settings (the extension logs it once stored).
    await waitFor(
      () =>
        extensionLogFiles(suite.window).some((f) => fs.readFileSync(f, 'utf8').includes('the no-agent notice will not be shown again')) ||
        undefined,
      {
        timeoutMs: 15_000,
        message: 'the "Don\'t Show Again" choice to be stored',
      },
    );
    const settings = JSON.parse(fs.readFileSync(path.join(suite.window.server.userDataDir, 'User', 'settings.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.equal(settings['ultraplan.agent.noAgentNotice'], false, 'the choice is kept as a user setting');

    const frame = await reviewFrame(page, '.question');
    assert.match((await frame.locator('.question').textContent()) ?? '', /for "Add a dark theme to the settings page"/);
    await frame.getByLabel('Your reply').fill('A small change.');
    await frame.getByRole('button', { name: 'Reply', exact: true }).click();
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    const planFrame = await reviewFrame(page, '#plan h1');
    assert.equal((await planFrame.locator('#plan h1').textContent())?.trim(), 'Plan (demo): Add a dark theme to the settings page');
    await screenshot(page, 'demo-plans-the-task');

    // Teleport asks where to; with no task command, Task is not offered as ready.
    await planFrame.getByRole('button', { name: 'Teleport', exact: true }).click();
    const pick = await waitFor(
      async () => {
        const q = await readQuickInput(page).catch(() => undefined);
        return q && q.items.length === 3 ? q : undefined;
      },
      { timeoutMs: 15_000, message: 'the teleport target pick' },
    );
    assert.deepEqual(
      pick.items.map((i) => i.replace(/\s+/g, ' ').trim()),
      ['Chat', 'File', 'Task (not set up)'],
    );
    await answerQuickPick(page, 'File');
    // Saved under a name taken from the plan, which says which task it is.
    const date = new Date();
    const today = `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
    const saved = path.join(suite.window.workspace, '.ultraplan', 'plans', `${today}-add-a-dark-theme-to-the-settings-page.plan.md`);
    await waitFor(() => fs.existsSync(saved) || undefined, { timeoutMs: 15_000, message: `${saved} to be written` });
    await readStatusBar(page, 'Ultraplan: teleported', { timeoutMs: 15_000 });
  });

  it('does not show the notice again after "Don\'t Show Again", also after a reload', async function () {
    const w = suite.window;
    await w.reload();
    await planTask(w.page, 'Log slow requests', 'Ultraplan:');
    // The session is up and its question shown; the notice would have come with the session.
    await waitForDemoQuestion(w.page, 'Log slow requests');
    await w.page.waitForTimeout(1_500);
    assert.deepEqual(
      (await notifications(w.page)).filter((n) => n.includes(NO_AGENT)),
      [],
    );
  });

  it('an agent run through npx: the fetch shows its progress; a registry without it is named as the cause, with the command', async function () {
    const w = suite.window;
    const npm = registry!;
    await dismissNotifications(w.page);
    await w.probe.updateConfiguration('ultraplan', 'agent.choice', 'codex', 'global');
    const release = npm.hold('packument');
    await planTask(w.page, 'Add a health check', 'Ultraplan:');
    await npm.held('packument');
    // npm is waiting on the registry: the notification says what is fetched, for what.
    assert.match(await (await waitForNotification(w.page, FETCHING)).innerText(), /checking npx's cache/);
    await screenshot(w.page, 'npx-fetch-progress');
    release();
    const failed = await waitForNotification(w.page, 'could not be fetched for npx', { timeoutMs: 60_000 });
    const text = (await failed.innerText()).replace(/\s+/g, ' ');
    assert.match(text, /could not start the planning session: Codex \(ACP\) could not be fetched for npx\./);
    assert.match(text, /The registry has no @agentclientprotocol\/codex-acp@2\.6\.0/);
    assert.match(text, /Run: npm install -g @agentclientprotocol\/codex-acp@2\.6\.0/);
    await screenshot(w.page, 'npx-fetch-failed');
    assert.ok(
      npm.requests.some((r) => r.path === '/@agentclientprotocol%2fcodex-acp' && r.status === 404),
      `npm asked the registry for the package: ${JSON.stringify(npm.requests)}`,
    );
  });

  it('an agent run through npx: once the registry has it, the fetch shows how far it got and the session starts', async function () {
    const w = suite.window;
    const npm = registry!;
    const record = path.join(npmHome, 'agent-record.jsonl');
    const folder = path.join(npmHome, 'package');
    writeAgentPackage(folder, fakeAgentScenario('codex-plan.json'), record);
    await npm.publish(folder);
    await dismissNotifications(w.page);
    const release = npm.hold('tarball');
    await planTask(w.page, 'Add a greeting', 'Ultraplan:');
    await npm.held('tarball');
    // The package document has come (one download), the tarball is on its way.
    await waitForNotification(w.page, `${FETCHING}: downloaded 1 package`);
    await screenshot(w.page, 'npx-fetch-downloading');
    release();
    // The session runs the package npx fetched: the agent gets the task and its plan is shown.
    await waitFor(
      () =>
        (fs.existsSync(record) &&
          readAgentRecord<{ kind: string; message?: { method?: string; params?: { prompt?: Array<{ text?: string }> } } }>(record).some(
            (e) =>
              e.kind === 'received' &&
              e.message?.method === 'session/prompt' &&
              (e.message.params?.prompt ?? []).some((b) => b.text?.includes('Add a greeting')),
          )) ||
        undefined,
      { timeoutMs: 60_000, message: 'the agent fetched by npx to receive the task' },
    );
    await waitFor(
      async () => {
        const frame = await reviewFrame(w.page, '#plan li');
        return ((await frame.locator('#plan').textContent()) ?? '').includes('Add greet()') || undefined;
      },
      { timeoutMs: 30_000, message: "the npx agent's plan in the review" },
    );
    await screenshot(w.page, 'npx-agent-plans');
    assert.ok(
      npm.requests.some((r) => r.path === '/@agentclientprotocol/codex-acp/-/codex-acp-2.6.0.tgz' && r.status === 200),
      `npx fetched the tarball from the registry: ${JSON.stringify(npm.requests)}`,
    );
    assert.deepEqual(await notifications(w.page).then((list) => list.filter((n) => n.includes('could not'))), []);
  });
});

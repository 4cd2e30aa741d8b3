// A first run as a new user has it, in real code-server + Chromium, with no agent installed: the
// walkthrough, the no-agent notice (with "Don't Show Again", which holds across a reload) and
// the scripted demo planning the task it was given, in the prompt's words, labelled as a demo.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import {
  answerQuickPick,
  clickNotificationButton,
  notifications,
  readQuickInput,
  readStatusBar,
  runCommand,
  screenshot,
  waitFor,
  waitForNotification,
} from './harness';
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

describe('first run: walkthrough, the no-agent notice, the demo', function () {
  const suite = suiteWindow({
    suite: 'first-run',
    settings: { 'ultraplan.backend': 'embedded', 'ultraplan.agent.choice': 'auto' },
    // Only the system's folders: no agent a developer installed may be found.
    env: { PATH: '/usr/bin:/bin' },
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
    const saved = path.join(suite.window.workspace, '.ultraplan', 'plans', `${today}-add-a-dark-theme-to-the-settings-page.md`);
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
});

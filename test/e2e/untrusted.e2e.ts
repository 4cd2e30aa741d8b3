// Workspace trust in real code-server: in an untrusted (restricted) workspace the embedded backend
// does not start an agent, and a teleport to Task is refused before anything is sent, while the
// review of a server session still works.
import * as assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { answerInputBox, answerQuickPick, runCommand, screenshot, waitFor, waitForNotification } from './harness';
import { decisionsSent, listSessions, planTask, reviewFrame, scenario, sessionEvents, suiteWindow } from './ultraplanSteps';

describe('untrusted workspace: no embedded agents, no tasks', function () {
  const suite = suiteWindow({
    suite: 'untrusted',
    scenario: scenario('one-plan.json'),
    // The test chooses the server through Choose Backend: there is no probe to set it with.
    connect: false,
    workspaceTrust: true,
    // The test runner extension (the probe) does not run in Restricted Mode: drive the UI only.
    waitForHost: false,
    settings: {
      'ultraplan.backend': 'embedded',
      'ultraplan.agent.choice': 'demo',
      'ultraplan.teleport.target': 'task',
      'ultraplan.teleport.taskCommand': ['node', '-e', '0', '${planFile}'],
    },
  });

  before(async function () {
    // code-server opens a folder it was not told to trust in Restricted Mode (no prompt).
    await waitFor(
      async () => ((await suite.window.page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).count()) > 0 ? true : undefined),
      {
        timeoutMs: 30_000,
        message: 'restricted mode',
      },
    );
  });

  it('refuses to start an embedded agent', async function () {
    const { page } = suite.window;
    await runCommand(page, 'Ultraplan: Plan a Task…');
    await waitForNotification(page, 'embedded backend runs an agent on this machine', { timeoutMs: 15_000 });
    await screenshot(page, 'embedded-refused');
  });

  it('reviews a server session, but refuses to teleport it to a task; nothing is sent', async function () {
    const { page } = suite.window;
    // Switch to the server through Choose Backend (URL, then the token it asks for).
    await runCommand(page, 'Ultraplan: Choose Backend…');
    await answerQuickPick(page, 'Server');
    await answerInputBox(page, suite.server.url, { title: 'Ultraplan server URL' });
    await answerInputBox(page, suite.server.token ?? '', { title: 'token for' });
    await planTask(page, 'add a changelog');
    const [session] = await listSessions(suite.server);
    const frame = await reviewFrame(page, '#plan li');
    await frame.getByRole('button', { name: 'Teleport', exact: true }).click();
    await waitForNotification(page, 'not available in an untrusted workspace', { timeoutMs: 15_000 });
    await screenshot(page, 'task-refused');
    assert.deepEqual(decisionsSent(await sessionEvents(suite.server, session!.id)), [], 'no teleport deny was sent');
    // The refusal released the panel: the plan can still be decided.
    const panel = await reviewFrame(page, '#plan li');
    await waitFor(async () => ((await panel.getByRole('button', { name: 'Approve', exact: true }).isEnabled()) ? true : undefined), {
      timeoutMs: 10_000,
      message: 'the buttons to be released after the refusal',
    });
  });

  it('refuses to teleport into a committed plans folder that links out of the workspace (to ~/.bashrc.d); nothing is sent or written', async function () {
    const { page, workspace } = suite.window;
    const home = await mkdtemp(path.join(tmpdir(), 'ultraplan-home-'));
    try {
      // Fedora's ~/.bashrc sources every file in ~/.bashrc.d: a plan saved there would run in the next shell.
      await mkdir(path.join(home, '.bashrc.d'));
      await mkdir(path.join(workspace, '.ultraplan'), { recursive: true });
      await symlink(path.join(home, '.bashrc.d'), path.join(workspace, '.ultraplan', 'plans'));
      const [session] = await listSessions(suite.server);
      const frame = await reviewFrame(page, '#plan li');
      await frame.getByRole('button', { name: 'Teleport', exact: true }).click();
      await waitForNotification(page, 'which is outside the workspace', { timeoutMs: 15_000 });
      await screenshot(page, 'plans-folder-link-refused');
      assert.deepEqual(decisionsSent(await sessionEvents(suite.server, session!.id)), [], 'no teleport deny was sent');
      assert.deepEqual(await readdir(path.join(home, '.bashrc.d')), [], 'nothing was written through the link');
    } finally {
      await rm(path.join(workspace, '.ultraplan', 'plans'), { force: true });
      await rm(home, { recursive: true, force: true });
    }
  });
});

// Teleport in real code-server against the real server: to a Task (the plan file exists, the task
// ran with it as its own argument, the remote is archived) and to Chat (code-server has the
// command but no chat provider: the fallback says so and opens the file; the name is not reused).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  answerQuickPick,
  closeQuickInput,
  dismissNotifications,
  readQuickInput,
  readStatusBar,
  runCommand,
  statusBarItem,
  screenshot,
  waitFor,
  waitForNotification,
} from './harness';
import {
  decisionsSent,
  exitPlanResults,
  listSessions,
  planTask,
  reviewFrame,
  scenario,
  sessionEvents,
  suiteWindow,
  waitForEvents,
} from './ultraplanSteps';

// Writes its first argument (the plan file path) into teleport-marker.txt next to it, and a copy of
// the plan, so the test sees that the task ran and with which argument.
const MARKER_SCRIPT = `const fs = require('node:fs');
const file = process.argv[2];
fs.writeFileSync(require('node:path').join(__dirname, 'teleport-marker.txt'), JSON.stringify({ argv: process.argv.slice(2), plan: fs.readFileSync(file, 'utf8') }));
`;

const today = (() => {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
})();

describe('teleport: to a task and to chat (server backend)', function () {
  const suite = suiteWindow({
    suite: 'teleport',
    scenario: scenario('one-plan.json'),
    files: { 'marker.js': MARKER_SCRIPT, 'README.md': '# Sample\n' },
    settings: {
      'ultraplan.teleport.target': 'task',
      'ultraplan.teleport.taskCommand': ['node', 'marker.js', '${planFile}'],
    },
  });

  it('reports a bad setting with an "Open Settings" button and keeps working with the default', async function () {
    const { page, probe } = suite.window;
    await probe.updateConfiguration('ultraplan', 'pollIntervalMs', 10);
    await runCommand(page, 'Ultraplan: Plan a Task…');
    const notice = await waitForNotification(page, 'ultraplan.pollIntervalMs must be at least 250', { timeoutMs: 15_000 });
    assert.equal(await notice.getByRole('button', { name: 'Open Settings' }).count(), 1);
    await screenshot(page, 'bad-setting');
    await closeQuickInput(page);
    await dismissNotifications(page);
    await probe.updateConfiguration('ultraplan', 'pollIntervalMs', 500);
  });

  it('teleports to a task: saves the plan, runs the task with the file as its argument, archives the remote', async function () {
    const { page, workspace } = suite.window;
    await planTask(page, 'add a changelog');
    const [session] = await listSessions(suite.server);
    const frame = await reviewFrame(page, '#plan li');
    await frame.getByRole('button', { name: 'Teleport', exact: true }).click();

    const planFile = path.join(workspace, '.ultraplan', 'plans', `${today}-add-a-changelog.plan.md`);
    const marker = path.join(workspace, 'teleport-marker.txt');
    // The task may be halfway through writing its marker when it is read: wait for whole JSON.
    const readMarker = () => {
      try {
        return JSON.parse(fs.readFileSync(marker, 'utf8')) as { argv: string[]; plan: string };
      } catch {
        return undefined;
      }
    };
    const ran = await waitFor(readMarker, {
      timeoutMs: 30_000,
      message: 'the task to run and write its marker',
    });
    assert.deepEqual(ran.argv, [planFile], "the plan file is the task's only argument");
    // The file: front matter saying where the plan came from (its steps as todos), then the plan.
    assert.match(
      ran.plan,
      /^---\nname: "Plan: add a changelog"\n[\s\S]*\ntodos:\n[\s\S]*\nultraplan:\n {2}session: "[^"]+"\n {2}revision: 1\n {2}planHash: "sha256:[0-9a-f]{64}"\n[\s\S]*\n {2}decision: teleported\n[\s\S]*\n---\n\n# Plan: add a changelog\n/,
    );
    assert.equal(fs.readFileSync(planFile, 'utf8'), ran.plan);

    const deny = await waitForEvents(suite.server, session!.id, (e) => exitPlanResults(e).find((r) => r.isError), 'the teleport deny');
    assert.match(deny.text, /^__ULTRAPLAN_TELEPORT_LOCAL__\n# Plan: add a changelog/);
    await waitFor(
      async () => ((await listSessions(suite.server)).find((s) => s.id === session!.id)?.session_status === 'archived' ? true : undefined),
      {
        timeoutMs: 15_000,
        message: 'the remote session to be archived',
      },
    );
    await readStatusBar(page, 'Ultraplan: teleported', { timeoutMs: 15_000 });
    const outcome = await reviewFrame(page, '.outcome');
    assert.match((await outcome.locator('.outcome').textContent()) ?? '', /running it as a task[\s\S]*archived/);
    await screenshot(page, 'teleported-task');
  });

  it('teleports to chat: falls back to the file in code-server and never overwrites the first plan', async function () {
    const { page, probe, workspace } = suite.window;
    await probe.updateConfiguration('ultraplan', 'teleport.target', 'chat');
    await planTask(page, 'add a changelog');
    const frame = await reviewFrame(page, '#plan li');
    await waitFor(async () => ((await frame.getByRole('button', { name: 'Teleport', exact: true }).isEnabled()) ? true : undefined), {
      timeoutMs: 15_000,
      message: 'the new plan to be decidable',
    });
    await frame.getByRole('button', { name: 'Teleport', exact: true }).click();
    const toast = await waitForNotification(page, 'No chat provider is installed here', { timeoutMs: 30_000 });
    const said = (await toast.textContent()) ?? '';
    assert.match(said, /the plan file is open instead/);
    assert.doesNotMatch(said, /Chat opened/, 'an empty Chat is neither opened nor said to be');
    const second = path.join(workspace, '.ultraplan', 'plans', `${today}-add-a-changelog-2.plan.md`);
    const editors = await waitFor(
      async () => {
        const open = await probe.editors();
        return open.some((e) => e.uri.endsWith(`${today}-add-a-changelog-2.plan.md`)) ? open : undefined;
      },
      { timeoutMs: 15_000, message: 'the plan file to open' },
    );
    assert.ok(editors.length > 0);
    assert.ok(fs.existsSync(second), 'a second file, not an overwrite');
    assert.ok(fs.existsSync(path.join(workspace, '.ultraplan', 'plans', `${today}-add-a-changelog.plan.md`)));
    await readStatusBar(page, 'Ultraplan: teleported', { timeoutMs: 15_000 });
    await screenshot(page, 'teleported-chat-fallback');
  });

  it('lists the saved plans, newest first, and opens the one picked', async function () {
    const { page, probe } = suite.window;
    await runCommand(page, 'Ultraplan: Open Saved Plans');
    const picker = await readQuickInput(page);
    assert.deepEqual(
      picker.items.slice(0, 2).map((i) => i.replace(/\s+\S+$/, '')),
      [`${today}-add-a-changelog-2.plan.md`, `${today}-add-a-changelog.plan.md`],
    );
    await answerQuickPick(page, `${today}-add-a-changelog.plan.md`);
    await waitFor(
      async () => ((await probe.editors()).some((e) => e.active && e.uri.endsWith(`/${today}-add-a-changelog.plan.md`)) ? true : undefined),
      {
        timeoutMs: 15_000,
        message: 'the picked plan to open',
      },
    );
  });

  it('opens the review from the status bar item', async function () {
    const { page, probe } = suite.window;
    await probe.executeCommand('workbench.action.closeAllEditors');
    await statusBarItem(page, 'Ultraplan: teleported').click();
    await waitFor(async () => ((await probe.tabs()).some((t) => t.kind === 'webview') ? true : undefined), {
      timeoutMs: 15_000,
      message: 'the review panel to open from the status bar',
    });
    await reviewFrame(page, '.outcome');
    await screenshot(page, 'status-bar-click');
  });

  it('refuses a plans folder that is a committed symlink to ~/.bashrc.d (teleport to File): nothing is written there, the plan stays undecided', async function () {
    const { page, probe, workspace } = suite.window;
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ultraplan-home-'));
    try {
      // Fedora's ~/.bashrc sources every file in ~/.bashrc.d: a plan saved there would run in the next shell.
      fs.mkdirSync(path.join(home, '.bashrc.d'));
      fs.symlinkSync(path.join(home, '.bashrc.d'), path.join(workspace, 'shared-plans'));
      await probe.updateConfiguration('ultraplan', 'plansDirectory', 'shared-plans');
      await probe.updateConfiguration('ultraplan', 'teleport.target', 'file');
      const before = new Set((await listSessions(suite.server)).map((s) => s.id));
      await planTask(page, 'add a license');
      const session = (await listSessions(suite.server)).find((s) => !before.has(s.id));
      assert.ok(session, 'a new session');
      const frame = await reviewFrame(page, '#plan li');
      await waitFor(async () => ((await frame.getByRole('button', { name: 'Teleport', exact: true }).isEnabled()) ? true : undefined), {
        timeoutMs: 15_000,
        message: 'the new plan to be decidable',
      });
      await frame.getByRole('button', { name: 'Teleport', exact: true }).click();
      await waitForNotification(page, 'which is outside the workspace', { timeoutMs: 15_000 });
      await screenshot(page, 'plans-folder-link-refused');
      assert.deepEqual(fs.readdirSync(path.join(home, '.bashrc.d')), [], 'nothing was written through the link');
      assert.deepEqual(decisionsSent(await sessionEvents(suite.server, session.id)), [], 'no teleport deny was sent');
    } finally {
      await probe.updateConfiguration('ultraplan', 'plansDirectory', '.ultraplan/plans');
      fs.rmSync(path.join(workspace, 'shared-plans'), { force: true });
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

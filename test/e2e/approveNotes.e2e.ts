// Approve with Notes in real code-server + Chromium, with Claude's real ACP adapter (0.101.0) as
// the embedded agent and only its model scripted on 127.0.0.1 (in this process). Through the review
// panel: the plan is shown, Approve with Notes… opens the notes field, Ctrl+Enter approves; the
// model's request log (the agent's record) shows the ExitPlanMode approval and the notes beside it,
// the agent's answer shows it had them, and the panel shows "Approved with notes", also after a
// window reload (the notes are kept with the decision).
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openTestWindow, readStatusBar, screenshot, waitFor, type TestWindow } from './harness';
import { killGroupsLeft, processesWithHome } from '../support/processes';
import { anthropicApi } from '../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer } from '../support/modelApi/scenario';
import { CLAUDE_ADAPTER, claudeEnv } from '../support/realAgents';
import { planTask, reportIfFailed, reviewFrame, AFTER_RELOAD_MS } from './ultraplanSteps';
import { UNSANDBOXED_AGENT } from './realAgentWindow';
import { ORIGINAL_APP } from '../support/acpFixtures';

const PLAN = '# Flip the flag\n\n1. Set original to false in src/app.ts.\n2. Run the tests.\n';
const NOTES = 'Keep `original` exported under the same name.';

describe('Approve with Notes in code-server, with the real Claude ACP adapter and only the model scripted', function () {
  const home = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-approve-notes-home-'));
  let window: TestWindow | undefined;
  const workspace = (): string => {
    if (!window) throw new Error('the approve-notes window is not open (its before hook failed)');
    return window.workspace;
  };
  const model = new ScriptedModelServer(
    anthropicApi,
    new Scenario([
      () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
      () => ({ toolCalls: [{ name: 'ExitPlanMode', input: { plan: PLAN } }] }),
      () => ({ toolCalls: [{ name: 'Read', input: { file_path: path.join(workspace(), 'src', 'app.ts') } }] }),
      (view) => ({ text: view.allText.includes(NOTES) ? 'Executed the plan; the name stays.' : 'No notes reached me.' }),
    ]),
  );

  before(async () => {
    await model.start();
    const env = claudeEnv(home, model.url);
    window = await openTestWindow({
      suite: 'approve-notes',
      files: { 'README.md': '# Demo project\n', 'src/app.ts': ORIGINAL_APP },
      settings: {
        'ultraplan.backend': 'embedded',
        'ultraplan.agent.choice': 'custom',
        'ultraplan.agent.command': ['/usr/bin/env', ...Object.entries(env).map(([key, value]) => `${key}=${value}`), CLAUDE_ADAPTER],
        ...UNSANDBOXED_AGENT,
      },
    });
  });
  afterEach(async function () {
    await reportIfFailed(this, window);
  });
  after(async () => {
    await window?.close();
    killGroupsLeft(processesWithHome(home));
    await model.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('approves with notes: the model gets the approval with the notes beside it; the panel shows "Approved with notes"', async function () {
    this.timeout(240_000);
    const { page } = window!;
    await planTask(page, 'flip the flag in src/app.ts');
    const frame = await reviewFrame(page, '#plan li');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Set original to false in src\/app\.ts/);

    await frame.getByRole('button', { name: 'Approve with Notes…' }).click();
    const notes = frame.locator('#approval-notes');
    await notes.waitFor({ state: 'visible', timeout: 10_000 });
    await notes.fill(NOTES);
    assert.match((await frame.locator('.notes-count').textContent()) ?? '', new RegExp(`^${NOTES.length} / 2,000 characters`));
    await screenshot(page, 'approve-notes-field');
    await notes.press('Control+Enter');

    // The agent's record: the model was sent the approval and, with it (Claude Code passes a message
    // sent during the turn on at its next request), the notes; its answer shows it had them.
    const notesRound = await model.waitFor(
      () => model.rounds.find((r) => r.view?.lastUser.text.includes(NOTES)),
      120_000,
      'a model request carrying the notes',
    );
    const approvalRound = model.rounds.find((r) => r.view?.lastUser.toolResults.some((t) => t.name === 'ExitPlanMode' && !t.isError));
    assert.ok(approvalRound, `no ExitPlanMode approval reached the model: ${model.describe()}`);
    assert.ok((notesRound.round ?? 0) >= (approvalRound.round ?? 0), 'the approval first, the notes with it or right after');
    assert.match(notesRound.view?.lastUser.text ?? '', /Notes from the reviewer on the approved plan/);
    await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 60_000 });
    assert.match((await frame.locator('.outcome').textContent()) ?? '', /Executed the plan; the name stays\./);

    // The panel says what was decided, with the notes.
    await waitFor(
      async () =>
        (await frame
          .locator('.revision-feedback h2')
          .textContent()
          .catch(() => null)) === 'Approved with notes'
          ? true
          : undefined,
      { timeoutMs: 60_000, message: 'the panel to show "Approved with notes"' },
    );
    assert.equal(await frame.locator('.approval-notes-text').textContent(), NOTES);
    assert.equal((await frame.locator('.revision-list button').first().textContent())?.trim(), 'Revision 1: approved with notes');
    await screenshot(page, 'approved-with-notes');
    assert.deepEqual(model.scenario.overruns, []);
  });

  it('after a window reload the review still shows the approval with its notes (kept with the decision)', async function () {
    this.timeout(120_000);
    const w = window!;
    const before = w.probe.announcement();
    const after = await w.reload();
    assert.notEqual(after.startedAt, before?.startedAt, 'a new extension host');
    await readStatusBar(w.page, 'Ultraplan: approved · completed', { timeoutMs: 30_000 });
    const frame = await reviewFrame(w.page, '.revision-feedback h2', AFTER_RELOAD_MS);
    assert.equal(await frame.locator('.revision-feedback h2').textContent(), 'Approved with notes');
    assert.equal(await frame.locator('.approval-notes-text').textContent(), NOTES);
    assert.equal((await frame.locator('.revision-list button').first().textContent())?.trim(), 'Revision 1: approved with notes');
    await screenshot(w.page, 'approved-with-notes-after-reload');
  });
});

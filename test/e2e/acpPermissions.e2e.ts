// After Approve, an embedded ACP agent (the scripted fake, spawned as a custom command through the
// extension's real path) executes the plan with edits approved manually (ultraplan.afterApproval
// "default") and asks permission for an edit. In real code-server + Chromium: the request shows as
// a notification with Allow / Deny / Details and the status bar says "needs permission"; Details
// opens the full input read-only and asks again; a dismissed prompt leaves the request open and the
// status bar asks it again; Allow reaches the agent as its one-time allow option, the agent edits and the session completes.
// A second session: Deny reaches the agent as its reject option and the file stays as it was. In the
// extension host: a repeated or re-bound answer is refused, a 409 is said to be answered elsewhere.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  assertHostSuitePassed,
  openTestWindow,
  readStatusBar,
  screenshot,
  statusBarItem,
  waitFor,
  waitForNotification,
  type TestWindow,
} from './harness';
import { ORIGINAL_APP } from '../support/acpFixtures';
import { fakeAgentCommand, readAgentRecord, RECORD_OUTSIDE_SANDBOX } from '../support/fakeAcpAgent';
import { killGroupsLeft } from '../support/processes';
import { planTask, reportIfFailed, reviewFrame } from './ultraplanSteps';

const AGENT_LABEL = 'fake-acp-agent.mjs (ACP)';
const PROMPT_TEXT = `Ultraplan: ${AGENT_LABEL} asks permission: Edit src/app.ts`;
const TOAST = '.notifications-toasts .notification-toast-container';

interface RecordEntry {
  kind: string;
  pid?: number;
  toolCallId?: string;
  outcome?: string;
}

const readRecord = (file: string): RecordEntry[] => readAgentRecord<RecordEntry>(file);

/** [toolCallId, chosen option] of each permission the agent asked, in order (all its processes). */
function outcomes(file: string): Array<[string, string]> {
  return readRecord(file)
    .filter((e) => e.kind === 'permission_outcome')
    .map((e) => [String(e.toolCallId), String(e.outcome)]);
}

describe('permission requests while an approved plan executes (embedded ACP agent in code-server)', function () {
  let window: TestWindow | undefined;
  let dir = '';
  let record = '';

  before(async function () {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-acp-permission-e2e-'));
    record = path.join(dir, 'record.jsonl');
    window = await openTestWindow({
      suite: 'acp-permissions',
      files: { 'README.md': '# Demo project\n', 'src/app.ts': ORIGINAL_APP },
      settings: {
        'ultraplan.backend': 'embedded',
        'ultraplan.agent.choice': 'custom',
        'ultraplan.agent.command': fakeAgentCommand('execute-with-permission.json', record),
        'ultraplan.afterApproval': 'default',
        ...RECORD_OUTSIDE_SANDBOX,
      },
    });
  });
  afterEach(async function () {
    await reportIfFailed(this, window);
  });
  after(async function () {
    await window?.close();
    killGroupsLeft(readRecord(record).flatMap((e) => (e.kind === 'started' && e.pid ? [e.pid] : [])));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function approvePlan(): Promise<void> {
    const frame = await reviewFrame(window!.page, '#plan li');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Set original to false/);
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();
  }

  it('approve -> the edit request is asked (notification + "needs permission"); Details shows the input read-only and asks again; dismissed stays open, the status bar asks again; Allow reaches the agent once, the session completes', async function () {
    const { page, probe, workspace } = window!;
    await planTask(page, 'set original to false');
    await approvePlan();

    const toast = await waitForNotification(page, PROMPT_TEXT, { timeoutMs: 30_000 });
    // Who wants what, once: the ACP title names the file relative to the workspace.
    assert.equal((await toast.locator('.notification-list-item-message').innerText()).trim(), PROMPT_TEXT);
    const buttons = (await toast.locator('.monaco-button').allInnerTexts()).map((b) => b.trim());
    assert.deepEqual(
      buttons.filter((b) => ['Allow', 'Deny', 'Details'].includes(b)),
      ['Allow', 'Deny', 'Details'],
    );
    assert.match(await readStatusBar(page, 'Ultraplan: needs permission', { timeoutMs: 10_000 }), /needs permission/);
    // Nothing was answered for the person: the agent still waits.
    assert.deepEqual(outcomes(record), [['exit-1', 'default']], 'the plan approved with manual edits; the edit not answered');
    await screenshot(page, 'permission-asked');

    // Details: the full input in a read-only editor, then the same question again.
    await toast.locator('.monaco-button', { hasText: 'Details' }).click();
    const details = await waitFor(async () => (await probe.editors()).find((e) => e.uri.startsWith('ultraplan-permission:') && e.active), {
      timeoutMs: 15_000,
      message: 'the Details editor',
    });
    assert.match(details.text, /"new_string": "export const original = false;"/);
    assert.ok(details.text.includes(JSON.stringify(path.join(workspace, 'src', 'app.ts'))), details.text);
    await waitForNotification(page, PROMPT_TEXT, { timeoutMs: 10_000 });
    // Read-only: typing into it changes nothing.
    await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
    await page.keyboard.type('tampered');
    const after = (await probe.editors()).find((e) => e.uri === details.uri);
    assert.equal(after?.text, details.text, 'the Details view cannot be edited');
    assert.equal(after?.isDirty, false);
    await screenshot(page, 'permission-details');

    // Dismissed is not answered: the request stays open, and the status bar asks it again.
    await probe.executeCommand('notifications.clearAll');
    await waitFor(async () => ((await page.locator(TOAST).filter({ hasText: PROMPT_TEXT }).count()) === 0 ? true : undefined), {
      timeoutMs: 10_000,
      message: 'the prompt to be dismissed',
    });
    assert.match(await readStatusBar(page, 'Ultraplan: needs permission'), /needs permission/);
    assert.equal(outcomes(record).length, 1, 'dismissing answered nothing');
    await statusBarItem(page, 'Ultraplan: needs permission').click();
    const again = await waitForNotification(page, PROMPT_TEXT, { timeoutMs: 10_000 });
    await again.locator('.monaco-button', { hasText: 'Allow' }).click();
    await waitFor(() => (outcomes(record).length === 2 ? true : undefined), { timeoutMs: 30_000, message: 'the allow to reach the agent' });
    assert.deepEqual(
      outcomes(record),
      [
        ['exit-1', 'default'],
        ['edit-1', 'allow'],
      ],
      'the one-time allow, not "Always Allow"',
    );

    await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 30_000 });
    assert.equal(
      readFileSync(path.join(workspace, 'src', 'app.ts'), 'utf8'),
      'export const original = false;\n',
      'the agent made the allowed edit',
    );
    assert.equal(outcomes(record).length, 2, 'nothing else was answered');
    const outcome = await reviewFrame(page, '.outcome');
    await waitFor(
      async () =>
        ((await outcome.locator('.outcome').textContent()) ?? '').includes('Done: src/app.ts now says original = false.') || undefined,
      {
        timeoutMs: 20_000,
        message: "the agent's closing message as the outcome",
      },
    );
    await screenshot(page, 'completed-after-allow');
  });

  it('answers go out once: a repeated, re-bound or foreign answer is refused, one answered elsewhere (409) is said so (checked in the extension host)', async function () {
    const results = await window!.probe.runSuite('permissionAnswers', { timeoutMs: 120_000 });
    assertHostSuitePassed(results);
  });

  it('Deny reaches the agent as its reject option; the file is left as it was and the session completes', async function () {
    const { page, probe, workspace } = window!;
    await probe.executeCommand('notifications.clearAll');
    const file = path.join(workspace, 'src', 'app.ts');
    const before = readFileSync(file, 'utf8');
    const started = readRecord(record).filter((e) => e.kind === 'started').length;
    await planTask(page, 'set original to false, again');
    await waitFor(() => (readRecord(record).filter((e) => e.kind === 'started').length > started ? true : undefined), {
      timeoutMs: 10_000,
      message: 'a second agent process',
    });
    await approvePlan();
    const toast = await waitForNotification(page, PROMPT_TEXT, { timeoutMs: 30_000 });
    const seen = outcomes(record).length;
    await toast.locator('.monaco-button', { hasText: 'Deny' }).click();
    await waitFor(() => (outcomes(record).length === seen + 1 ? true : undefined), {
      timeoutMs: 30_000,
      message: 'the deny to reach the agent',
    });
    assert.deepEqual(outcomes(record).slice(seen - 1), [
      ['exit-1', 'default'],
      ['edit-1', 'reject'],
    ]);
    await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 30_000 });
    assert.equal(readFileSync(file, 'utf8'), before, 'the denied edit was not made');
    await screenshot(page, 'completed-after-deny');
  });
});

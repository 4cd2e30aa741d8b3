// While an embedded ACP agent plans (the scripted fake, spawned through the extension's real path,
// in real code-server + Chromium), a read outside the workspace and a fetch go to the person as the
// usual permission prompt: Deny keeps the file from the agent, Allow lets the fetch through; a read
// inside the workspace is not asked; each decision is in the extension's log.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openTestWindow, readStatusBar, screenshot, waitForNotification, type TestWindow } from './harness';
import { ALLOW_OR_REJECT, ORIGINAL_APP } from '../support/acpFixtures';
import { fakeAgentCommand, readAgentRecord, permissionOutcomes, RECORD_OUTSIDE_SANDBOX } from '../support/fakeAcpAgent';
import { killGroupsLeft } from '../support/processes';
import { planTask, reportIfFailed, reviewFrame } from './ultraplanSteps';

const AGENT_LABEL = 'fake-acp-agent.mjs (ACP)';

interface RecordEntry {
  kind: string;
  pid?: number;
  ok?: boolean;
  content?: string;
  message?: string;
  outcome?: string;
}

describe('reads outside the workspace and fetches while planning go to the person (embedded ACP agent in code-server)', function () {
  let window: TestWindow | undefined;
  let dir = '';
  let record = '';
  let secret = '';

  before(async function () {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-planning-access-e2e-'));
    record = path.join(dir, 'record.jsonl');
    secret = path.join(dir, 'id_rsa');
    writeFileSync(secret, 'PRIVATE KEY\n');
    const scenario = path.join(dir, 'scenario.json');
    const plan = '# Update app.ts\n\n1. Set original to false';
    writeFileSync(
      scenario,
      JSON.stringify({
        agentInfo: { name: 'fake-claude-agent-acp', title: 'Fake Claude', version: '0.101.0' },
        modes: {
          currentModeId: 'default',
          availableModes: [
            { id: 'default', name: 'Manual' },
            { id: 'plan', name: 'Plan Mode' },
          ],
        },
        turns: [
          [
            { readFile: { path: '{{cwd}}/README.md' } },
            { readFile: { path: secret } },
            {
              permission: {
                toolCall: {
                  toolCallId: 'fetch-1',
                  title: 'Fetch https://example.com/docs',
                  kind: 'fetch',
                  rawInput: { url: 'https://example.com/docs', prompt: 'summarize' },
                },
                options: ALLOW_OR_REJECT,
              },
            },
            { chunk: 'Here is my plan.' },
            {
              permission: {
                toolCall: { toolCallId: 'exit-1', title: 'Ready to code?', kind: 'switch_mode', rawInput: { plan } },
                options: [
                  { optionId: 'default', name: 'Yes, and manually approve edits', kind: 'allow_once' },
                  { optionId: 'plan', name: 'No, keep planning', kind: 'reject_once' },
                ],
              },
            },
          ],
        ],
      }),
    );
    window = await openTestWindow({
      suite: 'acp-planning-access',
      files: { 'README.md': '# Demo project\n', 'src/app.ts': ORIGINAL_APP },
      settings: {
        'ultraplan.backend': 'embedded',
        'ultraplan.agent.choice': 'custom',
        'ultraplan.agent.command': fakeAgentCommand(scenario, record),
        ...RECORD_OUTSIDE_SANDBOX,
      },
    });
  });
  afterEach(async function () {
    await reportIfFailed(this, window);
  });
  after(async function () {
    await window?.close();
    killGroupsLeft(readAgentRecord<RecordEntry>(record).flatMap((e) => (e.kind === 'started' && e.pid ? [e.pid] : [])));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('asks before a read outside the workspace (Deny keeps it from the agent) and before a fetch (Allow lets it through)', async function () {
    const { page } = window!;
    await planTask(page, 'set original to false', 'Ultraplan: needs permission');
    const readPrompt = `Ultraplan: ${AGENT_LABEL} asks permission: Read ${secret}`;
    const readToast = await waitForNotification(page, readPrompt, { timeoutMs: 30_000 });
    await screenshot(page, 'outside-read-asked');
    await readToast.locator('.monaco-button', { hasText: 'Deny' }).click();

    const fetchToast = await waitForNotification(page, `Ultraplan: ${AGENT_LABEL} asks permission: Fetch https://example.com/docs`, {
      timeoutMs: 30_000,
    });
    await fetchToast.locator('.monaco-button', { hasText: 'Allow' }).click();
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    const frame = await reviewFrame(page, '#plan li');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Set original to false/);

    const entries = readAgentRecord<RecordEntry>(record);
    const reads = entries.filter((e) => e.kind === 'read_outcome');
    assert.deepEqual(
      reads.map((e) => e.ok),
      [true, false],
      JSON.stringify(reads),
    );
    assert.equal(reads[0]?.content, '# Demo project\n');
    assert.match(String(reads[1]?.message), /the person denied reading outside the workspace/);
    assert.ok(!JSON.stringify(entries).includes('PRIVATE KEY'), 'the file reached the agent');
    assert.deepEqual(permissionOutcomes(entries), ['allow']);
  });
});

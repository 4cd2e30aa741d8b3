// Review Plan File… in real code-server + Chromium, on the embedded default with a real ACP agent
// program (the scripted fake, spawned through the extension's real path): plans other tools wrote
// in the workspace (.copilot/plans/plan-x.md, Cursor's .cursor/plans/y.plan.md with its front
// matter) are offered by the Command Palette and reviewed from the explorer's context menu. The
// panel shows the plan before any agent runs; Approve starts the agent out of plan mode with the
// approved plan as its prompt (its progress shown against the plan's steps); a line comment and
// Reject start one in plan mode that revises it (revision 2 in the same review); the session and
// its revisions survive a window reload; the plan files themselves are left as they were.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { answerQuickPick, readQuickInput, readStatusBar, runCommand, screenshot, uriArg, waitFor, type HostProbe } from './harness';
import { fakeAgentCommand, permissionOutcomes, readAgentRecord, received, RECORD_OUTSIDE_SANDBOX } from '../support/fakeAcpAgent';
import { killGroupsLeft } from '../support/processes';
import { reviewFrame, revisionFrame, suiteWindow, writeReview } from './ultraplanSteps';

const COPILOT_PLAN = [
  '# Rename the --done flag',
  '',
  '1. Rename the --done flag to --finished in src/cli.ts',
  '2. Mention --finished in the README',
  '',
].join('\n');

const CURSOR_PLAN = [
  '---',
  'name: Add a greeting',
  'overview: Greet whoever runs the tool',
  'todos:',
  '  - id: greet',
  '    content: Write greet() in src/greet.ts',
  '    status: pending',
  '---',
  '',
  '# Add a greeting',
  '',
  '1. Write greet() in src/greet.ts',
  '2. Call it from src/index.ts',
  '',
].join('\n');

const REVISED_PLAN = '# Add a greeting (v2)\n\n1. Write greet(name) in src/greet.ts\n2. Call it from src/index.ts with the user name';

const MODES = {
  currentModeId: 'default',
  availableModes: [
    { id: 'default', name: 'Manual' },
    { id: 'acceptEdits', name: 'Accept Edits' },
    { id: 'plan', name: 'Plan Mode' },
  ],
};

const CONFIG_OPTIONS = [
  {
    id: 'mode',
    name: 'Mode',
    category: 'mode',
    type: 'select',
    currentValue: 'default',
    options: MODES.availableModes.map((m) => ({ value: m.id, name: m.name })),
  },
];

const todo = (content: string, status: string) => ({ content, status, priority: 'medium' });

/**
 * Claude-shaped, as test/fixtures/fake-acp-agent/scenarios/claude-plan.json, with the turn chosen by
 * the prompt: a plan file's agent is first started by the decision, with the approved plan to carry
 * out or the rejected one to revise (core/planFileSession.ts).
 */
const SCENARIO = {
  description: 'Review Plan File e2e: carries out an approved plan file, or revises a rejected one.',
  agentInfo: { name: 'fake-claude-agent-acp', title: 'Fake Claude', version: '0.101.0' },
  modes: MODES,
  configOptions: CONFIG_OPTIONS,
  setModeEcho: 'both',
  routes: [
    {
      promptIncludes: ['The reviewer approved the plan below', 'Rename the --done flag to --finished in src/cli.ts'],
      steps: [
        { chunk: 'Carrying out the approved plan. ' },
        {
          plan: [
            todo('Rename the --done flag to --finished in src/cli.ts', 'in_progress'),
            todo('Mention --finished in the README', 'pending'),
          ],
        },
        {
          plan: [
            todo('Rename the --done flag to --finished in src/cli.ts', 'completed'),
            todo('Mention --finished in the README', 'pending'),
          ],
        },
        { chunk: 'Renamed the flag; the README is next.' },
      ],
    },
    {
      promptIncludes: ['The reviewer rejected the plan below'],
      steps: [
        { chunk: 'Revised after your feedback.' },
        {
          toolCall: {
            toolCallId: 'exit-2',
            title: 'Ready to code?',
            kind: 'switch_mode',
            status: 'pending',
            rawInput: { plan: REVISED_PLAN },
          },
        },
        {
          permission: {
            toolCall: { toolCallId: 'exit-2', title: 'Ready to code?', kind: 'switch_mode', rawInput: { plan: REVISED_PLAN } },
            options: [
              { optionId: 'acceptEdits', name: 'Yes, and auto-accept edits', kind: 'allow_always' },
              { optionId: 'default', name: 'Yes, and manually approve edits', kind: 'allow_once' },
              { optionId: 'plan', name: 'No, keep planning', kind: 'reject_once' },
            ],
          },
          then: {
            default: [
              { modeUpdate: 'default' },
              { toolCallUpdate: { toolCallId: 'exit-2', status: 'completed' } },
              { chunk: 'Implementing v2.' },
            ],
            '*': [{ chunk: 'Still planning.' }],
          },
        },
      ],
    },
  ],
  turns: [[{ chunk: 'This scenario plans nothing of its own.' }]],
};

const EXPLORER_ROW = '.explorer-folders-view .monaco-list-row';

/** The session/prompt texts the agent processes received, in order. */
function prompts(record: string): string[] {
  return received(readAgentRecord(record), 'session/prompt').map(({ params }) =>
    ((params.prompt ?? []) as Array<{ text?: string }>).map((b) => b.text ?? '').join(''),
  );
}

/** The modes the agents were asked to switch to, in order (a mode request, or the mode config option). */
function modesSet(record: string): unknown[] {
  return readAgentRecord(record).flatMap((entry) => {
    const message = entry.kind === 'received' ? (entry.message as { method?: string; params?: Record<string, unknown> }) : undefined;
    if (message?.method === 'session/set_mode') return [message.params?.modeId];
    if (message?.method === 'session/set_config_option' && message.params?.configId === 'mode') return [message.params.value];
    return [];
  });
}

const startedPids = (record: string): number[] =>
  readAgentRecord(record).flatMap((e) => (e.kind === 'started' && typeof e.pid === 'number' ? [e.pid] : []));

/** Right-clicks `file` (workspace-relative) in the Explorer and picks `item` from its context menu, as a person does. */
async function fromExplorerMenu(page: Page, probe: HostProbe, workspace: string, file: string, item: string): Promise<void> {
  await probe.executeCommand('revealInExplorer', uriArg(path.join(workspace, file)));
  const row = page.locator(EXPLORER_ROW, { hasText: path.basename(file) }).first();
  await row.waitFor({ state: 'visible', timeout: 15_000 });
  await row.click({ button: 'right' });
  const entry = page.getByRole('menuitem', { name: item });
  await entry.waitFor({ state: 'visible', timeout: 10_000 });
  await screenshot(page, 'explorer-context-menu');
  await entry.click();
}

/** Waits until the open panel's decision buttons take a click (the plan is decidable). */
async function decidable(frame: Awaited<ReturnType<typeof reviewFrame>>, what: string): Promise<void> {
  await waitFor(async () => ((await frame.getByRole('button', { name: 'Approve', exact: true }).isEnabled()) ? true : undefined), {
    timeoutMs: 20_000,
    message: what,
  });
}

describe('Review Plan File… (embedded default, a real ACP agent program)', function () {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-plan-file-e2e-'));
  const record = path.join(dir, 'record.jsonl');
  const scenarioFile = path.join(dir, 'scenario.json');
  writeFileSync(scenarioFile, JSON.stringify(SCENARIO, null, 2));
  const suite = suiteWindow({
    suite: 'review-plan-file',
    files: {
      'README.md': '# A command line tool\n',
      'src/cli.ts': "export const flags = ['--done'];\n",
      'src/index.ts': 'export {};\n',
      '.copilot/plans/plan-x.md': COPILOT_PLAN,
      '.cursor/plans/y.plan.md': CURSOR_PLAN,
    },
    settings: {
      'ultraplan.backend': 'embedded',
      'ultraplan.agent.choice': 'custom',
      'ultraplan.agent.command': fakeAgentCommand(scenarioFile, record),
      ...RECORD_OUTSIDE_SANDBOX,
    },
  });

  after(function () {
    // Runs after suiteWindow's own (the window is closed): nothing of ours may outlive the suite.
    killGroupsLeft(startedPids(record));
    rmSync(dir, { recursive: true, force: true });
  });

  it('the Command Palette offers the plans found on disk; the picked plan opens in the review before any agent runs', async function () {
    const { page } = suite.window;
    await runCommand(page, 'Ultraplan: Review Plan File…');
    const shown = await waitFor(
      async () => {
        const q = await readQuickInput(page);
        return q.items.includes('plan-x.md') && q.items.includes('y.plan.md') ? q : undefined;
      },
      { timeoutMs: 20_000, message: 'the picker to list both plans' },
    );
    assert.equal(shown.title, 'Ultraplan: Review Plan File');
    assert.ok(
      shown.items.some((i) => i.includes('Browse…')),
      `Browse… offered: ${JSON.stringify(shown.items)}`,
    );
    const descriptions = await page
      .locator('.quick-input-list .monaco-list-row')
      .evaluateAll((rows) =>
        rows.map(
          (row) =>
            `${row.querySelector('.label-name')?.textContent?.trim()} | ${row.querySelector('.label-description')?.textContent?.trim()}`,
        ),
      );
    assert.ok(
      descriptions.some((d) => /^plan-x\.md \| .*Copilot.*\.copilot\/plans$/.test(d)),
      JSON.stringify(descriptions),
    );
    assert.ok(
      descriptions.some((d) => /^y\.plan\.md \| .*Cursor.*\.cursor\/plans$/.test(d)),
      JSON.stringify(descriptions),
    );
    await screenshot(page, 'review-plan-file-picker');
    await answerQuickPick(page, 'plan-x.md');

    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 60_000 });
    const frame = await reviewFrame(page, '#plan li');
    const plan = (await frame.locator('#plan').textContent()) ?? '';
    assert.match(plan, /Rename the --done flag to --finished in src\/cli\.ts/);
    assert.match(plan, /Mention --finished in the README/);
    assert.match((await frame.locator('.revision-label').textContent()) ?? '', /Revision 1/);
    await decidable(frame, 'the file plan to be decidable');
    for (const label of ['Approve', 'Reject', 'Edit']) {
      assert.equal(await frame.getByRole('button', { name: label, exact: true }).isEnabled(), true, `${label} enabled`);
    }
    assert.deepEqual(startedPids(record), [], 'no agent runs while the plan waits for the decision');
    await screenshot(page, 'copilot-plan-in-review');
  });

  it('Approve starts the agent out of plan mode with the approved plan; its progress is shown against the plan; the file is unchanged', async function () {
    const { page, workspace } = suite.window;
    const frame = await reviewFrame(page, '#plan li');
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();

    const carryOut = await waitFor(() => prompts(record)[0], { timeoutMs: 30_000, message: 'the approved plan to reach the agent' });
    assert.match(carryOut, /The reviewer approved the plan below \(written in \.copilot\/plans\/plan-x\.md, reviewed here\)/);
    assert.ok(carryOut.includes(COPILOT_PLAN.trimEnd()), carryOut);
    const modes = modesSet(record);
    assert.ok(!modes.includes('plan'), `the agent that carries out the plan is not put in plan mode (modes set: ${JSON.stringify(modes)})`);

    await readStatusBar(page, 'Ultraplan: approved', { timeoutMs: 30_000 });
    const panel = await reviewFrame(page, '.execution-steps');
    const steps = await waitFor(
      async () => {
        const rows = await panel
          .locator('.execution-step')
          .evaluateAll((items) =>
            items.map(
              (li) => `${li.className.replace(/.*status-(\S+).*/, '$1')}: ${li.querySelector('.execution-title')?.textContent ?? ''}`,
            ),
          );
        return rows.some((r) => r.startsWith('done:')) ? rows : undefined;
      },
      { timeoutMs: 30_000, message: "the agent's progress against the plan's steps" },
    );
    assert.deepEqual(steps, ['done: Rename the --done flag to --finished in src/cli.ts', 'pending: Mention --finished in the README']);
    await waitFor(async () => ((await panel.locator('.outcome').textContent()) ?? '').includes('the README is next') || undefined, {
      timeoutMs: 30_000,
      message: "the agent's closing message as the outcome",
    });
    await screenshot(page, 'copilot-plan-carried-out');
    assert.equal(readFileSync(path.join(workspace, '.copilot/plans/plan-x.md'), 'utf8'), COPILOT_PLAN, 'the plan file is left as it was');
  });

  it("the Explorer's context menu reviews Cursor's plan without its front matter; a line comment and Reject reach a revising agent", async function () {
    const { page, probe, workspace } = suite.window;
    await fromExplorerMenu(page, probe, workspace, '.cursor/plans/y.plan.md', 'Review Plan File…');
    const frame = await waitFor(
      async () => {
        const f = await reviewFrame(page, '#plan li');
        return ((await f.locator('#plan').textContent()) ?? '').includes('Write greet() in src/greet.ts') ? f : undefined;
      },
      { timeoutMs: 60_000, message: "Cursor's plan in the panel", retryErrors: true },
    );
    const plan = (await frame.locator('#plan').textContent()) ?? '';
    assert.doesNotMatch(plan, /overview:|todos:|status: pending/, 'the front matter is not part of the plan reviewed');
    await decidable(frame, "Cursor's plan to be decidable");
    assert.equal(startedPids(record).length, 1, 'only the first plan has an agent so far');

    await writeReview(frame, {
      line: 'Write greet() in src/greet.ts',
      comment: 'Take the name as a parameter',
      feedback: 'Greet someone in particular.',
    });
    await screenshot(page, 'cursor-plan-line-comment');
    await frame.getByRole('button', { name: 'Reject', exact: true }).click();

    const revise = await waitFor(() => prompts(record)[1], { timeoutMs: 30_000, message: 'the rejection to reach a new agent' });
    assert.match(revise, /The reviewer rejected the plan below \(written in \.cursor\/plans\/y\.plan\.md\)/);
    assert.match(revise, /Greet someone in particular\./);
    assert.match(revise, /> 1\. Write greet\(\) in src\/greet\.ts\n\nTake the name as a parameter/);
    const modes = modesSet(record);
    assert.equal(modes.at(-1), 'plan', `the revising agent plans in plan mode (modes set: ${JSON.stringify(modes)})`);

    const revised = await revisionFrame(page, 'Revision 2 of 2', 30_000);
    assert.match((await revised.locator('#plan').textContent()) ?? '', /Write greet\(name\) in src\/greet\.ts/);
    await screenshot(page, 'cursor-plan-revision-2');
    assert.equal(readFileSync(path.join(workspace, '.cursor/plans/y.plan.md'), 'utf8'), CURSOR_PLAN, 'the plan file is left as it was');
  });

  it('after a window reload the review goes on: revision 1 keeps its comment, revision 2 is approved and carried out', async function () {
    const w = suite.window;
    await w.reload();
    await readStatusBar(w.page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    const frame = await revisionFrame(w.page, 'Revision 2 of 2', 30_000);
    await frame.getByRole('button', { name: 'Revision 1: rejected' }).click();
    assert.equal(await frame.locator('.comment-card .comment-text').textContent(), 'Take the name as a parameter');
    assert.match((await frame.locator('.revision-feedback').textContent()) ?? '', /Greet someone in particular/);
    await frame.getByRole('button', { name: /^Revision 2/ }).click();
    await decidable(frame, 'revision 2 to be decidable after the reload');
    await screenshot(w.page, 'cursor-plan-after-reload');
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();

    await waitFor(() => (permissionOutcomes(readAgentRecord(record)).length === 1 ? true : undefined), {
      timeoutMs: 30_000,
      message: 'the approval of revision 2 to reach its agent',
    });
    assert.deepEqual(permissionOutcomes(readAgentRecord(record)), ['default']);
    const outcome = await reviewFrame(w.page, '.outcome');
    await waitFor(async () => ((await outcome.locator('.outcome').textContent()) ?? '').includes('Implementing v2.') || undefined, {
      timeoutMs: 30_000,
      message: "revision 2's agent's closing message as the outcome",
    });
    assert.equal(startedPids(record).length, 2, 'one agent per plan: the revising agent carried out its own revision');
    await screenshot(w.page, 'cursor-plan-approved');
  });
});

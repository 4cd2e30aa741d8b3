// The approved plan as a contract, end to end in real code-server + Chromium: the embedded backend
// runs the fake ACP agent program (a custom command, spawned through the extension's real path) in
// a git workspace. Approve a 4-step plan in the panel; the checklist fills in from the agent's ACP
// `plan` updates, with the files its edits touched under each step; the agent skips step 3; the
// verification that starts by itself when the execution ends (ultraplan.verify.afterExecution)
// finds step 3 missing; after a window reload (the finished session is restored with no live
// backend) Continue in the panel attaches it again and sends step 3 to the same session (its agent
// process ended with the approved plan's turn, so the service starts it again for that turn), which
// carries out step 3; the verification after that end is clean; and after another reload the panel
// still shows the checklist and the verification. The fleet's
// finder and verifier are the same fake agent program answering the fleet's prompts (its routes).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import { EXTENSION_ID, openTestWindow, screenshot, waitFor, waitForStoredWorkspaceState, type TestWindow } from './harness';
import { VERIFICATIONS_KEY } from '../../src/core/stateKeys';
import { PLAN_4, STEP_FILES, finderReplyFor, todoList, type TodoState } from '../agents/executionKit';
import { fakeAgentCommand, readAgentRecord, RECORD_OUTSIDE_SANDBOX } from '../support/fakeAcpAgent';
import { killGroupsLeft } from '../support/processes';
import { CONFIRMED, jsonText } from '../support/review/planRepo';
import { planTask, reportIfFailed, reviewFrame, AFTER_RELOAD_MS } from './ultraplanSteps';

/** The workspace before the plan: committed, so the service records the change since approval. */
const INITIAL: Record<string, string> = {
  'README.md': '# Demo project\n',
  'src/index.ts': 'export {};\n',
  'test/.keep': '',
};

/** Only step 3's file holds this text (the plan does not): a finder prompt whose diff has it sees step 3 done. */
const STEP_3_MARK = "greet('Ada')";

const file = (step: keyof typeof STEP_FILES) => STEP_FILES[step];

/** Step `step`'s edit as the agent reports it: a tool call naming the file, the write, the call done. */
function edit(step: keyof typeof STEP_FILES): object[] {
  const { path: rel, text } = file(step);
  const id = `edit-${step}`;
  return [
    { toolCall: { toolCallId: id, title: `Edit ${rel}`, kind: 'edit', status: 'pending', locations: [{ path: `{{cwd}}/${rel}` }] } },
    { toolCallUpdate: { toolCallId: id, status: 'in_progress' } },
    { writeFile: { path: `{{cwd}}/${rel}`, content: text } },
    { toolCallUpdate: { toolCallId: id, status: 'completed' } },
  ];
}

/** The agent's todo list as an ACP plan update; the pause lets a person (and the test) see it. */
const todos = (states: TodoState[]): object[] => [
  { plan: todoList(states).map(({ content, status }) => ({ content, status, priority: 'medium' })) },
  { sleep: 1500 },
];

const ALL_FILES = [1, 2, 3, 4].map((s) => ({ path: file(s as 1 | 2 | 3 | 4).path }));
const WITHOUT_3 = ALL_FILES.filter((f) => f.path !== file(3).path);

/** Claude-shaped: plans, asks to leave plan mode with the plan; on Approve carries out steps 1, 2 and 4; its next turn does step 3. */
function scenario(): object {
  const exit = { toolCallId: 'exit-1', title: 'Ready to code?', kind: 'switch_mode', rawInput: { plan: PLAN_4 } };
  const execute = [
    { modeUpdate: 'default' },
    { toolCallUpdate: { toolCallId: 'exit-1', status: 'completed' } },
    { chunk: 'Implementing the plan now.' },
    ...todos(['in_progress', 'pending', 'pending', 'pending']),
    ...edit(1),
    ...todos(['completed', 'in_progress', 'pending', 'pending']),
    ...edit(2),
    ...todos(['completed', 'completed', 'pending', 'in_progress']),
    ...edit(4),
    {
      plan: todoList(['completed', 'completed', 'pending', 'completed']).map(({ content, status }) => ({
        content,
        status,
        priority: 'medium',
      })),
    },
    { chunk: 'Done: greet, its export and the README.' },
  ];
  const continued = [
    { chunk: 'Carrying out step 3.' },
    ...todos(['completed', 'completed', 'in_progress', 'completed']),
    ...edit(3),
    {
      plan: todoList(['completed', 'completed', 'completed', 'completed']).map(({ content, status }) => ({
        content,
        status,
        priority: 'medium',
      })),
    },
    { chunk: 'Step 3 is done: test/greet.test.ts tests greet.' },
  ];
  return {
    agentInfo: { name: 'fake-claude-agent-acp', title: 'Fake Claude', version: '0.101.0' },
    modes: {
      currentModeId: 'default',
      availableModes: [
        { id: 'default', name: 'Manual' },
        { id: 'acceptEdits', name: 'Accept Edits' },
        { id: 'plan', name: 'Plan Mode' },
        { id: 'bypassPermissions', name: 'Bypass Permissions' },
      ],
    },
    routes: [
      // Continue: the agent process ended with the approved plan's turn, so the session's next
      // turn is the first prompt of a new process; the route plays it whatever turn that is.
      { promptIncludes: ['found step 3 missing', 'Carry out step 3 now'], steps: continued },
      // The fleet's finder, after step 3 was carried out, then before; its verifier confirms each claim.
      {
        promptIncludes: ['Check the change made since approval against the plan', STEP_3_MARK],
        steps: [{ chunk: jsonText(finderReplyFor(ALL_FILES, PLAN_4)) }],
      },
      {
        promptIncludes: ['Check the change made since approval against the plan'],
        steps: [{ chunk: jsonText(finderReplyFor(WITHOUT_3, PLAN_4)) }],
      },
      { promptIncludes: ['Another reviewer'], steps: [{ chunk: jsonText(CONFIRMED) }] },
    ],
    turns: [
      [
        { chunk: 'Here is my plan.' },
        { toolCall: { ...exit, status: 'pending' } },
        {
          permission: {
            toolCall: exit,
            options: [
              { optionId: 'bypassPermissions', name: 'Yes, and bypass permissions', kind: 'allow_always' },
              { optionId: 'acceptEdits', name: 'Yes, and auto-accept edits', kind: 'allow_always' },
              { optionId: 'default', name: 'Yes, and manually approve edits', kind: 'allow_once' },
              { optionId: 'plan', name: 'No, keep planning', kind: 'reject_once' },
            ],
          },
          then: { default: execute, '*': [{ chunk: 'Still planning.' }] },
        },
      ],
    ],
  };
}

interface PromptEntry {
  kind: string;
  index?: number;
  pid?: number;
  text?: string;
}

/** Each checklist row: its status class and the files listed under it. */
async function checklist(frame: Frame): Promise<Array<[string, string[]]>> {
  return frame
    .locator('.execution-step')
    .evaluateAll((items) =>
      items.map((item) => [
        [...item.classList].find((c) => c.startsWith('status-'))?.slice('status-'.length) ?? '',
        [...item.querySelectorAll('.execution-files li')].map((li) => li.textContent?.trim() ?? ''),
      ]),
    );
}

/** Each verified step: its id and verdict. */
async function verdicts(frame: Frame): Promise<Array<[string, string]>> {
  return frame
    .locator('.verification-step')
    .evaluateAll((items) => items.map((item) => [(item as HTMLElement).dataset.stepId ?? '', (item as HTMLElement).dataset.verdict ?? '']));
}

describe('execution loop in code-server: approve, checklist, verification finds the skipped step, reload, Continue, verified clean, reload', function () {
  const home = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-execloop-'));
  const workspace = path.join(home, 'workspace');
  const record = path.join(home, 'record.jsonl');
  const scenarioFile = path.join(home, 'scenario.json');
  let window: TestWindow | undefined;
  const seen: string[] = [];

  before(async function () {
    this.timeout(180_000);
    for (const [rel, text] of Object.entries(INITIAL)) {
      mkdirSync(path.dirname(path.join(workspace, rel)), { recursive: true });
      writeFileSync(path.join(workspace, rel), text);
    }
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd: workspace });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'before the plan');
    writeFileSync(scenarioFile, JSON.stringify(scenario()));
    window = await openTestWindow({
      suite: 'execution-loop',
      workspace,
      settings: {
        'ultraplan.backend': 'embedded',
        'ultraplan.agent.choice': 'custom',
        'ultraplan.agent.command': fakeAgentCommand(scenarioFile, record),
        'ultraplan.review.finders': 1,
        'ultraplan.verify.afterExecution': true,
        ...RECORD_OUTSIDE_SANDBOX,
      },
    });
  });
  afterEach(async function () {
    await reportIfFailed(this, window);
  });
  after(async function () {
    await window?.close();
    killGroupsLeft(readAgentRecord<PromptEntry>(record).flatMap((e) => (e.kind === 'started' && e.pid ? [e.pid] : [])));
    rmSync(home, { recursive: true, force: true });
  });

  it('approve in the panel: the checklist fills in step by step with the files touched; step 3 is left not done', async function () {
    this.timeout(180_000);
    const { page } = window!;
    await planTask(page, 'add a greeting');
    const frame = await reviewFrame(page, '#plan li');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Create `?src\/greet\.ts/);
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();

    // Watched as it goes: each state the checklist passes through is kept.
    const execution = await reviewFrame(page, '.execution-step');
    await waitFor(
      async () => {
        const rows = await checklist(execution);
        const states = rows.map(([s]) => s).join(',');
        if (seen.at(-1) !== states) seen.push(states);
        return rows.length === 4 && rows[3]![0] === 'done' ? true : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200, message: 'steps 1, 2 and 4 done in the checklist' },
    );
    assert.ok(
      seen.some((s) => s.split(',')[0] === 'in_progress'),
      `step 1 was shown in progress: ${seen.join(' | ')}`,
    );
    assert.ok(
      seen.some((s) => s.split(',')[1] === 'in_progress'),
      `step 2 was shown in progress: ${seen.join(' | ')}`,
    );
    const rows = await checklist(execution);
    assert.deepEqual(rows[0], ['done', [file(1).path]]);
    assert.deepEqual(rows[1], ['done', [file(2).path]]);
    assert.notEqual(rows[2]![0], 'done', 'step 3 was skipped');
    assert.deepEqual(rows[2]![1], []);
    assert.deepEqual(rows[3], ['done', [file(4).path]]);
    await screenshot(page, 'checklist');
  });

  it('the verification that starts when the execution ends finds step 3 missing, shown in the panel with Continue', async function () {
    this.timeout(180_000);
    const { page } = window!;
    const frame = await reviewFrame(page, '.verification-step');
    await waitFor(async () => ((await verdicts(frame)).length === 4 ? true : undefined), {
      timeoutMs: 120_000,
      message: 'the verification in the panel',
    });
    assert.deepEqual(await verdicts(frame), [
      ['1', 'done'],
      ['2', 'done'],
      ['3', 'missing'],
      ['4', 'done'],
    ]);
    assert.match((await frame.locator('.verification-summary').textContent()) ?? '', /verified: 3 of 4 steps/);
    assert.equal(await frame.locator('.verification-step[data-step-id="3"] .continue-step').count(), 1, 'Continue on the missing step');
    assert.equal(await frame.locator('.continue-step').count(), 1, 'Continue only on the missing step');
    await screenshot(page, 'verification-missing');
  });

  it('after a window reload, Continue sends step 3 to the same session (attached again), its checklist fills it in, and the verification again is clean', async function () {
    this.timeout(300_000);
    const win = window!;
    // The finished session comes back from the reload with no live backend; Continue attaches it again.
    await waitForStoredWorkspaceState(
      win.page,
      EXTENSION_ID,
      VERIFICATIONS_KEY,
      (saved) => JSON.stringify(saved ?? null).includes('"verdict":"missing"'),
      'the verification finding step 3 missing in the browser storage',
    );
    await win.reload();
    const { page } = win;
    const frame = await reviewFrame(page, '.continue-step', AFTER_RELOAD_MS);
    await frame.locator('.continue-step').click();

    const continued = await waitFor(
      () => readAgentRecord<PromptEntry>(record).find((e) => e.kind === 'prompt' && (e.text ?? '').includes('Carry out step 3 now')),
      { timeoutMs: 30_000, message: 'the Continue message to reach the agent' },
    );
    assert.match(continued.text ?? '', /found step 3 missing/);
    assert.equal(
      readAgentRecord<PromptEntry>(record).filter((e) => e.kind === 'prompt' && e.text === 'add a greeting').length,
      1,
      'no new planning session: the task was prompted once',
    );

    const execution = await reviewFrame(page, '.execution-step');
    await waitFor(async () => ((await checklist(execution))[2]?.[0] === 'done' ? true : undefined), {
      timeoutMs: 60_000,
      message: 'step 3 done in the checklist',
    });
    assert.deepEqual(await checklist(execution), [
      ['done', [file(1).path]],
      ['done', [file(2).path]],
      ['done', [file(3).path]],
      ['done', [file(4).path]],
    ]);
    assert.equal(readFileSync(path.join(workspace, file(3).path), 'utf8'), file(3).text);

    const verification = await reviewFrame(page, '.verification-step');
    await waitFor(async () => ((await verdicts(verification)).every(([, v]) => v === 'done') ? true : undefined), {
      timeoutMs: 120_000,
      message: 'the verification after Continue to find every step done',
    });
    assert.equal(await verification.locator('.continue-step').count(), 0);
    assert.match((await verification.locator('.verification-summary').textContent()) ?? '', /verified: 4 of 4 steps/);
    // Two finder runs in all: one per end of the execution.
    const finders = readAgentRecord<PromptEntry>(record).filter(
      (e) => e.kind === 'prompt' && (e.text ?? '').includes('Check the change made since approval against the plan'),
    );
    assert.equal(finders.length, 2, 'one verification per end of the execution');
    await screenshot(page, 'verification-clean');
  });

  it('after a window reload the panel still shows the checklist and the clean verification', async function () {
    this.timeout(180_000);
    const win = window!;
    await waitForStoredWorkspaceState(
      win.page,
      EXTENSION_ID,
      VERIFICATIONS_KEY,
      (saved) => (JSON.stringify(saved ?? null).match(/"verdict":"done"/g) ?? []).length >= 4,
      'the clean verification in the browser storage',
    );
    await win.reload();
    const frame = await reviewFrame(win.page, '.verification-step', AFTER_RELOAD_MS);
    await waitFor(async () => ((await checklist(frame)).length === 4 ? true : undefined), {
      timeoutMs: 30_000,
      message: 'the checklist after the reload',
    });
    assert.deepEqual(await checklist(frame), [
      ['done', [file(1).path]],
      ['done', [file(2).path]],
      ['done', [file(3).path]],
      ['done', [file(4).path]],
    ]);
    assert.deepEqual(await verdicts(frame), [
      ['1', 'done'],
      ['2', 'done'],
      ['3', 'done'],
      ['4', 'done'],
    ]);
    assert.match((await frame.locator('.verification-summary').textContent()) ?? '', /verified: 4 of 4 steps/);
    await screenshot(win.page, 'after-reload');
  });
});

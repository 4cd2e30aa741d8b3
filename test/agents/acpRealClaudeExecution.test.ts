// Claude's real ACP adapter carrying out an approved 4-step plan, with only the model scripted:
// its TodoWrite (which Ultraplan turns on for it, src/agents/catalogue/progressSignals.ts) becomes
// the session's progress and the checklist; an execution that claims step 3 without doing it and
// edits a file no step names is verified as such; Continue, sent to the same session, carries out
// step 3 and the re-verification finds every step done.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { anthropicApi } from '../support/modelApi/anthropic';
import type { ScenarioRound } from '../support/modelApi/scenario';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanFile } from '../support/realAgents';
import {
  OUT_OF_PLAN,
  assertAllStepsDone,
  assertStep3MissingAndAppOutOfPlan,
  PLAN_4,
  STEP_FILES,
  continueSession,
  recordWorkspace,
  sessionChecklist,
  stepRows,
  todoList,
  verifyWorkspace,
  type TodoState,
} from './executionKit';
import { createRequest, eachRealAgentRun, executeAllowing, planUntilApproved } from './realAgentKit';

describe("the real Claude ACP adapter carries out an approved plan: its TodoWrite is the checklist's progress", function () {
  this.timeout(240_000);
  const run = eachRealAgentRun();

  it('executes 4 steps, skips step 3 while claiming it and edits src/app.ts; verification finds both; Continue does step 3 in the same session', async () => {
    const file = (relative: string) => path.join(run.workspace, relative);
    const write =
      (step: keyof typeof STEP_FILES): ScenarioRound =>
      () => ({
        toolCalls: [{ name: 'Write', input: { file_path: file(STEP_FILES[step].path), content: STEP_FILES[step].text } }],
      });
    const todos =
      (...states: TodoState[]): ScenarioRound =>
      () => ({ toolCalls: [{ name: 'TodoWrite', input: { todos: todoList(states) } }] });
    let toolsOffered: string[] = [];
    await run.open({
      family: anthropicApi,
      argv: [CLAUDE_ADAPTER],
      label: 'Claude (ACP)',
      env: claudeEnv,
      rounds: [
        (view) => ({ toolCalls: [{ name: 'Write', input: { file_path: claudePlanFile(view), content: PLAN_4 } }] }),
        () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
        () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
        // Approved: TodoWrite is a deferred tool of Claude Code, loaded through ToolSearch.
        (view) => {
          toolsOffered = view.toolNames;
          return { toolCalls: [{ name: 'ToolSearch', input: { query: 'select:TodoWrite', max_results: 1 } }] };
        },
        todos('in_progress', 'pending', 'pending', 'pending'),
        write(1),
        todos('completed', 'in_progress', 'pending', 'pending'),
        write(2),
        // Step 3 claimed done, never carried out.
        todos('completed', 'completed', 'completed', 'in_progress'),
        write(4),
        () => ({ toolCalls: [{ name: 'Write', input: { file_path: file(OUT_OF_PLAN.path), content: OUT_OF_PLAN.text } }] }),
        todos('completed', 'completed', 'completed', 'completed'),
        () => ({ text: 'Done: all four steps are complete.' }),
        // Continue: the same conversation, asked for step 3.
        todos('completed', 'completed', 'in_progress', 'completed'),
        write(3),
        todos('completed', 'completed', 'completed', 'completed'),
        () => ({ text: 'Done: step 3 is carried out.' }),
      ],
    });
    recordWorkspace(run.workspace);
    const session = await run.backend.createSession(createRequest('Add a greeting'));
    const { approved } = await planUntilApproved(run, session.id, { decisions: [{ behavior: 'allow' }], timeoutMs: 90_000 });
    assert.equal(approved.plan.trimEnd(), PLAN_4.trimEnd());

    const { result, asked } = await executeAllowing(run, session.id, approved, 90_000);
    assert.equal(result.isError, false, result.result);
    assert.equal(result.result, 'Done: all four steps are complete.');
    assert.equal(asked.length, 4, 'each Write asked once');
    assert.ok(toolsOffered.includes('ToolSearch'));
    // The tool was real: Claude Code accepted each TodoWrite (the adapter sends a plan update even for a refused one).
    for (const round of [5, 7, 9, 12]) {
      const [toolResult] = run.model.rounds[round]?.view?.lastUser.toolResults ?? [];
      assert.equal(toolResult?.isError, false, `round ${round}: ${JSON.stringify(toolResult)}`);
      assert.match(toolResult?.content ?? '', /Todos have been modified successfully/);
    }

    // Its progress signals are the session's events, and the checklist says what it claimed.
    const first = sessionChecklist(run, session.id);
    const todoFacts = first.facts.filter((f) => f.kind === 'todos');
    assert.equal(todoFacts.length, 4);
    assert.ok(todoFacts.every((f) => f.kind === 'todos' && f.source === 'acp_plan'));
    assert.deepEqual(
      first.facts.filter((f) => f.kind === 'file_touched').map((f) => (f.kind === 'file_touched' ? f.path : '')),
      ['src/greet.ts', 'src/index.ts', 'README.md', 'src/app.ts'],
    );
    assert.deepEqual(stepRows(first.checklist), [
      ['1', 'done', ['src/greet.ts']],
      ['2', 'done', ['src/index.ts']],
      ['3', 'done', []],
      ['4', 'done', ['README.md', 'src/app.ts']],
    ]);
    assert.deepEqual(first.checklist.notInPlan, []);
    assert.equal(first.summary, 'Completed: 4 of 4 steps reported done');

    // Verified against the plan: the claim of step 3 does not hold, and src/app.ts is no step's.
    const reported = { done: first.checklist.counts.done, total: first.checklist.counts.total };
    const message = assertStep3MissingAndAppOutOfPlan(await verifyWorkspace(run.workspace, approved.plan, reported));

    // Continue: the message the command sends, to the same session; the same conversation goes on.
    const agentsBefore = run.agents.length;
    const continued = await continueSession(run, session.id, message, 90_000);
    assert.equal(continued.result.is_error, false, continued.result.result);
    assert.equal(continued.result.result, 'Done: step 3 is carried out.');
    assert.equal(run.agents.length, agentsBefore, 'no new agent: the same session');
    const continueRound = run.model.rounds[13]?.view;
    assert.match(continueRound?.lastUser.text ?? '', /Carry out step 3 now/);
    assert.match(continueRound?.allText ?? '', /Done: all four steps are complete\./, 'the earlier turn is in the conversation');
    assert.equal(continued.asked, 1);

    const second = sessionChecklist(run, session.id);
    assert.deepEqual(stepRows(second.checklist)[2], ['3', 'done', ['test/greet.test.ts']]);
    assertAllStepsDone(
      await verifyWorkspace(run.workspace, approved.plan, { done: second.checklist.counts.done, total: second.checklist.counts.total }),
    );
    assert.deepEqual(run.model.scenario.overruns, []);
  });
});

// Gemini CLI (the real program) carrying out an approved 4-step plan, with only the model scripted.
// Gemini CLI sends no ACP `plan` update (its write_todos is offered to gemini-2.x models only, and
// its entries never reach the client), so its progress is its edits: each file it writes is a
// progress fact the session keeps, shown under the step that names it, while no step is reported.
// The skipped step 3 and the file no step names are verified as such; Continue, in the same
// session, carries out step 3.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { geminiApi } from '../support/modelApi/gemini';
import type { ScenarioRound } from '../support/modelApi/scenario';
import { geminiArgv, geminiEnv, geminiPlansDir } from '../support/realAgents';
import { ORIGINAL_APP } from '../support/acpFixtures';
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
  verifyWorkspace,
} from './executionKit';
import { createRequest, eachRealAgentRun, executeAllowing, planUntilApproved } from './realAgentKit';

describe('the real Gemini CLI carries out an approved plan: its edits are the progress it reports', function () {
  this.timeout(240_000);
  const run = eachRealAgentRun();

  before(() => {
    geminiArgv();
  });

  it('executes the plan but step 3, edits src/app.ts; the checklist has its files; verification finds both; Continue does step 3 in the same session', async () => {
    const file = (relative: string) => path.join(run.workspace, relative);
    const write =
      (step: keyof typeof STEP_FILES): ScenarioRound =>
      () => ({
        toolCalls: [{ name: 'write_file', input: { file_path: file(STEP_FILES[step].path), content: STEP_FILES[step].text } }],
      });
    await run.open({
      family: geminiApi,
      argv: geminiArgv(),
      label: 'Gemini CLI (ACP)',
      env: geminiEnv,
      rounds: [
        (view) => ({
          toolCalls: [{ name: 'write_file', input: { file_path: path.join(geminiPlansDir(view), 'greet.md'), content: PLAN_4 } }],
        }),
        () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'greet.md' } }] }),
        write(1),
        write(2),
        write(4),
        () => ({
          toolCalls: [
            {
              name: 'replace',
              input: {
                file_path: file(OUT_OF_PLAN.path),
                old_string: ORIGINAL_APP.trimEnd(),
                new_string: OUT_OF_PLAN.text.trimEnd(),
                instruction: 'tidy the flag',
              },
            },
          ],
        }),
        () => ({ text: 'Done: all four steps are complete.' }),
        write(3),
        () => ({ text: 'Done: step 3 is carried out.' }),
      ],
    });
    recordWorkspace(run.workspace);
    const session = await run.backend.createSession(createRequest('Add a greeting'));
    const { approved } = await planUntilApproved(run, session.id, { decisions: [{ behavior: 'allow' }], timeoutMs: 120_000 });
    assert.equal(approved.plan.trim(), PLAN_4.trim());

    const { result, asked } = await executeAllowing(run, session.id, approved, 120_000);
    assert.equal(result.isError, false, result.result);
    assert.equal(result.result, 'Done: all four steps are complete.');
    assert.equal(asked.length, 4, asked.map((request) => request.toolName).join(', '));

    // No todo list (Gemini sends none): the files it touched are the session's progress; each goes
    // under the step that names its path, as a hint, and no step counts as reported.
    const first = sessionChecklist(run, session.id);
    assert.deepEqual(
      first.facts.map((f) => (f.kind === 'file_touched' ? f.path : f.kind)),
      ['src/greet.ts', 'src/index.ts', 'README.md', 'src/app.ts'],
    );
    assert.deepEqual(stepRows(first.checklist), [
      ['1', 'not_reported', []],
      ['2', 'not_reported', []],
      ['3', 'not_reported', []],
      ['4', 'not_reported', []],
    ]);
    assert.deepEqual(
      first.checklist.steps.map((step) => step.namedFiles),
      [['src/greet.ts'], ['src/index.ts'], [], ['README.md']],
    );
    assert.deepEqual(first.checklist.unattributedFiles, ['src/app.ts'], 'no step names src/app.ts');
    assert.equal(first.summary, 'Completed: 0 of 4 steps reported done');

    // Verification is what says which steps were done.
    const message = assertStep3MissingAndAppOutOfPlan(await verifyWorkspace(run.workspace, approved.plan));
    const agentsBefore = run.agents.length;
    const continued = await continueSession(run, session.id, message, 120_000);
    assert.equal(continued.result.result, 'Done: step 3 is carried out.');
    assert.equal(continued.asked, 1);
    assert.equal(run.agents.length, agentsBefore, 'no new agent: the same session');
    const continueRound = run.model.rounds[7]?.view;
    assert.match(continueRound?.lastUser.text ?? '', /Carry out step 3 now/);
    assert.match(continueRound?.allText ?? '', /Done: all four steps are complete\./, 'the earlier turn is in the conversation');

    assert.deepEqual(sessionChecklist(run, session.id).checklist.steps[2]?.namedFiles, ['test/greet.test.ts'], 'step 3 names its file');
    assertAllStepsDone(await verifyWorkspace(run.workspace, approved.plan));
    assert.deepEqual(run.model.scenario.overruns, []);
  });
});

// Qwen Code 0.24.4 (`qwen --acp`, the real program) planning through the real SessionHost, with only
// the model scripted (an OpenAI-compatible Chat Completions API on 127.0.0.1, named by
// OPENAI_BASE_URL). Qwen starts in its `auto` mode, so plan mode is set before the first prompt; it
// asks to leave plan mode with `exit_plan_mode {plan}` and options named like Claude's.
import { strict as assert } from 'node:assert';
import type { ScenarioRound } from '../support/modelApi/scenario';
import { qwenArgv, qwenEnv, qwenModelApi } from '../support/realAgents';
import { waitFor } from '../support/wait';
import {
  ORIGINAL_APP,
  PLAN_V1,
  ANSWER_REJECT_APPROVE,
  WHY_TS,
  createRequest,
  crashMidTurn,
  eachRealAgentRun,
  executeAllowing,
  planUntilApproved,
  revisedStep,
  type RealAgentSetup,
} from './realAgentKit';

function qwenSetup(rounds: ScenarioRound[], agent: RealAgentSetup['agent'] = {}): RealAgentSetup {
  return { family: qwenModelApi, rounds, argv: qwenArgv(), label: 'Qwen Code (ACP)', env: qwenEnv, agent };
}

describe('the real Qwen Code over ACP, with only the model scripted', function () {
  this.timeout(180_000);
  const run = eachRealAgentRun();

  before(() => {
    // Installs the pinned Qwen Code once per machine (scripts/setup-agents.mjs) when missing.
    qwenArgv();
  });

  it('plans in plan mode, its write refused; a question; reject with feedback and a line comment into revision 2; approve creates a file and edits, each asked', async () => {
    const app = () => run.file('src/app.ts');
    await run.open(
      qwenSetup([
        () => ({ toolCalls: [{ name: 'read_file', input: { file_path: app() } }] }),
        () => ({ toolCalls: [{ name: 'write_file', input: { file_path: app(), content: 'export const original = false;\n' } }] }),
        () => ({ text: 'Which file should change: src/app.ts or README.md?' }),
        () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan: PLAN_V1 } }] }),
        (view) => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan: `${PLAN_V1}2. ${revisedStep(view)}\n` } }] }),
        () => ({ toolCalls: [{ name: 'write_file', input: { file_path: run.file('src/why.ts'), content: WHY_TS } }] }),
        () => ({
          toolCalls: [{ name: 'edit', input: { file_path: app(), old_string: 'original = true', new_string: 'original = false' } }],
        }),
        () => ({ text: 'Done: flipped and explained.' }),
      ]),
    );
    const session = await run.backend.createSession(createRequest('Flip the flag in src/app.ts'));
    const { approved, plans, questions } = await planUntilApproved(run, session.id, { ...ANSWER_REJECT_APPROVE, timeoutMs: 120_000 });

    // Plan mode before the first prompt (Qwen starts in `auto`): the first model call was already told so.
    const [first] = run.model.rounds;
    assert.ok(first?.view?.toolNames.includes('exit_plan_mode'), `tools: ${first?.view?.toolNames.join(',')}`);
    assert.match(first?.view?.allText ?? '', /Plan mode is active/);

    // The read was allowed; the write while planning was refused and the model heard it.
    assert.equal(run.model.rounds[1]?.view?.lastUser.toolResults[0]?.isError, false);
    const afterWrite = run.model.rounds[2]?.view?.lastUser.toolResults[0];
    assert.match(afterWrite?.content ?? '', /Plan mode is active/, JSON.stringify(afterWrite));

    // The question reached the person; their answer reached the model.
    assert.deepEqual(questions, ['Which file should change: src/app.ts or README.md?']);
    assert.match(run.model.rounds[3]?.view?.lastUser.text ?? '', /src\/app\.ts/);

    // The plan from exit_plan_mode's input; the feedback and the quoted line comment reached the model.
    assert.equal(plans[0], PLAN_V1);
    assert.match(run.model.rounds[4]?.view?.lastUser.text ?? '', /Keep the export name\./);
    assert.equal(plans[1], `${PLAN_V1}2. Add src/why.ts.\n`);
    assert.equal(approved.rejectCount, 1);
    assert.equal(await run.app(), ORIGINAL_APP, 'nothing written while planning');

    // Approve (afterApproval default): "Yes, and manually approve edits"; each change asks.
    const { result, asked } = await executeAllowing(run, session.id, approved, 90_000);
    assert.equal(result.isError, false);
    assert.equal(result.result, 'Done: flipped and explained.');
    assert.equal(asked.length, 2, asked.map((request) => request.toolName).join(', '));
    assert.equal(await run.read('src/why.ts'), WHY_TS);
    assert.equal(await run.app(), 'export const original = false;\n');
    assert.equal(run.agent.mode, 'default');
    assert.deepEqual(run.model.scenario.overruns, [], run.model.scenario.overrunRequests.join('\n'));
  });

  it('approve with acceptEdits: Qwen goes to auto-edit and the edit lands without asking', async () => {
    const app = () => run.file('src/app.ts');
    await run.open(
      qwenSetup(
        [
          () => ({ toolCalls: [{ name: 'read_file', input: { file_path: app() } }] }),
          () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan: PLAN_V1 } }] }),
          () => ({
            toolCalls: [{ name: 'edit', input: { file_path: app(), old_string: 'original = true', new_string: 'original = false' } }],
          }),
          () => ({ text: 'Done.' }),
        ],
        { afterApproval: 'acceptEdits' },
      ),
    );
    const session = await run.backend.createSession(createRequest('Flip the flag'));
    const { approved, plans } = await planUntilApproved(run, session.id, { decisions: [{ behavior: 'allow' }], timeoutMs: 120_000 });
    assert.deepEqual(plans, [PLAN_V1]);
    const { result, asked } = await executeAllowing(run, session.id, approved, 90_000);
    assert.equal(result.isError, false);
    assert.deepEqual(asked, []);
    assert.equal(await run.app(), 'export const original = false;\n');
    await waitFor(() => run.agent.mode, { message: 'the auto-edit mode', timeoutMs: 10_000, until: (mode) => mode === 'auto-edit' });
  });

  it('a crash mid-turn ends the session with a clear message', async () => {
    await run.open(qwenSetup([() => ({ hang: true })]));
    assert.match(await crashMidTurn(run, 90_000), /Qwen Code \(ACP\) was killed by SIGKILL unexpectedly/);
  });
});

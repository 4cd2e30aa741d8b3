// OpenCode 1.18.33 (`opencode acp`, the real program) planning through the real SessionHost, with
// only the model scripted (an OpenAI-compatible Chat Completions API on 127.0.0.1, a provider of
// its config). Plan mode is its `plan` agent (the `mode` config option); over ACP it has no request
// to leave it, so a turn that ends with a plan (not a question) is the plan's review.
import { strict as assert } from 'node:assert';
import type { ScenarioRound } from '../support/modelApi/scenario';
import { opencodeArgv, opencodeEnv, opencodeModelApi } from '../support/realAgents';
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

/** A person's opencode.json that has its build agent ask before edits and commands (its default asks nothing). */
const ASK = { edit: 'ask', bash: 'ask' };

function opencodeSetup(rounds: ScenarioRound[], permission?: Record<string, string>): RealAgentSetup {
  return {
    family: opencodeModelApi,
    rounds,
    argv: opencodeArgv(),
    label: 'OpenCode (ACP)',
    env: (home, url) => opencodeEnv(home, url, permission),
  };
}

describe('the real OpenCode over ACP, with only the model scripted', function () {
  this.timeout(180_000);
  const run = eachRealAgentRun();

  before(() => {
    // Installs the pinned OpenCode once per machine (scripts/setup-agents.mjs) when missing.
    opencodeArgv();
  });

  it('plans in its plan agent, its write refused by it; a question; reject with feedback and a line comment into revision 2, which is approved', async () => {
    const app = () => run.file('src/app.ts');
    await run.open(
      opencodeSetup([
        () => ({ toolCalls: [{ name: 'read', input: { filePath: app() } }] }),
        () => ({ toolCalls: [{ name: 'write', input: { filePath: app(), content: 'export const original = false;\n' } }] }),
        () => ({ text: 'Which file should change: src/app.ts or README.md?' }),
        () => ({ text: PLAN_V1 }),
        (view) => ({ text: `${PLAN_V1}2. ${revisedStep(view)}\n` }),
        () => ({ toolCalls: [{ name: 'write', input: { filePath: run.file('src/why.ts'), content: WHY_TS } }] }),
        () => ({ toolCalls: [{ name: 'edit', input: { filePath: app(), oldString: 'original = true', newString: 'original = false' } }] }),
        () => ({ text: 'Done: flipped and explained.' }),
      ]),
      // No permission config: OpenCode's plan agent itself denies the write.
    );
    const session = await run.backend.createSession(createRequest('Flip the flag in src/app.ts'));
    const { approved, plans, questions } = await planUntilApproved(run, session.id, { ...ANSWER_REJECT_APPROVE, timeoutMs: 120_000 });

    // Plan mode (its plan agent) before the first prompt.
    assert.equal(run.systemEvents(session.id, 'init')[0]?.permissionMode, 'plan');
    // The read was allowed; the write while planning was refused by its plan agent's rules, and the model heard it.
    assert.match(run.model.rounds[1]?.view?.lastUser.toolResults[0]?.content ?? '', /export const original = true/);
    const afterWrite = run.model.rounds[2]?.view?.lastUser.toolResults[0];
    assert.match(afterWrite?.content ?? '', /prevents you from using this specific tool call/, JSON.stringify(afterWrite));

    // The question (a turn that ended asking) reached the person; their answer reached the model.
    assert.deepEqual(questions, ['Which file should change: src/app.ts or README.md?']);
    assert.match(run.model.rounds[3]?.view?.lastUser.text ?? '', /src\/app\.ts/);

    // The plan is the turn's last words; the feedback and the quoted line comment reached the model.
    assert.equal(plans[0], PLAN_V1.trim());
    assert.match(run.model.rounds[4]?.view?.lastUser.text ?? '', /Keep the export name\./);
    assert.equal(plans[1], `${PLAN_V1}2. Add src/why.ts.`);
    assert.equal(approved.rejectCount, 1);
    assert.equal(await run.app(), ORIGINAL_APP, 'nothing written while planning');
    assert.deepEqual(run.model.scenario.overruns, [], run.model.scenario.overrunRequests.join('\n'));
  });

  it('approve: out of its plan agent (mode build), the plan is the next prompt; with its config asking, each change asks', async () => {
    const app = () => run.file('src/app.ts');
    await run.open(
      opencodeSetup(
        [
          () => ({ toolCalls: [{ name: 'write', input: { filePath: app(), content: 'export const original = false;\n' } }] }),
          () => ({ text: PLAN_V1 }),
          () => ({ toolCalls: [{ name: 'write', input: { filePath: run.file('src/why.ts'), content: WHY_TS } }] }),
          () => ({
            toolCalls: [{ name: 'edit', input: { filePath: app(), oldString: 'original = true', newString: 'original = false' } }],
          }),
          () => ({ text: 'Done.' }),
        ],
        ASK,
      ),
    );
    const session = await run.backend.createSession(createRequest('Flip the flag'));
    const { approved, plans } = await planUntilApproved(run, session.id, { decisions: [{ behavior: 'allow' }], timeoutMs: 120_000 });
    // With "edit": "ask" its plan agent asks too: Ultraplan refused the write while planning.
    assert.equal(run.systemEvents(session.id, 'acp_refused').length, 1);
    assert.equal(plans[0], PLAN_V1.trim());
    assert.equal(await run.app(), ORIGINAL_APP);
    const { result, asked } = await executeAllowing(run, session.id, approved, 90_000);
    assert.equal(result.isError, false);
    assert.equal(result.result, 'Done.');
    assert.match(run.model.rounds[2]?.view?.lastUser.text ?? '', /The reviewer approved your plan/);
    assert.equal(asked.length, 2, asked.map((request) => request.toolName).join(', '));
    assert.equal(await run.read('src/why.ts'), WHY_TS);
    assert.equal(await run.app(), 'export const original = false;\n');
    assert.equal(run.agent.mode, 'build');
  });

  it('a crash mid-turn ends the session with a clear message', async () => {
    await run.open(opencodeSetup([() => ({ hang: true })]));
    assert.match(await crashMidTurn(run, 90_000), /OpenCode \(ACP\) was killed by SIGKILL unexpectedly/);
  });
});

// GitHub Copilot CLI 1.0.102 (`copilot --acp`, the real program) planning through the real
// SessionHost, with only the model scripted (an OpenAI-compatible Chat Completions API on
// 127.0.0.1, named by its BYOK variables, offline: no GitHub login). Its plan mode has no request
// to leave it over ACP: the model saves plan.md in Copilot's session folder and ends its turn, and
// that turn's end is the plan's review.
import { strict as assert } from 'node:assert';
import { openaiChatApi } from '../support/modelApi/openaiChat';
import type { ScenarioRound } from '../support/modelApi/scenario';
import { copilotArgv, copilotEnv, copilotPlanFile } from '../support/realAgents';
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

const patch = (body: string) => ({ name: 'apply_patch', input: { input: `*** Begin Patch\n${body}*** End Patch\n` } });
const addFile = (file: string, text: string) =>
  patch(
    `*** Add File: ${file}\n${text
      .replace(/\n$/, '')
      .split('\n')
      .map((line) => `+${line}\n`)
      .join('')}`,
  );

function copilotSetup(rounds: ScenarioRound[]): RealAgentSetup {
  return { family: openaiChatApi(), rounds, argv: copilotArgv(), label: 'Copilot CLI (ACP)', env: copilotEnv };
}

describe('the real GitHub Copilot CLI over ACP, with only the model scripted', function () {
  this.timeout(180_000);
  const run = eachRealAgentRun();

  before(() => {
    // Installs the pinned Copilot CLI once per machine (scripts/setup-agents.mjs) when missing.
    copilotArgv();
  });

  it('plans in plan mode, its write refused; a question; reject with feedback and a line comment into revision 2; approve creates a file and edits, each asked', async () => {
    const app = () => run.file('src/app.ts');
    let planFile = '';
    await run.open(
      copilotSetup([
        () => ({ toolCalls: [{ name: 'view', input: { path: app() } }] }),
        () => ({ toolCalls: [patch(`*** Update File: ${app()}\n@@\n-export const original = true;\n+export const original = false;\n`)] }),
        () => ({ text: 'Which file should change: src/app.ts or README.md?' }),
        (view) => {
          planFile = copilotPlanFile(view);
          return { toolCalls: [addFile(planFile, PLAN_V1)] };
        },
        () => ({ text: 'Plan saved: flip the flag.' }),
        (view) => ({
          toolCalls: [patch(`*** Update File: ${planFile}\n@@\n 1. Set \`original\` to false in src/app.ts.\n+2. ${revisedStep(view)}\n`)],
        }),
        () => ({ text: 'Plan revised.' }),
        () => ({ toolCalls: [addFile(run.file('src/why.ts'), WHY_TS)] }),
        () => ({ toolCalls: [patch(`*** Update File: ${app()}\n@@\n-export const original = true;\n+export const original = false;\n`)] }),
        () => ({ text: 'Done: flipped and explained.' }),
      ]),
    );
    const session = await run.backend.createSession(createRequest('Flip the flag in src/app.ts'));
    const { approved, plans, questions } = await planUntilApproved(run, session.id, { ...ANSWER_REJECT_APPROVE, timeoutMs: 120_000 });

    // Plan mode before the first prompt: the first model call was already told so.
    const [first] = run.model.rounds;
    assert.match(first?.view?.allText ?? '', /<plan_mode>/);
    // The read was allowed; the write while planning was refused by Copilot's plan mode, and the model heard it.
    assert.equal(run.model.rounds[1]?.view?.lastUser.toolResults[0]?.isError, false);
    const afterWrite = run.model.rounds[2]?.view?.lastUser.toolResults[0];
    assert.match(afterWrite?.content ?? '', /Plan mode does not permit changes/, JSON.stringify(afterWrite));

    // The question reached the person (a turn that saved no plan); their answer reached the model.
    assert.deepEqual(questions, ['Which file should change: src/app.ts or README.md?']);
    assert.match(run.model.rounds[3]?.view?.lastUser.text ?? '', /src\/app\.ts/);

    // The plan is the file the turn saved; the feedback and the quoted line comment reached the model.
    assert.equal(plans[0], PLAN_V1);
    assert.match(run.model.rounds[5]?.view?.lastUser.text ?? '', /Keep the export name\./);
    assert.equal(plans[1], `${PLAN_V1}2. Add src/why.ts.\n`);
    assert.equal(approved.rejectCount, 1);
    assert.equal(await run.app(), ORIGINAL_APP, 'nothing written while planning');

    // Approve: out of plan mode (agent mode), the plan is the next prompt; each change asks.
    const { result, asked } = await executeAllowing(run, session.id, approved, 90_000);
    assert.equal(result.isError, false);
    assert.equal(result.result, 'Done: flipped and explained.');
    assert.match(run.model.rounds[7]?.view?.lastUser.text ?? '', /The reviewer approved your plan[\s\S]*2\. Add src\/why\.ts\./);
    assert.equal(asked.length, 2, asked.map((request) => request.toolName).join(', '));
    assert.equal(await run.read('src/why.ts'), WHY_TS);
    assert.equal(await run.app(), 'export const original = false;\n');
    assert.equal(run.agent.mode, 'https://agentclientprotocol.com/protocol/session-modes#agent');
    assert.deepEqual(run.model.scenario.overruns, [], run.model.scenario.overrunRequests.join('\n'));
  });

  it('a crash mid-turn ends the session with a clear message', async () => {
    await run.open(copilotSetup([() => ({ hang: true })]));
    assert.match(await crashMidTurn(run, 90_000), /Copilot CLI \(ACP\) was killed by SIGKILL unexpectedly/);
  });
});

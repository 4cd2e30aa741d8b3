// Gemini CLI 0.61.0 (`gemini --acp`, the real program) planning through the real SessionHost, with
// only the model scripted (the Gemini API on 127.0.0.1). Gemini writes its plan itself under its
// home (~/.gemini/tmp/<project>/<session>/plans/), asks to exit plan mode with a bare permission
// request naming that file, and announces modes as `[MODE_UPDATE] <mode>` text.
import { strict as assert } from 'node:assert';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { geminiApi } from '../support/modelApi/gemini';
import type { ScenarioRound } from '../support/modelApi/scenario';
import { geminiArgv, geminiEnv, geminiPlansDir } from '../support/realAgents';
import { assistantTexts } from '../service/hostTestKit';
import {
  ORIGINAL_APP,
  PLAN_V1,
  createRequest,
  crashMidTurn,
  eachRealAgentRun,
  executeAllowing,
  failingModel,
  planUntilApproved,
  planUntilFailed,
  type RealAgentSetup,
} from './realAgentKit';
import { waitFor } from '../support/wait';

const FEEDBACK = 'Also add src/why.ts explaining it.';
const WHY = 'export const why = "retired";\n';

function geminiSetup(
  rounds: ScenarioRound[],
  agent: RealAgentSetup['agent'] = {},
  homeFiles?: RealAgentSetup['homeFiles'],
): RealAgentSetup {
  return {
    family: geminiApi,
    rounds,
    argv: geminiArgv(),
    label: 'Gemini CLI (ACP)',
    env: geminiEnv,
    agent,
    ...(homeFiles ? { homeFiles } : {}),
  };
}

/** Gemini's own record of trusted folders: the person trusted this workspace in Gemini CLI. */
const trustWorkspace = (_home: string, workspace: string): Record<string, string> => ({
  '.gemini/trustedFolders.json': JSON.stringify({ [workspace]: 'TRUST_FOLDER' }),
});

describe('the real Gemini CLI over ACP, with only the model scripted', function () {
  this.timeout(180_000);
  const run = eachRealAgentRun();

  before(() => {
    // Installs the pinned Gemini CLI once per machine (scripts/setup-agents.mjs) when missing.
    geminiArgv();
  });

  it('plans in plan mode, its write refused; a question; the plan from the file it wrote; reject feedback into revision 2; approve creates a new file and edits', async () => {
    const app = () => path.join(run.workspace, 'src', 'app.ts');
    let plansDir = '';
    await run.open(
      geminiSetup([
        () => ({ toolCalls: [{ name: 'read_file', input: { file_path: 'src/app.ts' } }] }),
        () => ({ toolCalls: [{ name: 'write_file', input: { file_path: app(), content: 'export const original = false;\n' } }] }),
        () => ({ text: 'Which file should change: src/app.ts or README.md?' }),
        (view) => {
          plansDir = geminiPlansDir(view);
          return { toolCalls: [{ name: 'write_file', input: { file_path: path.join(plansDir, 'flip.md'), content: PLAN_V1 } }] };
        },
        () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'flip.md' } }] }),
        () => ({ text: 'Understood, I will wait for your feedback.' }),
        // Revision 2 as an edit of the plan file: its diff carries the whole new file.
        (view) => ({
          toolCalls: [
            {
              name: 'replace',
              input: {
                file_path: path.join(plansDir, 'flip.md'),
                old_string: PLAN_V1,
                new_string: `${PLAN_V1}2. ${view.lastUser.text.includes(FEEDBACK) ? 'Add src/why.ts.' : 'No feedback reached me.'}\n`,
                instruction: 'add the step the reviewer asked for',
              },
            },
          ],
        }),
        () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'flip.md' } }] }),
        () => ({ toolCalls: [{ name: 'write_file', input: { file_path: path.join(run.workspace, 'src', 'why.ts'), content: WHY } }] }),
        () => ({
          toolCalls: [
            {
              name: 'replace',
              input: { file_path: app(), old_string: 'original = true', new_string: 'original = false', instruction: 'flip the flag' },
            },
          ],
        }),
        () => ({ text: 'Done: flipped and explained.' }),
      ]),
    );
    const session = await run.backend.createSession(createRequest('Flip the flag in src/app.ts'));
    const { approved, plans, questions } = await planUntilApproved(run, session.id, {
      decisions: [{ behavior: 'deny', message: FEEDBACK }, { behavior: 'allow' }],
      answers: ['src/app.ts'],
      timeoutMs: 120_000,
    });

    // Plan mode before the first prompt: the first model call already had Gemini's plan-mode tools.
    const [first] = run.model.rounds;
    assert.ok(first?.view?.toolNames.includes('exit_plan_mode'), `tools: ${first?.view?.toolNames.join(',')}`);
    assert.match(first?.view?.allText ?? '', /Active Approval Mode: Plan/);
    // `[MODE_UPDATE] plan` was a mode signal, never assistant text.
    assert.ok(!assistantTexts(run.events(session.id)).some((text) => text.includes('[MODE_UPDATE]')));

    // The write while planning was refused (by Gemini's own plan mode); the model heard it; the file is untouched.
    const afterWrite = run.model.rounds[2]?.view?.lastUser.toolResults[0];
    assert.equal(afterWrite?.isError, true, JSON.stringify(afterWrite));

    // The question (the turn ended with it) reached the person; their answer reached the model.
    assert.deepEqual(questions, ['Which file should change: src/app.ts or README.md?']);
    assert.match(run.model.rounds[3]?.view?.lastUser.text ?? '', /src\/app\.ts/);

    // The real plan text (from the edit that wrote it), never a path or a placeholder.
    assert.equal(plans[0], PLAN_V1);
    assert.match(run.model.rounds[6]?.view?.lastUser.text ?? '', /Also add src\/why\.ts explaining it\./);
    assert.equal(plans[1], `${PLAN_V1}2. Add src/why.ts.\n`);
    assert.equal(approved.rejectCount, 1);
    assert.equal(await run.app(), ORIGINAL_APP, 'nothing written while planning');

    // Approve (afterApproval default): Gemini switches itself to `default`; each edit asks; a new file is created.
    const { result, asked } = await executeAllowing(run, session.id, approved, 90_000);
    assert.equal(result.isError, false);
    assert.equal(result.result, 'Done: flipped and explained.');
    assert.equal(asked.length, 2, asked.map((request) => request.toolName).join(', '));
    assert.equal(await readFile(path.join(run.workspace, 'src', 'why.ts'), 'utf8'), WHY);
    assert.equal(await run.app(), 'export const original = false;\n');
    assert.equal(run.agent.mode, 'default');
    // Both edits succeeded as far as the model knows.
    assert.deepEqual(
      run.model.rounds.slice(9, 11).map((round) => round.view?.lastUser.toolResults[0]?.isError),
      [false, false],
    );
    assert.deepEqual(run.model.scenario.overruns, []);
  });

  it('approve with acceptEdits in a folder Gemini trusts: it switches to autoEdit and the edit lands without asking', async () => {
    let plansDir = '';
    await run.open(
      geminiSetup(
        [
          (view) => {
            plansDir = geminiPlansDir(view);
            return { toolCalls: [{ name: 'write_file', input: { file_path: path.join(plansDir, 'p.md'), content: PLAN_V1 } }] };
          },
          () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'p.md' } }] }),
          () => ({
            toolCalls: [
              {
                name: 'replace',
                input: {
                  file_path: path.join(run.workspace, 'src', 'app.ts'),
                  old_string: 'original = true',
                  new_string: 'original = false',
                  instruction: 'flip',
                },
              },
            ],
          }),
          () => ({ text: 'Done.' }),
        ],
        { afterApproval: 'acceptEdits' },
        trustWorkspace,
      ),
    );
    const session = await run.backend.createSession(createRequest('Flip the flag'));
    const { approved, plans } = await planUntilApproved(run, session.id, { decisions: [{ behavior: 'allow' }], timeoutMs: 120_000 });
    assert.deepEqual(plans, [PLAN_V1]);
    const { result, asked } = await executeAllowing(run, session.id, approved, 90_000);
    assert.equal(result.isError, false);
    assert.deepEqual(asked, []);
    assert.equal(await run.app(), 'export const original = false;\n');
    await waitFor(() => run.agent.mode, { message: 'the autoEdit mode', timeoutMs: 10_000, until: (mode) => mode === 'autoEdit' });
  });

  it('acceptEdits in a folder Gemini does not trust: a clear message says why the mode stays default', async () => {
    await run.open(
      geminiSetup(
        [
          (view) => ({
            toolCalls: [{ name: 'write_file', input: { file_path: path.join(geminiPlansDir(view), 'p.md'), content: PLAN_V1 } }],
          }),
          () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'p.md' } }] }),
          () => ({ text: 'Starting.' }),
        ],
        { afterApproval: 'acceptEdits' },
      ),
    );
    const session = await run.backend.createSession(createRequest('Flip the flag'));
    await planUntilApproved(run, session.id, { decisions: [{ behavior: 'allow' }], timeoutMs: 120_000 });
    const error = await waitFor(() => run.systemEvents(session.id, 'acp_decision_error')[0], {
      message: 'the decision error',
      timeoutMs: 30_000,
    });
    assert.equal(run.agent.mode, 'default');
    assert.match(
      String(error.message),
      /Could not switch Gemini CLI \(ACP\) to "autoEdit" after approval: .*untrusted folder.*trust this folder in Gemini CLI/s,
    );
  });

  it('a model that only answers errors ends at the first-event bound with a clear message', async () => {
    await run.open(geminiSetup(failingModel(), { firstEventTimeoutMs: 8000 }));
    const result = await planUntilFailed(run, 90_000);
    assert.match(
      result.result ?? '',
      /Gemini CLI \(ACP\) sent nothing for 8 s after the prompt\. It may be retrying a model it cannot reach/,
    );
    assert.ok(run.model.rounds.length >= 1, 'Gemini did call the model');
  });

  it('with no model reachable, the session ends with a clear message, bounded', async () => {
    await run.open({ ...geminiSetup([], { firstEventTimeoutMs: 8000 }), env: (home) => geminiEnv(home, 'http://127.0.0.1:9') });
    const result = await planUntilFailed(run, 90_000);
    assert.match(
      result.result ?? '',
      /Gemini CLI \(ACP\) sent nothing for 8 s after the prompt\. It may be retrying a model it cannot reach/,
    );
  });

  it('a crash mid-turn ends the session with a clear message; its re-launched child goes too', async () => {
    await run.open(geminiSetup([() => ({ hang: true })]));
    assert.match(await crashMidTurn(run, 90_000), /Gemini CLI \(ACP\) was killed by SIGKILL unexpectedly/);
  });
});

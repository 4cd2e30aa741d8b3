// Real agents as the embedded agent in real code-server + Chromium, with only their model scripted
// on 127.0.0.1 (in this process): Claude's ACP adapter 0.101.0 (the Anthropic Messages API) and
// Gemini CLI 0.61.0 (the Gemini API). Each is started as a custom command through `env`, which
// points it at the scripted model and a throwaway home. Through the review panel: the plan the
// model wrote is shown, a reject with a line comment reaches the model as its next prompt,
// revision 2 is shown and approved, and the agent's edit lands in the workspace
// (ultraplan.afterApproval = acceptEdits); then no process of the agent is left.
import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openTestWindow, readStatusBar, screenshot, waitFor, type TestWindow } from './harness';
import { processesWithHome } from '../support/processes';
import { anthropicApi } from '../support/modelApi/anthropic';
import { geminiApi } from '../support/modelApi/gemini';
import { Scenario, ScriptedModelServer, type ModelApiFamily, type ScenarioRound } from '../support/modelApi/scenario';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanFile, geminiArgv, geminiEnv, geminiPlansDir } from '../support/realAgents';
import { closeRealAgentRun, realAgentSettings } from './realAgentWindow';
import { planTask, reportIfFailed, reviewFrame, revisionFrame, writeReview } from './ultraplanSteps';
import { ORIGINAL_APP } from '../support/acpFixtures';

const UPDATED = 'export const original = false;\n';
const PLAN_V1 = '# Flip the flag\n\n1. Set original to false in src/app.ts.\n2. Run the tests.\n';
const PLAN_V2 = '# Flip the flag (v2)\n\n1. Set original to false in src/app.ts.\n2. Say why in the commit message.\n3. Run the tests.\n';

interface RealAgentE2e {
  name: string;
  suite: string;
  family: ModelApiFamily;
  /** The program after `env`. */
  argv: () => string[];
  env: (home: string, modelUrl: string) => Record<string, string>;
  /** Rounds: the plan, the exit request, …; the 4th is the one the feedback prompt asks. */
  rounds: (workspace: () => string) => ScenarioRound[];
  /** What the first model call says when plan mode is in force. */
  planModeSign: RegExp;
  /** Files in the agent's home, written once the workspace exists. */
  homeFiles?: (workspace: string) => Record<string, string>;
}

function describeRealAgent(spec: RealAgentE2e): void {
  describe(`the real ${spec.name} in code-server, with only the model scripted`, function () {
    const home = mkdtempSync(path.join(os.tmpdir(), `ultraplan-${spec.suite}-home-`));
    let window: TestWindow | undefined;
    const workspace = (): string => {
      if (!window) throw new Error(`the ${spec.suite} window is not open (its before hook failed)`);
      return window.workspace;
    };
    const model = new ScriptedModelServer(spec.family, new Scenario(spec.rounds(workspace)));

    before(async function () {
      // The model first: the agent's command line names its address.
      await model.start();
      const env = spec.env(home, model.url);
      window = await openTestWindow({
        suite: spec.suite,
        files: { 'README.md': '# Demo project\n', 'src/app.ts': ORIGINAL_APP },
        settings: realAgentSettings(env, spec.argv()),
      });
      for (const [name, text] of Object.entries(spec.homeFiles?.(window.workspace) ?? {})) {
        mkdirSync(path.dirname(path.join(home, name)), { recursive: true });
        writeFileSync(path.join(home, name), text);
      }
    });
    afterEach(async function () {
      await reportIfFailed(this, window, () => `scripted model requests: ${model.describe()}`);
    });
    after(async function () {
      await closeRealAgentRun(window, home, model);
    });

    it('shows the plan the model wrote, in plan mode from the first prompt', async function () {
      this.timeout(180_000);
      const { page } = window!;
      await planTask(page, 'flip the flag in src/app.ts');
      const frame = await reviewFrame(page, '#plan li');
      assert.match((await frame.locator('#plan').textContent()) ?? '', /Set original to false in src\/app\.ts/);
      assert.match(model.rounds[0]?.view?.allText ?? '', spec.planModeSign);
      assert.equal(readFileSync(path.join(workspace(), 'src', 'app.ts'), 'utf8'), ORIGINAL_APP);
      await screenshot(page, `${spec.suite}-plan`);
    });

    it('reject with a line comment: the feedback and the quoted line reach the model; revision 2 is shown', async function () {
      this.timeout(180_000);
      const { page } = window!;
      const frame = await reviewFrame(page, '#plan li');
      await writeReview(frame, { line: 'Run the tests', comment: 'Say why first.', feedback: 'Explain the change.' });
      await frame.getByRole('button', { name: 'Reject', exact: true }).click();
      const feedbackRound = await model.waitForRound(4, 90_000);
      assert.match(feedbackRound.view?.lastUser.text ?? '', /Explain the change\./);
      assert.match(feedbackRound.view?.lastUser.text ?? '', /Run the tests[\s\S]*Say why first\./);
      const revised = await revisionFrame(page, 'Revision 2 of 2');
      assert.match((await revised.locator('#plan').textContent()) ?? '', /Say why in the commit message/);
      await screenshot(page, `${spec.suite}-revision-2`);
    });

    it('approve: the agent edits src/app.ts (edits accepted), the session completes, no agent process is left', async function () {
      this.timeout(180_000);
      const { page } = window!;
      const frame = await revisionFrame(page, 'Revision 2 of 2');
      await frame.getByRole('button', { name: 'Approve', exact: true }).click();
      await waitFor(() => (readFileSync(path.join(workspace(), 'src', 'app.ts'), 'utf8') === UPDATED ? true : undefined), {
        timeoutMs: 90_000,
        message: 'the edit to land in src/app.ts',
      });
      await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 60_000 });
      assert.deepEqual(model.scenario.overruns, []);
      await screenshot(page, `${spec.suite}-completed`);
      // The session has its outcome: nothing talks to its agent again, so its processes are gone.
      await waitFor(() => (processesWithHome(home).length === 0 ? true : undefined), {
        timeoutMs: 30_000,
        message: 'the agent and its children to end after the result',
      });
    });
  });
}

describeRealAgent({
  name: 'Claude ACP adapter',
  suite: 'real-claude',
  family: anthropicApi,
  argv: () => [CLAUDE_ADAPTER],
  env: claudeEnv,
  planModeSign: /Plan mode is active/,
  rounds: (workspace) => {
    let planFile = '';
    return [
      (view) => {
        planFile = claudePlanFile(view);
        return { toolCalls: [{ name: 'Write', input: { file_path: planFile, content: PLAN_V1 } }] };
      },
      () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
      () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
      () => ({ toolCalls: [{ name: 'Write', input: { file_path: planFile, content: PLAN_V2 } }] }),
      () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
      () => ({ toolCalls: [{ name: 'Read', input: { file_path: path.join(workspace(), 'src', 'app.ts') } }] }),
      () => ({ toolCalls: [{ name: 'Write', input: { file_path: path.join(workspace(), 'src', 'app.ts'), content: UPDATED } }] }),
      () => ({ text: 'Done: src/app.ts flipped.' }),
    ];
  },
});

describeRealAgent({
  name: 'Gemini CLI',
  suite: 'real-gemini',
  family: geminiApi,
  argv: geminiArgv,
  env: geminiEnv,
  planModeSign: /Active Approval Mode: Plan/,
  // autoEdit after approval: Gemini allows it only in a folder the person trusted in Gemini CLI.
  homeFiles: (workspace) => ({ '.gemini/trustedFolders.json': JSON.stringify({ [workspace]: 'TRUST_FOLDER' }) }),
  rounds: (workspace) => {
    let planFile = '';
    return [
      (view) => {
        planFile = path.join(geminiPlansDir(view), 'flip.md');
        return { toolCalls: [{ name: 'write_file', input: { file_path: planFile, content: PLAN_V1 } }] };
      },
      () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'flip.md' } }] }),
      () => ({ text: 'Understood: I will wait for your feedback.' }),
      () => ({ toolCalls: [{ name: 'write_file', input: { file_path: planFile, content: PLAN_V2 } }] }),
      () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'flip.md' } }] }),
      () => ({
        toolCalls: [
          {
            name: 'replace',
            input: {
              file_path: path.join(workspace(), 'src', 'app.ts'),
              old_string: 'original = true',
              new_string: 'original = false',
              instruction: 'flip the flag',
            },
          },
        ],
      }),
      () => ({ text: 'Done: src/app.ts flipped.' }),
    ];
  },
});

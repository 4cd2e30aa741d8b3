// Codex's real ACP adapter carrying out an approved 4-step plan, with only the model scripted (the
// Responses API on 127.0.0.1): its update_plan (which Ultraplan turns on for it through
// CODEX_CONFIG, src/agents/catalogue/progressSignals.ts) becomes the session's progress and the
// checklist, its apply_patch edits the files under the steps; the skipped step 3 and the file no
// step names are verified as such; Continue, in the same session, carries out step 3.
import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AcpAgent } from '../../src/agents/acp/acpAgent';
import { InProcessBackend } from '../../src/service/inProcessBackend';
import { SessionHost } from '../../src/service/host/sessionHost';
import {
  startScriptedResponses,
  toolOutput,
  userTexts,
  type ModelReply,
  type Round,
  type ScriptedResponsesApi,
} from '../support/modelApi/openaiResponses';
import { codexArgv, codexEnv } from '../support/realAgents';
import { ORIGINAL_APP } from '../support/acpFixtures';
import {
  OUT_OF_PLAN,
  assertAllStepsDone,
  assertStep3MissingAndAppOutOfPlan,
  PLAN_4,
  STEP_FILES,
  TODOS,
  continueSession,
  followTurns,
  recordWorkspace,
  sessionChecklist,
  stepRows,
  verifyWorkspace,
  type TodoState,
} from './executionKit';
import { RealAgentRun, createRequest, planUntilApproved } from './realAgentKit';

/** A RealAgentRun whose model is the scripted Responses API (Codex's own wire). */
class CodexRun extends RealAgentRun {
  api!: ScriptedResponsesApi;

  async openCodex(rounds: Round[]): Promise<this> {
    this.workspace = await mkdtemp(path.join(tmpdir(), 'ultraplan-real-ws-'));
    this.home = await mkdtemp(path.join(tmpdir(), 'ultraplan-real-home-'));
    await writeFile(path.join(this.workspace, 'README.md'), '# Demo project\n');
    await mkdir(path.join(this.workspace, 'src'));
    await writeFile(path.join(this.workspace, 'src', 'app.ts'), ORIGINAL_APP);
    this.api = await startScriptedResponses(rounds);
    const env = codexEnv(this.home, this.api.baseUrl);
    this.host = new SessionHost({
      agentFactory: () => {
        const agent = new AcpAgent({
          argv: codexArgv(),
          cwd: this.workspace,
          env,
          inheritEnv: false,
          label: 'Codex (ACP)',
          stopGraceMs: 2000,
          afterApproval: 'acceptEdits',
        });
        this.agents.push(agent);
        return agent;
      },
    });
    this.backend = new InProcessBackend({ host: this.host, label: 'Embedded · Codex (ACP)' });
    return this;
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      await this.api?.close();
    }
  }
}

const patch = (body: string): ModelReply => ({
  calls: [{ type: 'custom', name: 'apply_patch', input: `*** Begin Patch\n${body}*** End Patch\n` }],
});
const addFile = (file: { path: string; text: string }) =>
  patch(
    `*** Add File: ${file.path}\n${file.text
      .replace(/\n$/, '')
      .split('\n')
      .map((line) => `+${line}\n`)
      .join('')}`,
  );
const plan = (...states: TodoState[]): ModelReply => ({
  calls: [
    {
      type: 'function',
      name: 'update_plan',
      arguments: { plan: TODOS.map((todo, i) => ({ step: todo.content, status: states[i]! })) },
    },
  ],
});

describe("the real Codex ACP adapter carries out an approved plan: its update_plan is the checklist's progress", function () {
  this.timeout(240_000);
  let run: CodexRun | undefined;
  afterEach(async () => {
    await run?.close();
    run = undefined;
  });

  it('executes 4 steps, skips step 3 while claiming it and edits src/app.ts; verification finds both; Continue does step 3 in the same session', async () => {
    run = await new CodexRun().openCodex([
      { text: `Here is the plan.\n\n<proposed_plan>\n${PLAN_4}</proposed_plan>` },
      // The implementation turn (Codex's own, after the approval).
      plan('in_progress', 'pending', 'pending', 'pending'),
      addFile(STEP_FILES[1]),
      plan('completed', 'in_progress', 'pending', 'pending'),
      addFile(STEP_FILES[2]),
      // Step 3 claimed done, never carried out.
      plan('completed', 'completed', 'completed', 'in_progress'),
      patch('*** Update File: README.md\n@@\n # Demo project\n+\n+`greet(name)` says hello.\n'),
      patch(`*** Update File: ${OUT_OF_PLAN.path}\n@@\n-${ORIGINAL_APP.trimEnd()}\n+${OUT_OF_PLAN.text.trimEnd()}\n`),
      plan('completed', 'completed', 'completed', 'completed'),
      { text: 'Done: all four steps are complete.' },
      // Continue: the same thread, asked for step 3.
      plan('completed', 'completed', 'in_progress', 'completed'),
      addFile(STEP_FILES[3]),
      plan('completed', 'completed', 'completed', 'completed'),
      { text: 'Done: step 3 is carried out.' },
    ]);
    recordWorkspace(run.workspace);
    const session = await run.backend.createSession(createRequest('Add a greeting'));
    const { approved } = await planUntilApproved(run, session.id, { decisions: [{ behavior: 'allow' }], timeoutMs: 120_000 });
    assert.equal(approved.plan.trim(), PLAN_4.trim());

    const executed = await followTurns(
      run,
      session.id,
      (results) => results.some((r) => r.result === 'Done: all four steps are complete.'),
      120_000,
    );
    assert.equal(executed.result.is_error, false, executed.result.result);
    // The tool was real: Codex accepted each update_plan.
    const requests = run.api.modelRequests();
    const planOutputs = requests.flatMap((request) => {
      const items = (request.body as { input?: Array<{ type?: string; call_id?: string }> }).input ?? [];
      return items.filter((item) => item.type === 'function_call_output').map((item) => toolOutput(request, item.call_id ?? ''));
    });
    assert.ok(planOutputs.includes('Plan updated'), JSON.stringify(planOutputs));
    assert.ok(!planOutputs.some((output) => /unsupported call/.test(output ?? '')), JSON.stringify(planOutputs));

    const first = sessionChecklist(run, session.id);
    const todoFacts = first.facts.filter((f) => f.kind === 'todos');
    assert.equal(todoFacts.length, 4);
    assert.ok(todoFacts.every((f) => f.kind === 'todos' && f.source === 'acp_plan'));
    assert.deepEqual(stepRows(first.checklist), [
      ['1', 'done', ['src/greet.ts']],
      ['2', 'done', ['src/index.ts']],
      ['3', 'done', []],
      ['4', 'done', ['README.md', 'src/app.ts']],
    ]);
    assert.equal(first.summary, 'Completed: 4 of 4 steps reported done');

    const message = assertStep3MissingAndAppOutOfPlan(await verifyWorkspace(run.workspace, approved.plan, { done: 4, total: 4 }));
    const agentsBefore = run.agents.length;
    const continued = await continueSession(run, session.id, message, 120_000);
    assert.equal(continued.result.result, 'Done: step 3 is carried out.');
    assert.equal(run.agents.length, agentsBefore, 'no new agent: the same session');
    const continueRequest = run.api
      .modelRequests()
      .find((request) => userTexts(request).some((text) => text.includes('Carry out step 3 now')));
    assert.ok(continueRequest, 'the Continue message reached the model');
    assert.match(JSON.stringify(continueRequest.body), /Done: all four steps are complete\./, 'the earlier turn is in the same thread');

    const second = sessionChecklist(run, session.id);
    assert.deepEqual(stepRows(second.checklist)[2], ['3', 'done', ['test/greet.test.ts']]);
    assertAllStepsDone(await verifyWorkspace(run.workspace, approved.plan, { done: 4, total: 4 }));
  });
});

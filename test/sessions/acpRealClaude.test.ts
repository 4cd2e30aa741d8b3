// Claude's real ACP adapter (@agentclientprotocol/claude-agent-acp 0.101.0) planning through the
// real SessionHost, with only the model scripted (the Anthropic Messages API on 127.0.0.1). What
// the model "does" is what Claude Code's tools allow in each round; what it was sent is asserted
// from the request log.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { UltraplanPollError } from '../../src/core/errors';
import { pollForApprovedPlan } from '../../src/core/poller';
import { anthropicApi } from '../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer, type ModelRequestView, type ScenarioRound } from '../support/modelApi/scenario';
import { waitGone } from '../support/processes';
import { CLAUDE_ADAPTER, claudeEnv } from '../support/realAgents';
import { ORIGINAL_APP, RealAgentRun, createRequest, executeAllowing, planUntilApproved, type RealAgentSetup } from './realAgentKit';

const PLAN_V1 = '# Plan: flip the flag\n\n1. Set `original` to false in src/app.ts.\n';
const FEEDBACK = 'Also say why in a comment.';
const UPDATED_APP = '// Flipped: the original behaviour is retired.\nexport const original = false;\n';

/** The plan file Claude Code tells the model to write (its system reminder names it). */
function planFileOf(view: ModelRequestView): string {
  const match = /create your plan at (\S+?\.md)/.exec(view.allText) ?? /plan file (?:already )?exists at:? (\S+?\.md)/.exec(view.allText);
  if (!match?.[1]) throw new Error('the request names no plan file');
  return match[1];
}

function claudeSetup(run: RealAgentRun, rounds: ScenarioRound[], agent: RealAgentSetup['agent'] = {}): RealAgentSetup {
  return { family: anthropicApi, rounds, argv: [CLAUDE_ADAPTER], label: 'Claude (ACP)', env: claudeEnv, agent };
}

describe('the real Claude ACP adapter, left in the mode session/new gives it', function () {
  this.timeout(60_000);

  it('starts in "auto", where a write goes through with no permission request: plan mode has to be set before the first prompt', async () => {
    const acp = await import('@agentclientprotocol/sdk');
    const workspace = await mkdtemp(path.join(tmpdir(), 'ultraplan-claude-auto-ws-'));
    const home = await mkdtemp(path.join(tmpdir(), 'ultraplan-claude-auto-home-'));
    const app = path.join(workspace, 'app.ts');
    await writeFile(app, ORIGINAL_APP);
    const model = new ScriptedModelServer(
      anthropicApi,
      new Scenario([() => ({ toolCalls: [{ name: 'Write', input: { file_path: app, content: 'written in auto mode\n' } }] }), () => ({ text: 'Done.' })]),
    );
    const child = spawn(CLAUDE_ADAPTER, [], { cwd: workspace, env: claudeEnv(home, await model.start()), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const permissions: string[] = [];
    try {
      const client = acp.client({ name: 'ultraplan-test' });
      client.onNotification('session/update', () => undefined);
      client.onRequest('session/request_permission', ({ params }) => {
        permissions.push(params.toolCall.title ?? params.toolCall.toolCallId);
        return { outcome: { outcome: 'cancelled' } };
      });
      const connection = client.connect(
        acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>),
      );
      await connection.agent.request('initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false } });
      const session = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] });
      assert.equal(session.modes?.currentModeId, 'auto');
      const turn = await connection.agent.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'Change app.ts' }] });
      assert.equal(turn.stopReason, 'end_turn');
      assert.deepEqual(permissions, [], 'nobody was asked');
      assert.equal(await readFile(app, 'utf8'), 'written in auto mode\n');
      connection.close();
    } finally {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
        assert.ok(await waitGone(child.pid));
      }
      await model.close();
      await rm(workspace, { recursive: true, force: true });
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('the real Claude ACP adapter, with only the model scripted', function () {
  this.timeout(120_000);
  let run: RealAgentRun;

  beforeEach(() => {
    run = new RealAgentRun();
  });

  afterEach(async () => {
    await run.close();
  });

  it('plans read-only in plan mode, asks a question, takes the reject feedback into revision 2, and after approval edits with permission', async () => {
    const app = () => path.join(run.workspace, 'src', 'app.ts');
    let planFile = '';
    await run.open(
      claudeSetup(run, [
        () => ({ toolCalls: [{ name: 'Read', input: { file_path: app() } }] }),
        () => ({ toolCalls: [{ name: 'Write', input: { file_path: app(), content: 'export const original = false;\n' } }] }),
        () => ({
          toolCalls: [
            {
              name: 'AskUserQuestion',
              input: { questions: [{ question: 'Which file should change?', header: 'File', multiSelect: false, options: [{ label: 'src/app.ts', description: 'the app' }, { label: 'README.md', description: 'the readme' }] }] },
            },
          ],
        }),
        (view) => {
          planFile = planFileOf(view);
          return { toolCalls: [{ name: 'Write', input: { file_path: planFile, content: PLAN_V1 } }] };
        },
        () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
        () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
        (view) => ({ toolCalls: [{ name: 'Write', input: { file_path: planFile, content: `${PLAN_V1}2. ${view.lastUser.text.includes(FEEDBACK) ? 'Add a comment saying why.' : 'No feedback reached me.'}\n` } }] }),
        () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
        () => ({ toolCalls: [{ name: 'Write', input: { file_path: app(), content: UPDATED_APP } }] }),
        () => ({ text: 'Done: src/app.ts flipped.' }),
      ]),
    );
    const session = await run.backend.createSession(createRequest('Flip the flag in src/app.ts'));
    const { approved, plans, questions } = await planUntilApproved(run, session.id, {
      decisions: [{ behavior: 'deny', message: FEEDBACK }, { behavior: 'allow' }],
      answers: ['src/app.ts'],
      timeoutMs: 90_000,
    });

    // Plan mode was in force before the first prompt: the very first model call was told so.
    const [first] = run.model.rounds;
    assert.match(first?.view?.allText ?? '', /Plan mode is active/);
    assert.equal(run.systemEvents(session.id, 'init')[0]?.permissionMode, 'plan');

    // The write while planning was refused: the model heard it, the file is untouched.
    const afterWrite = run.model.rounds[2]?.view?.lastUser.toolResults[0];
    assert.equal(afterWrite?.isError, true, JSON.stringify(afterWrite));
    assert.ok(run.systemEvents(session.id, 'acp_refused').some((event) => String(event.message).includes('Write')));

    // The question reached the person; their answer reached the model.
    assert.deepEqual(questions, ['Which file?\n- src/app.ts\n- README.md'.replace('Which file?', 'Which file should change?')]);
    assert.match(run.model.rounds[3]?.view?.lastUser.toolResults[0]?.content ?? '', /src\/app\.ts/);

    // The real plan text, from the file the model wrote; the reject's feedback reached the model.
    assert.equal(plans[0], PLAN_V1);
    assert.match(run.model.rounds[6]?.view?.lastUser.text ?? '', new RegExp(FEEDBACK.replace('.', '\\.')));
    // The adapter trims the plan file's text.
    assert.equal(plans[1]?.trimEnd(), `${PLAN_V1}2. Add a comment saying why.`);
    assert.equal(approved.plan.trimEnd(), plans[1]?.trimEnd());
    assert.equal(approved.rejectCount, 1);
    assert.equal(await run.app(), ORIGINAL_APP, 'nothing written while planning');

    // Approve (ultraplan.afterApproval = default): manual edits, so the edit asks and lands once allowed.
    const { result, asked } = await executeAllowing(run, session.id, approved, 60_000);
    assert.equal(result.isError, false);
    assert.equal(result.result, 'Done: src/app.ts flipped.');
    assert.equal(asked.length, 1);
    assert.match(asked[0]?.toolName ?? '', /Write/);
    assert.equal(await run.app(), UPDATED_APP);
    assert.equal(run.agent.mode, 'default');
    assert.deepEqual(run.model.scenario.overruns, []);
  });

  it('a plan passed inline (no plan file) is shown as proposed; approve with acceptEdits lets the edit land without asking', async () => {
    const inline = '# Inline plan\n\n1. Flip the flag.\n';
    await run.open(
      claudeSetup(
        run,
        [
          () => ({ toolCalls: [{ name: 'Read', input: { file_path: path.join(run.workspace, 'src', 'app.ts') } }] }),
          () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
          () => ({ toolCalls: [{ name: 'ExitPlanMode', input: { plan: inline } }] }),
          () => ({ toolCalls: [{ name: 'Write', input: { file_path: path.join(run.workspace, 'src', 'app.ts'), content: UPDATED_APP } }] }),
          () => ({ text: 'Done.' }),
        ],
        { afterApproval: 'acceptEdits' },
      ),
    );
    const session = await run.backend.createSession(createRequest('Flip the flag'));
    const { approved, plans } = await planUntilApproved(run, session.id, { decisions: [{ behavior: 'allow' }], timeoutMs: 90_000 });
    assert.deepEqual(plans, [inline]);
    const { result, asked } = await executeAllowing(run, session.id, approved, 60_000);
    assert.equal(result.isError, false);
    assert.deepEqual(asked, [], 'acceptEdits: no permission asked for the edit');
    assert.equal(await run.app(), UPDATED_APP);
    assert.equal(run.agent.mode, 'acceptEdits');
  });

  it('a model that only answers errors (the adapter retries on its own) ends at the first-event bound with a clear message', async () => {
    const failing = () => ({ error: { status: 503, message: 'scripted: overloaded' } });
    await run.open(claudeSetup(run, Array.from({ length: 50 }, () => failing), { firstEventTimeoutMs: 8000 }));
    const session = await run.backend.createSession(createRequest('Plan anything'));
    await assert.rejects(
      pollForApprovedPlan({ sessionId: session.id, transport: run.backend.transport, pollIntervalMs: 50, timeoutMs: 60_000 }),
      (error: unknown) => error instanceof UltraplanPollError && error.reason === 'terminated',
    );
    const result = run.events(session.id).find((event) => event.type === 'result') as { result?: string; is_error?: boolean } | undefined;
    assert.equal(result?.is_error, true);
    assert.match(result?.result ?? '', /Claude \(ACP\) sent nothing for 8 s after the prompt\. It may be retrying a model it cannot reach/);
    assert.ok(run.model.rounds.length >= 1, 'the adapter did call the model');
  });

  it('a crash mid-turn ends the session with a clear message and leaves no process', async () => {
    await run.open(claudeSetup(run, [() => ({ hang: true })]));
    const session = await run.backend.createSession(createRequest('Plan anything'));
    await run.model.waitForRound(1, 60_000);
    const pid = run.agent.pid as number;
    process.kill(pid, 'SIGKILL');
    await assert.rejects(
      pollForApprovedPlan({ sessionId: session.id, transport: run.backend.transport, pollIntervalMs: 50, timeoutMs: 30_000 }),
      (error: unknown) => error instanceof UltraplanPollError && error.reason === 'terminated',
    );
    const result = run.events(session.id).find((event) => event.type === 'result') as { result?: string } | undefined;
    assert.match(result?.result ?? '', /Claude \(ACP\) was killed by SIGKILL unexpectedly/);
  });
});

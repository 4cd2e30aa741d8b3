// The real Claude ACP adapter (@agentclientprotocol/claude-agent-acp, pinned in the agents' cache) on its own
// and up to the model call: initialize, session/new with its modes (and the `auto` mode it starts
// in, which lets a write through unasked), the switch to plan mode, then the bounded failure of a
// prompt with no model reachable or no login, with no process left behind. The whole planning
// loop with a scripted model is acpRealClaude.test.ts.
import { strict as assert } from 'node:assert';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AcpAgent } from '../../src/agents/acp/acpAgent';
import { choosePlanMode, modeFromUpdate } from '../../src/agents/acp/planMode';
import { RecordingContext } from '../support/recordingAgentContext';
import { assertAgentGroupsGone } from '../support/processes';
import { anthropicApi } from '../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer } from '../support/modelApi/scenario';
import { CLAUDE_ADAPTER, claudeEnv, withRawAgent } from '../support/realAgents';
import { waitFor } from '../support/wait';
import { ORIGINAL_APP } from '../support/acpFixtures';

const ADAPTER = CLAUDE_ADAPTER;

/** An environment with no way to reach a model: an empty HOME, and no inherited keys. */
function isolatedEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'LANG', 'TMPDIR']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  // As root the adapter offers bypassPermissions only when told it runs in a sandbox; the test lists it.
  return { ...env, HOME: home, IS_SANDBOX: '1', ...extra };
}

describe('the real Claude ACP adapter, up to the model call', function () {
  this.timeout(60000);
  let home: string;
  let workspace: string;

  beforeEach(async () => {
    home = await mkdtemp(path.join(tmpdir(), 'ultraplan-claude-home-'));
    workspace = await mkdtemp(path.join(tmpdir(), 'ultraplan-claude-ws-'));
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
    await rm(workspace, { recursive: true, force: true });
  });

  it('answers initialize and session/new with a plan mode, and switches to it', async () => {
    const modeUpdates: string[] = [];
    await withRawAgent(
      [ADAPTER],
      { cwd: workspace, env: isolatedEnv(home) },
      (app) =>
        app.onNotification('session/update', ({ params }) => {
          const mode = modeFromUpdate(params.update as unknown as { sessionUpdate: string } & Record<string, unknown>);
          if (mode) modeUpdates.push(mode);
        }),
      async (connection) => {
        const init = await connection.agent.request('initialize', {
          protocolVersion: 1,
          clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
        });
        assert.equal(init.protocolVersion, 1);
        assert.equal(init.agentInfo?.name, '@agentclientprotocol/claude-agent-acp');

        const session = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] });
        const modeIds = session.modes?.availableModes.map((mode) => mode.id) ?? [];
        for (const id of ['default', 'acceptEdits', 'plan', 'bypassPermissions'])
          assert.ok(modeIds.includes(id), `mode ${id} in ${modeIds.join(',')}`);
        const choice = choosePlanMode('Claude (ACP)', session);
        assert.deepEqual(choice.ok && choice.target, {
          via: 'mode',
          modeId: 'plan',
          name: session.modes?.availableModes.find((m) => m.id === 'plan')?.name,
        });

        await connection.agent.request('session/set_mode', { sessionId: session.sessionId, modeId: 'plan' });
        // The adapter reports the switch (as a config_option_update of `mode`).
        await waitFor(() => modeUpdates, { message: 'the plan mode update', timeoutMs: 20_000, until: (modes) => modes.includes('plan') });
      },
    );
  });

  it('starts in "auto", where a write goes through with no permission request: plan mode has to be set before the first prompt', async () => {
    const app = path.join(workspace, 'app.ts');
    await writeFile(app, ORIGINAL_APP);
    const model = new ScriptedModelServer(
      anthropicApi,
      new Scenario([
        () => ({ toolCalls: [{ name: 'Write', input: { file_path: app, content: 'written in auto mode\n' } }] }),
        () => ({ text: 'Done.' }),
      ]),
    );
    const permissions: string[] = [];
    try {
      await withRawAgent(
        [ADAPTER],
        { cwd: workspace, env: claudeEnv(home, await model.start()) },
        (client) => {
          client.onNotification('session/update', () => undefined);
          client.onRequest('session/request_permission', ({ params }) => {
            permissions.push(params.toolCall.title ?? params.toolCall.toolCallId);
            return { outcome: { outcome: 'cancelled' } };
          });
        },
        async (connection) => {
          await connection.agent.request('initialize', {
            protocolVersion: 1,
            clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
          });
          const session = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] });
          assert.equal(session.modes?.currentModeId, 'auto');
          const turn = await connection.agent.request('session/prompt', {
            sessionId: session.sessionId,
            prompt: [{ type: 'text', text: 'Change app.ts' }],
          });
          assert.equal(turn.stopReason, 'end_turn');
        },
      );
    } finally {
      await model.close();
    }
    assert.deepEqual(permissions, [], 'nobody was asked');
    assert.equal(await readFile(app, 'utf8'), 'written in auto mode\n');
  });

  async function runPrompt(env: Record<string, string>, firstEventTimeoutMs: number) {
    const ctx = new RecordingContext();
    // inheritEnv false: the adapter gets only `env`, so no credentials of this machine reach it.
    const agent = new AcpAgent({
      argv: [ADAPTER],
      cwd: workspace,
      env,
      inheritEnv: false,
      label: 'Claude (ACP)',
      firstEventTimeoutMs,
      stopGraceMs: 1000,
    });
    await agent.start(ctx, 'Plan a tiny change');
    const pid = agent.pid;
    assert.ok(pid !== undefined);
    const [result] = await ctx.waitFor(() => (ctx.results().length ? ctx.results() : undefined), 45000, 'a result');
    assert.equal(ctx.systemEvents('init')[0]?.permissionMode, 'plan');
    assert.equal(agent.mode, 'plan');
    await agent.stop();
    await assertAgentGroupsGone([pid]);
    return { result, ctx };
  }

  it('with an unreachable model, the prompt ends at the first-event bound with a clear message; the adapter and its children are gone', async () => {
    const { result } = await runPrompt(
      isolatedEnv(home, { ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }),
      4000,
    );
    assert.equal(result?.subtype, 'error_during_execution');
    assert.match(result?.result ?? '', /Claude \(ACP\) sent nothing for 4 s after the prompt\. It may be retrying a model it cannot reach/);
  });

  it("without a login, the prompt fails with the adapter's message and what to do", async () => {
    const { result } = await runPrompt(isolatedEnv(home), 20000);
    assert.equal(result?.subtype, 'error_during_execution');
    // Either the adapter says so at once, or it retries and our bound ends it: both are clear.
    assert.match(result?.result ?? '', /Authentication required.*Log in with Claude \(ACP\)'s own command line|sent nothing for 20 s/s);
  });
});

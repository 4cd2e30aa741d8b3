// Whether an agent's ACP session/load brings its conversation back after its process is killed
// (kill -9 of its process group, as a crash of the host that ran it would): the real programs,
// only their model scripted on 127.0.0.1. The first process hears a word and answers; a second
// process on the same HOME and workspace loads the session and is asked for the word: the model's
// request must hold the first conversation. What this finds is what docs/agents.md says of each.
import { strict as assert } from 'node:assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openaiChatApi } from '../support/modelApi/openaiChat';
import { Scenario, ScriptedModelServer, type ModelApiFamily } from '../support/modelApi/scenario';
import { copilotArgv, copilotEnv, opencodeArgv, opencodeEnv, opencodeModelApi, withRawAgent } from '../support/realAgents';

const WORD = 'PELICAN-4417';

interface Loaded {
  loadSession: boolean | undefined;
  /** What the model was sent on the turn after the load. */
  afterLoad: string;
  /** session/update kinds the load replayed. */
  replayed: string[];
}

async function killThenLoad(
  family: ModelApiFamily,
  argv: string[],
  env: (home: string, url: string) => Record<string, string>,
): Promise<Loaded> {
  const home = await mkdtemp(path.join(tmpdir(), 'ultraplan-load-home-'));
  const workspace = await mkdtemp(path.join(tmpdir(), 'ultraplan-load-ws-'));
  let afterLoad = '';
  const model = new ScriptedModelServer(
    family,
    new Scenario([
      () => ({ text: 'Noted.' }),
      (view) => {
        afterLoad = view.allText;
        return { text: 'Done.' };
      },
    ]),
  );
  try {
    const url = await model.start();
    const sessionId = await withRawAgent(
      argv,
      { cwd: workspace, env: env(home, url) },
      (app) => app.onNotification('session/update', () => undefined),
      async (connection) => {
        await connection.agent.request('initialize', {
          protocolVersion: 1,
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        });
        const session = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] });
        const turn = await connection.agent.request('session/prompt', {
          sessionId: session.sessionId,
          prompt: [{ type: 'text', text: `Remember the word ${WORD}; answer "Noted."` }],
        });
        assert.equal(turn.stopReason, 'end_turn');
        return session.sessionId;
      },
    ); // withRawAgent ends with SIGKILL of the agent's process group
    const replayed: string[] = [];
    let loadSession: boolean | undefined;
    await withRawAgent(
      argv,
      { cwd: workspace, env: env(home, url) },
      (app) =>
        app.onNotification('session/update', ({ params }) => {
          replayed.push((params.update as { sessionUpdate: string }).sessionUpdate);
        }),
      async (connection) => {
        const answer = await connection.agent.request('initialize', {
          protocolVersion: 1,
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        });
        loadSession = answer.agentCapabilities?.loadSession;
        await connection.agent.request('session/load', { sessionId, cwd: workspace, mcpServers: [] });
        const turn = await connection.agent.request('session/prompt', {
          sessionId,
          prompt: [{ type: 'text', text: 'Which word did I ask you to remember?' }],
        });
        assert.equal(turn.stopReason, 'end_turn');
      },
    );
    return { loadSession, afterLoad, replayed };
  } finally {
    await model.close();
    await rm(home, { recursive: true, force: true });
    await rm(workspace, { recursive: true, force: true });
  }
}

describe('session/load after kill -9 (real agents, model scripted)', function () {
  this.timeout(180_000);

  it('GitHub Copilot CLI', async () => {
    const loaded = await killThenLoad(openaiChatApi(), copilotArgv(), copilotEnv);
    console.log(`copilot: loadSession ${loaded.loadSession}; replayed ${JSON.stringify(loaded.replayed)}`);
    assert.equal(loaded.loadSession, true);
    assert.ok(loaded.afterLoad.includes(WORD), `the conversation came back: ${loaded.afterLoad.slice(-2000)}`);
  });

  it('OpenCode', async () => {
    const loaded = await killThenLoad(opencodeModelApi, opencodeArgv(), (home, url) => opencodeEnv(home, url));
    console.log(`opencode: loadSession ${loaded.loadSession}; replayed ${JSON.stringify(loaded.replayed)}`);
    assert.equal(loaded.loadSession, true);
    assert.ok(loaded.afterLoad.includes(WORD), `the conversation came back: ${loaded.afterLoad.slice(-2000)}`);
  });
});

// kill -9 of the local session service while a session waits, then the next request of a window
// (LocalService) starts it again on the same data folder: the real agents, only their model
// scripted on 127.0.0.1, each session's agent named by its launch as the extension sends it.
// Claude's adapter and Codex's adapter resume their own conversation with session/load, and then
// Reject, Continue and Approve each reach that conversation; Gemini CLI does not resume, and its
// stopped agent's plan is carried out by a fresh turn.
import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AGENT_LOST_SUBTYPE, AGENT_RESUMED_SUBTYPE, controlResponseEvent, userMessageEvent } from '../../src/core/protocol';
import { SessionsClient } from '../../src/client/sessionsClient';
import type { AgentLaunch } from '../../src/core/agentLaunch';
import { LocalService } from '../../src/client/localService/localService';
import type { ServiceConnection } from '../../src/client/localService/serviceLauncher';
import type { StoredEvent } from '../../src/service/store/sessionStore';
import { anthropicApi } from '../support/modelApi/anthropic';
import { geminiApi } from '../support/modelApi/gemini';
import { startScriptedResponses, userTexts, type Round, type ScriptedResponsesApi } from '../support/modelApi/openaiResponses';
import { Scenario, ScriptedModelServer, type ModelApiFamily, type ScenarioRound } from '../support/modelApi/scenario';
import { killGroupsLeft, processesWithHome, waitGone } from '../support/processes';
import {
  CLAUDE_ADAPTER,
  claudeEnv,
  codexArgv,
  codexEnv,
  claudePlanFile,
  claudePlanning,
  geminiArgv,
  geminiEnv,
  geminiPlansDir,
} from '../support/realAgents';
import { killService } from '../support/serviceProcess';
import { ORIGINAL_APP, PLAN_V1 } from '../agents/realAgentKit';
import { cleanUpServices, clientOf, createSession, launcherOptions, serviceDir } from '../client/localService/serviceKit';
import { waitFor } from '../support/wait';
import { UPDATED_APP } from '../support/acpFixtures';

const AGENT_WAIT_MS = 120_000;

interface Run {
  workspace: string;
  home: string;
  dir: string;
  env: Record<string, string>;
  launch: AgentLaunch;
  service: LocalService;
  connection: ServiceConnection;
  client: SessionsClient;
}

const runs: Run[] = [];

/** A workspace and home of their own, and this user's service running the agent of `argv` for its sessions. */
async function openRun(
  argv: string[],
  label: string,
  env: (home: string, workspace: string) => Promise<Record<string, string>>,
): Promise<Run> {
  const workspace = await mkdtemp(path.join(tmpdir(), 'ultraplan-svc-resume-ws-'));
  const home = await mkdtemp(path.join(tmpdir(), 'ultraplan-svc-resume-home-'));
  await mkdir(path.join(workspace, 'src'));
  await writeFile(path.join(workspace, 'src', 'app.ts'), ORIGINAL_APP);
  const dir = serviceDir();
  const agentEnv = await env(home, workspace);
  // The service runs with the environment of the window that started it; its agents inherit it.
  const service = new LocalService(launcherOptions(dir, '1.0.0', { env: { ...process.env, ...agentEnv } }));
  const connection = await service.connect();
  const launch: AgentLaunch = { kind: 'acp', argv, cwd: workspace, label, afterApproval: 'acceptEdits', outsideAccess: 'ask' };
  const run: Run = { workspace, home, dir, env: agentEnv, launch, service, connection, client: clientOf(connection) };
  runs.push(run);
  return run;
}

/**
 * kill -9 of the service alone, then a window's next request: the service starts again. Its agents
 * are not killed: they see their pipe close and exit on their own (none of them is left to go on
 * planning beside the resumed one).
 */
async function killAndRestart(run: Run): Promise<SessionsClient> {
  const old = run.connection.status.pid;
  killService(old);
  assert.ok(await waitGone(old), 'the service is gone');
  await waitFor(() => processesWithHome(run.home), {
    message: 'the old agent processes to exit',
    timeoutMs: 10_000,
    until: (left) => left.length === 0,
  });
  // A client over the window's LocalService: its next request finds no listener and starts the service.
  const client = new SessionsClient({ baseUrl: 'http://localhost', getToken: () => run.service.token(), fetch: run.service.fetch });
  await client.listSessions();
  run.connection = await run.service.connect();
  assert.notEqual(run.connection.status.pid, old, 'a new service answers');
  return client;
}

async function events(client: SessionsClient, id: string): Promise<StoredEvent[]> {
  return (await client.readEvents(id, null)).events as StoredEvent[];
}

async function waitForEvent(client: SessionsClient, id: string, match: (e: StoredEvent) => boolean, what: string): Promise<StoredEvent> {
  return waitFor(async () => (await events(client, id)).find(match), { message: what, timeoutMs: AGENT_WAIT_MS });
}

const isPlanRequest = (e: StoredEvent) =>
  e.type === 'control_request' && (e.request as { tool_name?: string } | undefined)?.tool_name === 'ExitPlanMode';
const system = (subtype: string) => (e: StoredEvent) => e.type === 'system' && e.subtype === subtype;
const proposedPlan = (e: StoredEvent) => String((e.request as { input?: { plan?: string } }).input?.plan ?? '');
const planText = (e: StoredEvent) => proposedPlan(e).trimEnd();
/**
 * Waits (bounded) until the agent has done all it was asked (the session idle, nothing queued), so
 * every model request it was going to make is in: an overrun check before that could miss one.
 */
const agentDone = (client: SessionsClient, id: string, what: string) =>
  waitFor(() => client.getStatus(id), { message: what, timeoutMs: AGENT_WAIT_MS, until: (status) => status === 'idle' });
/** Waits (bounded) until `file` holds `text`. */
const fileHolds = (file: string, text: string, what: string) =>
  waitFor(() => readFile(file, 'utf8'), { message: what, timeoutMs: AGENT_WAIT_MS, until: (now) => now === text });

/**
 * Approve as the panel sends it (core/decision.ts, decisionEvent): the plan exactly as proposed. Any
 * other text, even one newline less, is an edit, which the agent is told in a prompt of its own.
 */
function approve(request: StoredEvent) {
  return controlResponseEvent(String(request.request_id), { behavior: 'allow', updatedInput: { plan: proposedPlan(request) } });
}

/**
 * What the model was asked past its script, for the failure message; a retry of the Anthropic SDK
 * (which Claude Code uses) says so in its x-stainless-retry-count header.
 */
function overrunRequests(model: ScriptedModelServer): string {
  const asked = model.requests.filter((r) => r.round !== undefined && model.scenario.overruns.includes(r.round));
  return asked
    .map((r) => {
      const retry = r.headers['x-stainless-retry-count'];
      return `round ${r.round}${retry === undefined ? '' : ` (retry ${String(retry)})`}: ${JSON.stringify(r.view?.lastUser.text.slice(0, 400))}`;
    })
    .join('\n');
}

async function scriptedModel(family: ModelApiFamily, rounds: ScenarioRound[]): Promise<ScriptedModelServer> {
  const model = new ScriptedModelServer(family, new Scenario(rounds));
  await model.start();
  models.push(model);
  return model;
}

const models: ScriptedModelServer[] = [];
const responsesApis: ScriptedResponsesApi[] = [];

describe('kill -9 of the local session service, then the next request starts it again (real agents, model scripted)', function () {
  this.timeout(300_000);

  afterEach(async () => {
    await cleanUpServices();
    for (const run of runs.splice(0)) {
      killGroupsLeft(processesWithHome(run.home));
      await rm(run.workspace, { recursive: true, force: true });
      await rm(run.home, { recursive: true, force: true });
    }
    for (const model of models.splice(0)) await model.close();
    for (const api of responsesApis.splice(0)) await api.close();
  });

  it("Claude's adapter resumes with session/load; Reject reaches its conversation, it revises, and Approve of the revision writes the file", async () => {
    let planFile = '';
    const model = await scriptedModel(anthropicApi, [
      ...claudePlanning(PLAN_V1, (file) => (planFile = file)),
      // After the restart: the reviewer's feedback arrives in the conversation the model had.
      (view) => {
        const feedback = /Also say why/.test(view.lastUser.text) ? 'Say why in a comment.' : 'No feedback reached me.';
        const remembered = view.allText.includes(planFile) ? '' : ' (the conversation was lost)';
        return { toolCalls: [{ name: 'Write', input: { file_path: planFile, content: `${PLAN_V1}2. ${feedback}${remembered}\n` } }] };
      },
      () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
      () => ({ toolCalls: [{ name: 'Write', input: { file_path: path.join(run.workspace, 'src', 'app.ts'), content: UPDATED_APP } }] }),
      () => ({ text: 'Done: flipped.' }),
    ]);
    const run: Run = await openRun([CLAUDE_ADAPTER], 'Claude (ACP)', async (home) => claudeEnv(home, model.url));
    const id = await createSession(run.client, run.launch, 'Flip the flag in src/app.ts');
    const request = await waitForEvent(run.client, id, isPlanRequest, 'the plan');

    const client = await killAndRestart(run);
    const resumed = await waitForEvent(client, id, system(AGENT_RESUMED_SUBTYPE), 'the resumed notice');
    assert.match(String(resumed.message), /Claude \(ACP\) continued this session's conversation\. Its plan can still be decided\./);
    assert.equal((await events(client, id)).filter(system(AGENT_LOST_SUBTYPE)).length, 0, 'not reported as stopped');
    assert.equal((await client.getSession(id)).session_status, 'requires_action');

    await client.sendEvents(id, [controlResponseEvent(String(request.request_id), { behavior: 'deny', message: 'Also say why.' })]);
    const revised = await waitForEvent(client, id, (e) => isPlanRequest(e) && e.request_id !== request.request_id, 'the revised plan');
    assert.equal(planText(revised), `${PLAN_V1.trimEnd()}\n2. Say why in a comment.`);
    assert.equal(await readFile(path.join(run.workspace, 'src', 'app.ts'), 'utf8'), ORIGINAL_APP, 'read-only while planning');

    await client.sendEvents(id, [approve(revised)]);
    await fileHolds(path.join(run.workspace, 'src', 'app.ts'), UPDATED_APP, 'the edit');
    await agentDone(client, id, 'the agent to finish the approved plan');
    assert.deepEqual(model.scenario.overruns, [], overrunRequests(model));
  });

  it("Claude's adapter, killed while it waits on a question: resumed with session/load, Continue (a message) goes on in the same conversation to a plan", async () => {
    let planFile = '';
    const model = await scriptedModel(anthropicApi, [
      () => ({ text: 'Which file should change: src/app.ts or README.md?' }),
      (view) => {
        planFile = claudePlanFile(view);
        assert.match(view.allText, /Which file should change/, 'the question is in the reloaded conversation');
        assert.match(view.lastUser.text, /src\/app\.ts, please/);
        return { toolCalls: [{ name: 'Write', input: { file_path: planFile, content: PLAN_V1 } }] };
      },
      () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
      () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
    ]);
    const run = await openRun([CLAUDE_ADAPTER], 'Claude (ACP)', async (home) => claudeEnv(home, model.url));
    const id = await createSession(run.client, run.launch, 'Flip the flag');
    await waitFor(() => run.client.getStatus(id), {
      message: 'the question',
      timeoutMs: AGENT_WAIT_MS,
      until: (status) => status === 'idle',
    });

    const client = await killAndRestart(run);
    const resumed = await waitForEvent(client, id, system(AGENT_RESUMED_SUBTYPE), 'the resumed notice');
    assert.doesNotMatch(String(resumed.message), /plan can still be decided/, 'no plan waits');
    assert.equal((await client.getSession(id)).session_status, 'idle');
    await client.sendEvents(id, [userMessageEvent('src/app.ts, please')]);
    const plan = await waitForEvent(client, id, isPlanRequest, 'the plan after Continue');
    assert.equal(planText(plan), PLAN_V1.trimEnd());
    assert.deepEqual(model.scenario.overruns, [], overrunRequests(model));
  });

  it("Claude's adapter, killed during a Continue after the approved plan was carried out: the message is not lost, the resumed conversation carries it out", async () => {
    const readme = 'README.md';
    const model = await scriptedModel(anthropicApi, [
      ...claudePlanning(PLAN_V1),
      () => ({ toolCalls: [{ name: 'Write', input: { file_path: path.join(run.workspace, 'src', 'app.ts'), content: UPDATED_APP } }] }),
      () => ({ text: 'Done: flipped.' }),
      // The Continue's turn: the model is still thinking when the service is killed.
      () => ({ hang: true }),
      (view) => {
        assert.match(view.lastUser.text, /Document the flag in README\.md/, 'the Continue reached the resumed conversation');
        return { toolCalls: [{ name: 'Write', input: { file_path: path.join(run.workspace, readme), content: '# original is false\n' } }] };
      },
      () => ({ text: 'Done: documented.' }),
    ]);
    const run: Run = await openRun([CLAUDE_ADAPTER], 'Claude (ACP)', async (home) => claudeEnv(home, model.url));
    const id = await createSession(run.client, run.launch, 'Flip the flag in src/app.ts');
    const request = await waitForEvent(run.client, id, isPlanRequest, 'the plan');
    await run.client.sendEvents(id, [approve(request)]);
    await fileHolds(path.join(run.workspace, 'src', 'app.ts'), UPDATED_APP, 'the edit');
    await agentDone(run.client, id, 'the approved plan carried out');
    const resultsBefore = (await events(run.client, id)).filter((e) => e.type === 'result').length;

    await writeFile(path.join(run.workspace, readme), '# app\n');
    await run.client.sendEvents(id, [userMessageEvent('Document the flag in README.md too.')]);
    await model.waitForRound(6, AGENT_WAIT_MS);
    const client = await killAndRestart(run);
    const resumed = await waitForEvent(client, id, system(AGENT_RESUMED_SUBTYPE), 'the resumed notice');
    assert.match(String(resumed.message), /continued this session's conversation\. It goes on with the message it was answering\./);
    await fileHolds(path.join(run.workspace, readme), '# original is false\n', 'the continued step carried out after the restart');
    await waitFor(async () => (await events(client, id)).filter((e) => e.type === 'result').length, {
      message: "the continued turn's result",
      timeoutMs: AGENT_WAIT_MS,
      until: (n) => n > resultsBefore,
    });
    await agentDone(client, id, 'the continued turn to end');
    assert.deepEqual(model.scenario.overruns, [], overrunRequests(model));
  });

  it("Codex's adapter resumes with session/load; Approve reaches its conversation and it carries the plan out", async () => {
    const api = await startScriptedResponses([
      { text: `Here is the plan.\n\n<proposed_plan>\n${PLAN_V1}</proposed_plan>` },
      (request) => {
        const said = userTexts(request);
        assert.ok(
          said.some((text) => /The reviewer approved your plan\. Carry it out now/.test(text)),
          `the approval reached the model: ${said.join(' | ')}`,
        );
        assert.ok(JSON.stringify(request.body).includes('Set `original` to false'), 'the reloaded thread holds the plan');
        return {
          calls: [
            { type: 'function', name: 'exec_command', arguments: { cmd: `printf 'export const original = false;\\n' > src/app.ts` } },
          ],
        };
      },
      { text: 'Done.' },
    ] satisfies Round[]);
    responsesApis.push(api);
    const run = await openRun(codexArgv(), 'Codex (ACP)', async (home) => codexEnv(home, api.baseUrl));
    const id = await createSession(run.client, run.launch, 'Flip the flag in src/app.ts');
    const request = await waitForEvent(run.client, id, isPlanRequest, 'the plan');
    assert.equal(planText(request), PLAN_V1.trimEnd());

    const client = await killAndRestart(run);
    const resumed = await waitForEvent(client, id, system(AGENT_RESUMED_SUBTYPE), 'the resumed notice');
    assert.match(String(resumed.message), /Codex \(ACP\) continued this session's conversation\. Its plan can still be decided\./);
    assert.equal((await events(client, id)).filter(system(AGENT_LOST_SUBTYPE)).length, 0, 'not reported as stopped');
    await client.sendEvents(id, [approve(request)]);
    await fileHolds(path.join(run.workspace, 'src', 'app.ts'), UPDATED_APP, 'the edit');
  });

  it('Gemini CLI is not resumed: the agent is shown stopped, and Approve starts a fresh turn that carries the plan out', async () => {
    const model = await scriptedModel(geminiApi, [
      (view) => ({
        toolCalls: [{ name: 'write_file', input: { file_path: path.join(geminiPlansDir(view), 'flip.md'), content: PLAN_V1 } }],
      }),
      () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'flip.md' } }] }),
      (view) => {
        assert.match(view.allText, /The reviewer approved the plan below\. Carry it out now/);
        return {
          toolCalls: [{ name: 'write_file', input: { file_path: path.join(run.workspace, 'src', 'app.ts'), content: UPDATED_APP } }],
        };
      },
      () => ({ text: 'Done.' }),
    ]);
    const run: Run = await openRun(geminiArgv(), 'Gemini (ACP)', async (home, workspace) => {
      // Gemini CLI allows its auto-edit mode only in a folder it trusts (the person did, here).
      await mkdir(path.join(home, '.gemini'), { recursive: true });
      await writeFile(path.join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [workspace]: 'TRUST_FOLDER' }));
      return geminiEnv(home, model.url);
    });
    const id = await createSession(run.client, run.launch, 'Flip the flag in src/app.ts');
    const request = await waitForEvent(run.client, id, isPlanRequest, 'the plan');

    const client = await killAndRestart(run);
    const lost = await waitForEvent(client, id, system(AGENT_LOST_SUBTYPE), 'the agent_lost notice');
    assert.match(
      String(lost.message),
      /is not resumed with session\/load.*Its plan can still be decided: Approve starts a new agent turn/s,
    );
    await client.sendEvents(id, [approve(request)]);
    await fileHolds(path.join(run.workspace, 'src', 'app.ts'), UPDATED_APP, 'the edit');
    await agentDone(client, id, 'the agent to finish the approved plan');
    assert.deepEqual(model.scenario.overruns, [], overrunRequests(model));
  });
});

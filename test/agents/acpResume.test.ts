// kill -9 of the session server while a plan waits, then a restart on the same data directory:
// the real agents (Claude's adapter, Qwen Code, Copilot CLI and OpenCode resume with session/load;
// Gemini CLI gets fresh turns from the session's log), only their model scripted on 127.0.0.1, the server a real child process
// (dist/server.js) followed over HTTP. Nothing acknowledged is lost, and what the UI offers works.
import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  AGENT_LOST_SUBTYPE,
  AGENT_MODE_SUBTYPE,
  AGENT_RESUMED_SUBTYPE,
  controlResponseEvent,
  userMessageEvent,
} from '../../src/core/protocol';
import { SessionsError } from '../../src/core/errors';
import { SessionsClient } from '../../src/client/sessionsClient';
import { HttpBackend } from '../../src/client/httpBackend';
import type { StoredEvent } from '../../src/service/store/sessionStore';
import { anthropicApi } from '../support/modelApi/anthropic';
import { geminiApi } from '../support/modelApi/gemini';
import { openaiChatApi } from '../support/modelApi/openaiChat';
import { Scenario, ScriptedModelServer, type ModelApiFamily, type ScenarioRound } from '../support/modelApi/scenario';
import { killGroupsLeft, processesWithHome } from '../support/processes';
import {
  CLAUDE_ADAPTER,
  claudeEnv,
  claudePlanThenWrite,
  copilotArgv,
  copilotEnv,
  copilotPlanFile,
  geminiArgv,
  geminiEnv,
  geminiPlansDir,
  qwenArgv,
  qwenEnv,
  qwenModelApi,
  opencodeArgv,
  opencodeEnv,
  opencodeModelApi,
} from '../support/realAgents';
import { startServer, tempDir, type ServerProcess } from '../support/serverProcess';
import { ORIGINAL_APP, PLAN_V1, createRequest } from './realAgentKit';
import { waitFor } from '../support/wait';
import { UPDATED_APP } from '../support/acpFixtures';

interface Run {
  workspace: string;
  home: string;
  dataDir: string;
  model: ScriptedModelServer;
  argv: string[];
  env: Record<string, string>;
  /** The server runs its agents unsandboxed (an agent whose model address the sandbox's proxy does not let through). */
  unsandboxed?: boolean;
  server?: ServerProcess;
  backend?: HttpBackend;
}

async function openRun(
  family: ModelApiFamily,
  rounds: ScenarioRound[],
  argv: string[],
  env: (home: string, url: string) => Record<string, string>,
) {
  const workspace = await mkdtemp(path.join(tmpdir(), 'ultraplan-resume-ws-'));
  const home = await mkdtemp(path.join(tmpdir(), 'ultraplan-resume-home-'));
  await mkdir(path.join(workspace, 'src'));
  await writeFile(path.join(workspace, 'src', 'app.ts'), ORIGINAL_APP);
  // Gemini CLI allows its auto-edit mode only in a folder it trusts (the person did, here).
  await mkdir(path.join(home, '.gemini'), { recursive: true });
  await writeFile(path.join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [workspace]: 'TRUST_FOLDER' }));
  const model = new ScriptedModelServer(family, new Scenario(rounds));
  const url = await model.start();
  const run: Run = { workspace, home, dataDir: tempDir('ultraplan-resume-data-'), model, argv, env: env(home, url) };
  return run;
}

/** The server (a child process) on the run's data directory; the edits the agent makes land without asking. */
async function serve(run: Run): Promise<HttpBackend> {
  const agent = `acp:${run.argv.map((arg) => JSON.stringify(arg)).join(' ')}`;
  run.server = await startServer({
    agent,
    dataDir: run.dataDir,
    // Sandboxed, each session's HOME starts as a copy of the run's (Gemini's trusted folders).
    extraArgs: ['--workspace', run.workspace, ...(run.unsandboxed ? ['--sandbox', 'off'] : ['--sandbox-home', run.home])],
    env: { ...run.env, ULTRAPLAN_AFTER_APPROVAL: 'acceptEdits' },
    startTimeoutMs: 60_000,
  });
  const token = run.server.token;
  run.backend = new HttpBackend({
    client: new SessionsClient({ baseUrl: run.server.url, getToken: async () => token ?? '' }),
    preferStream: false,
  });
  return run.backend;
}

/** kill -9 of the server; its agents go with it, as with a reboot (they would be orphans otherwise). */
async function killServer(run: Run): Promise<void> {
  await run.server?.kill();
  const agents = () => [...processesWithHome(run.home), ...processesWithHome(path.join(run.dataDir, 'sandboxes'), { under: true })];
  killGroupsLeft(agents());
  await waitFor(agents, {
    message: 'the agent processes to go',
    timeoutMs: 10_000,
    until: (left) => left.length === 0,
  });
}

async function events(backend: HttpBackend, sessionId: string): Promise<StoredEvent[]> {
  return (await backend.transport.readEvents(sessionId, null)).events as StoredEvent[];
}

/** A session whose plan waits, then kill -9 of the server and a new one on the same data directory. */
async function planThenRestart(run: Run): Promise<{ backend: HttpBackend; session: { id: string }; request: StoredEvent }> {
  const before = await serve(run);
  const session = await before.createSession(createRequest('Flip the flag in src/app.ts'));
  const request = await waitForEvent(before, session.id, isPlanRequest, 'the plan request');
  await killServer(run);
  return { backend: await serve(run), session, request };
}

/**
 * Approves the plan shown before the kill and waits for the agent's edit; the same approval again
 * (a second window's, say) is refused as already answered.
 */
async function approveAndSeeTheEdit(
  run: Run,
  backend: HttpBackend,
  sessionId: string,
  request: StoredEvent,
  plan: string = PLAN_V1,
): Promise<void> {
  const decision = controlResponseEvent(String(request.request_id), { behavior: 'allow', updatedInput: { plan } });
  await backend.sendEvents(sessionId, [decision]);
  const app = path.join(run.workspace, 'src', 'app.ts');
  await waitFor(() => readFile(app, 'utf8'), {
    message: 'the edit',
    timeoutMs: 90_000,
    intervalMs: 200,
    detail: () =>
      `the model: ${run.model.describe()}; it last read: ${run.model.rounds.at(-1)?.view?.allText.slice(-1500)}\nthe server: ${run.server?.stderr().slice(-3000)}`,
    until: (text) => text === UPDATED_APP,
  });
  await assert.rejects(
    backend.sendEvents(sessionId, [decision]),
    (err: unknown) => err instanceof SessionsError && /already answered/.test(err.message),
  );
}

/** Waits (bounded) for an event of the session that `match` picks. */
async function waitForEvent(
  backend: HttpBackend,
  sessionId: string,
  match: (e: StoredEvent) => boolean,
  what: string,
): Promise<StoredEvent> {
  return waitFor(async () => (await events(backend, sessionId)).find(match), { message: what, timeoutMs: 90_000, intervalMs: 200 });
}

/** Gemini's rounds that write `plan` to its plans folder and ask to leave plan mode with it. */
const geminiPlans = (plan: string): ScenarioRound[] => [
  (view) => ({ toolCalls: [{ name: 'write_file', input: { file_path: path.join(geminiPlansDir(view), 'flip.md'), content: plan } }] }),
  () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'flip.md' } }] }),
];

const isPlanRequest = (e: StoredEvent) =>
  e.type === 'control_request' && (e.request as { tool_name?: string } | undefined)?.tool_name === 'ExitPlanMode';
const system = (subtype: string) => (e: StoredEvent) => e.type === 'system' && e.subtype === subtype;

describe('kill -9 of the session server while a plan waits (real agents, model scripted)', function () {
  this.timeout(240_000);
  let run: Run | undefined;
  afterEach(async () => {
    if (!run) return;
    await run.server?.stop().catch(() => undefined);
    killGroupsLeft(processesWithHome(run.home));
    await run.model.close();
    await rm(run.workspace, { recursive: true, force: true });
    await rm(run.home, { recursive: true, force: true });
    run = undefined;
  });

  it("Claude's adapter resumes its conversation with session/load; Approve then carries the plan out and the file is written", async () => {
    let planFile = '';
    run = await openRun(
      anthropicApi,
      claudePlanThenWrite(
        PLAN_V1,
        () => path.join(run!.workspace, 'src', 'app.ts'),
        UPDATED_APP,
        (file) => (planFile = file),
      ),
      [CLAUDE_ADAPTER],
      claudeEnv,
    );
    const { backend, session, request } = await planThenRestart(run);
    const resumed = await waitForEvent(backend, session.id, system(AGENT_RESUMED_SUBTYPE), 'the resumed notice');
    assert.match(String(resumed.message), /Claude \(ACP\) continued this session's conversation\. Its plan can still be decided\./);
    assert.equal((await events(backend, session.id)).filter(system(AGENT_LOST_SUBTYPE)).length, 0);
    assert.equal((await backend.getSession(session.id)).session_status, 'requires_action');

    // The decision on the plan shown before the kill is taken, once.
    await approveAndSeeTheEdit(run, backend, session.id, request);
    // The model got the approval in the conversation it had: the plan written before the kill is in it.
    const afterLoad = run.model.rounds.find((round) =>
      /The reviewer approved your plan\. Carry it out now/.test(round.view?.lastUser.text ?? ''),
    )?.view;
    assert.ok(afterLoad, `the approval reached the model: ${run.model.describe()}`);
    assert.ok(afterLoad?.allText.includes(planFile), 'the reloaded conversation holds the plan file the model wrote');
  });

  it('Qwen Code resumes its conversation with session/load; Approve then carries the plan out and the file is written', async () => {
    const app = () => path.join(run!.workspace, 'src', 'app.ts');
    run = await openRun(
      qwenModelApi,
      [
        () => ({ toolCalls: [{ name: 'read_file', input: { file_path: app() } }] }),
        () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan: PLAN_V1 } }] }),
        // After the restart: the approval arrives as a prompt in the loaded conversation.
        () => ({ toolCalls: [{ name: 'read_file', input: { file_path: app() } }] }),
        () => ({ toolCalls: [{ name: 'write_file', input: { file_path: app(), content: UPDATED_APP } }] }),
        () => ({ text: 'Done.' }),
      ],
      qwenArgv(),
      qwenEnv,
    );
    const { backend, session, request } = await planThenRestart(run);
    const resumed = await waitForEvent(backend, session.id, system(AGENT_RESUMED_SUBTYPE), 'the resumed notice');
    assert.match(String(resumed.message), /Qwen Code \(ACP\) continued this session's conversation\. Its plan can still be decided\./);
    assert.equal((await events(backend, session.id)).filter(system(AGENT_LOST_SUBTYPE)).length, 0);

    await approveAndSeeTheEdit(run, backend, session.id, request);
    const afterLoad = run.model.rounds.find((round) =>
      /The reviewer approved your plan\. Carry it out now/.test(round.view?.lastUser.text ?? ''),
    )?.view;
    assert.ok(afterLoad, `the approval reached the model: ${run.model.describe()}`);
    // The loaded conversation holds the plan the model proposed before the kill.
    assert.ok(afterLoad?.allText.includes('Set `original` to false'), 'the reloaded conversation holds the plan');
  });

  it('Gemini CLI (no session/load): the agent is shown stopped; Approve starts a fresh turn that writes the file; a stale approval is refused', async () => {
    run = await openRun(
      geminiApi,
      [
        ...geminiPlans(PLAN_V1),
        (view) => {
          assert.match(view.allText, /The reviewer approved the plan below\. Carry it out now/);
          return {
            toolCalls: [{ name: 'write_file', input: { file_path: path.join(run!.workspace, 'src', 'app.ts'), content: UPDATED_APP } }],
          };
        },
        () => ({ text: 'Done.' }),
      ],
      geminiArgv(),
      geminiEnv,
    );
    const { backend, session, request } = await planThenRestart(run);
    const lost = await waitForEvent(backend, session.id, system(AGENT_LOST_SUBTYPE), 'the agent_lost notice');
    assert.match(
      String(lost.message),
      /is not resumed with session\/load.*Its plan can still be decided: Approve starts a new agent turn/s,
    );
    await approveAndSeeTheEdit(run, backend, session.id, request);
  });

  it("Copilot CLI (its plan at the turn's end) resumes its conversation with session/load; Approve then carries the plan out", async () => {
    const app = () => path.join(run!.workspace, 'src', 'app.ts');
    let planFile = '';
    run = await openRun(
      openaiChatApi(),
      [
        (view) => {
          planFile = copilotPlanFile(view);
          return {
            toolCalls: [
              {
                name: 'apply_patch',
                input: {
                  input: `*** Begin Patch\n*** Add File: ${planFile}\n+# Plan: flip the flag\n+\n+1. Set \`original\` to false in src/app.ts.\n*** End Patch\n`,
                },
              },
            ],
          };
        },
        () => ({ text: 'Plan saved.' }),
        // After the restart: the approval arrives as a prompt in the loaded conversation.
        () => ({
          toolCalls: [
            {
              name: 'apply_patch',
              input: {
                input: `*** Begin Patch\n*** Update File: ${app()}\n@@\n-export const original = true;\n+export const original = false;\n*** End Patch\n`,
              },
            },
          ],
        }),
        () => ({ text: 'Done.' }),
      ],
      copilotArgv(),
      copilotEnv,
    );
    const { backend, session, request } = await planThenRestart(run);
    assert.deepEqual((request.request as { input?: unknown }).input, { plan: PLAN_V1 });
    const resumed = await waitForEvent(backend, session.id, system(AGENT_RESUMED_SUBTYPE), 'the resumed notice');
    assert.match(String(resumed.message), /Copilot CLI \(ACP\) continued this session's conversation\. Its plan can still be decided\./);
    assert.equal((await events(backend, session.id)).filter(system(AGENT_LOST_SUBTYPE)).length, 0);

    await approveAndSeeTheEdit(run, backend, session.id, request);
    const afterLoad = run.model.rounds.find((round) =>
      /The reviewer approved your plan\. Carry it out now/.test(round.view?.lastUser.text ?? ''),
    )?.view;
    assert.ok(afterLoad, `the approval reached the model: ${run.model.describe()}`);
    assert.ok(afterLoad?.allText.includes(planFile), 'the reloaded conversation holds the plan file the model wrote');
  });

  it("OpenCode (its plan at the turn's end) resumes its conversation with session/load; Approve then carries the plan out", async () => {
    const app = () => path.join(run!.workspace, 'src', 'app.ts');
    run = await openRun(
      opencodeModelApi,
      [
        () => ({ text: PLAN_V1 }),
        // After the restart: the approval arrives as a prompt in the loaded conversation.
        () => ({ toolCalls: [{ name: 'edit', input: { filePath: app(), oldString: 'original = true', newString: 'original = false' } }] }),
        () => ({ text: 'Done.' }),
      ],
      opencodeArgv(),
      (home, url) => opencodeEnv(home, url),
    );
    // Its model address is in its config, not in a variable: a sandbox's proxy lets through only
    // its catalogue's hosts, not this scripted model (docs/agents.md), so its agents run unsandboxed.
    run.unsandboxed = true;
    const { backend, session, request } = await planThenRestart(run);
    // Its plan is the turn's last words, as said (without the newline the scripted model ended with).
    assert.deepEqual((request.request as { input?: unknown }).input, { plan: PLAN_V1.trimEnd() });
    const resumed = await waitForEvent(backend, session.id, system(AGENT_RESUMED_SUBTYPE), 'the resumed notice');
    assert.match(String(resumed.message), /OpenCode \(ACP\) continued this session's conversation\. Its plan can still be decided\./);
    assert.equal((await events(backend, session.id)).filter(system(AGENT_LOST_SUBTYPE)).length, 0);

    await approveAndSeeTheEdit(run, backend, session.id, request, PLAN_V1.trimEnd());
    const afterLoad = run.model.rounds.find((round) =>
      /The reviewer approved your plan\. Carry it out now/.test(round.view?.lastUser.text ?? ''),
    )?.view;
    assert.ok(afterLoad, `the approval reached the model: ${run.model.describe()}`);
    assert.ok(afterLoad?.allText.includes('Flip the flag in src/app.ts'), 'the reloaded conversation holds the task asked before the kill');
    // The mode the session shows: OpenCode's `mode` option set back to "build", no longer held
    // read-only (OpenCode answers the request and sends no update of its own for it).
    const modes = (await events(backend, session.id)).filter(system(AGENT_MODE_SUBTYPE));
    assert.deepEqual(modes.map((e) => [(e.mode as { id: string }).id, e.read_only]).at(-1), ['build', false]);
  });

  it('Gemini CLI: Reject after the kill starts a fresh planning turn that proposes a revised plan from the feedback', async () => {
    run = await openRun(
      geminiApi,
      [
        ...geminiPlans(PLAN_V1),
        (view) => ({
          toolCalls: [
            {
              name: 'write_file',
              input: {
                file_path: path.join(geminiPlansDir(view), 'flip2.md'),
                content: `${PLAN_V1}2. ${/Also say why/.test(view.allText) ? 'Say why in a comment.' : 'No feedback reached me.'}\n`,
              },
            },
          ],
        }),
        () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'flip2.md' } }] }),
      ],
      geminiArgv(),
      geminiEnv,
    );
    const { backend, session, request } = await planThenRestart(run);
    await waitForEvent(backend, session.id, system(AGENT_LOST_SUBTYPE), 'the agent_lost notice');
    await backend.sendEvents(session.id, [
      controlResponseEvent(String(request.request_id), { behavior: 'deny', message: 'Also say why.' }),
    ]);
    const revised = await waitForEvent(
      backend,
      session.id,
      (e) => isPlanRequest(e) && e.request_id !== request.request_id,
      'the revised plan',
    );
    assert.equal((revised.request as { input: { plan: string } }).input.plan.trimEnd(), `${PLAN_V1}2. Say why in a comment.`);
    assert.equal(await readFile(path.join(run.workspace, 'src', 'app.ts'), 'utf8'), ORIGINAL_APP, 'still read-only while planning');
  });

  it('Gemini CLI: killed while it waits on a question; Continue (a message) goes on planning with the conversation', async () => {
    run = await openRun(
      geminiApi,
      [
        () => ({ text: 'Which file should change: src/app.ts or README.md?' }),
        (view) => {
          assert.match(view.allText, /Agent: Which file should change/);
          assert.match(view.allText, /Person: src\/app\.ts, please/);
          return {
            toolCalls: [{ name: 'write_file', input: { file_path: path.join(geminiPlansDir(view), 'flip.md'), content: PLAN_V1 } }],
          };
        },
        () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'flip.md' } }] }),
      ],
      geminiArgv(),
      geminiEnv,
    );
    let backend = await serve(run);
    const session = await backend.createSession(createRequest('Flip the flag'));
    await waitFor(async () => (await backend.getSession(session.id)).session_status, {
      message: 'the question',
      timeoutMs: 90_000,
      intervalMs: 200,
      until: (status) => status === 'idle',
    });
    await killServer(run);
    backend = await serve(run);
    await waitForEvent(backend, session.id, system(AGENT_LOST_SUBTYPE), 'the agent_lost notice');
    await backend.sendEvents(session.id, [userMessageEvent('src/app.ts, please')]);
    const plan = await waitForEvent(backend, session.id, isPlanRequest, 'the plan after Continue');
    assert.equal((plan.request as { input: { plan: string } }).input.plan, PLAN_V1);
  });
});

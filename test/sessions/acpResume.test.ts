// kill -9 of the session server while a plan waits, then a restart on the same data directory:
// the real agents (Claude's adapter resumes with session/load; Gemini CLI gets fresh turns from
// the session's log), only their model scripted on 127.0.0.1, the server a real child process
// (dist/server.js) followed over HTTP. Nothing acknowledged is lost, and what the UI offers works.
import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AGENT_LOST_SUBTYPE, AGENT_RESUMED_SUBTYPE, controlResponseEvent, userMessageEvent } from '../../src/core/protocol';
import { SessionsError } from '../../src/core/errors';
import { SessionsClient } from '../../src/sessions/client';
import { HttpBackend } from '../../src/sessions/httpBackend';
import type { StoredEvent } from '../../src/sessions/store';
import { anthropicApi } from '../support/modelApi/anthropic';
import { geminiApi } from '../support/modelApi/gemini';
import { Scenario, ScriptedModelServer, type ModelApiFamily, type ScenarioRound } from '../support/modelApi/scenario';
import { killGroupsLeft, processesWithHome } from '../support/processes';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanThenWrite, geminiArgv, geminiEnv, geminiPlansDir } from '../support/realAgents';
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
    extraArgs: ['--workspace', run.workspace],
    env: { ...run.env, ULTRAPLAN_AFTER_APPROVAL: 'acceptEdits' },
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
  killGroupsLeft(processesWithHome(run.home));
  await waitFor(() => processesWithHome(run.home), {
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
async function approveAndSeeTheEdit(run: Run, backend: HttpBackend, sessionId: string, request: StoredEvent): Promise<void> {
  const decision = controlResponseEvent(String(request.request_id), { behavior: 'allow', updatedInput: { plan: PLAN_V1 } });
  await backend.sendEvents(sessionId, [decision]);
  const app = path.join(run.workspace, 'src', 'app.ts');
  await waitFor(() => readFile(app, 'utf8'), {
    message: 'the edit',
    timeoutMs: 90_000,
    intervalMs: 200,
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

// kill -9 of the worker running a session's real agent while its plan waits: the other worker
// claims the session once the lease runs out and resumes it with the code the local service uses
// after a restart. Claude's adapter gets its conversation back with ACP session/load; Gemini CLI
// (no session/load) is shown stopped, and Approve or a message each start a fresh turn that works
// (Reject goes through the same code as Approve: AgentRestarts.claim and act). Real PostgreSQL, a
// real replica and two real workers; only the models are scripted. The Gemini session works in a
// clone of a real git repository (file://) that the worker prepared.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AGENT_LOST_SUBTYPE, AGENT_RESUMED_SUBTYPE, controlResponseEvent, userMessageEvent } from '../../../src/core/protocol';
import { SessionsError } from '../../../src/core/errors';
import { SessionsClient } from '../../../src/client/sessionsClient';
import { HttpBackend } from '../../../src/client/httpBackend';
import type { StoredEvent } from '../../../src/service/store/sessionStore';
import { anthropicApi } from '../../support/modelApi/anthropic';
import { geminiApi } from '../../support/modelApi/gemini';
import { Scenario, ScriptedModelServer, type ModelApiFamily, type ScenarioRound } from '../../support/modelApi/scenario';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { isAlive, killGroupsLeft, processesWithHome } from '../../support/processes';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanThenWrite, geminiArgv, geminiEnv, geminiPlansDir } from '../../support/realAgents';
import { startServer, startWorker, type ServerProcess, type WorkerProcess } from '../../support/serverProcess';
import { waitFor } from '../../support/wait';
import { ORIGINAL_APP, PLAN_V1 } from '../../agents/realAgentKit';
import { createRequest } from '../hostTestKit';
import { UPDATED_APP } from '../../support/acpFixtures';

const LEASE_MS = 2_000;

interface Run {
  /** The local workspace (Claude), or the repository the session's git source names (Gemini). */
  folder: string;
  home: string;
  scratch: string;
  model: ScriptedModelServer;
  replica: ServerProcess;
  workers: WorkerProcess[];
  backend: HttpBackend;
}

async function openRun(
  family: ModelApiFamily,
  rounds: ScenarioRound[],
  argv: string[],
  env: (home: string, url: string) => Record<string, string>,
  where: 'workspace' | 'git',
): Promise<Run> {
  const folder = await mkdtemp(path.join(tmpdir(), 'ultraplan-worker-ws-'));
  const home = await mkdtemp(path.join(tmpdir(), 'ultraplan-worker-home-'));
  const scratch = await mkdtemp(path.join(tmpdir(), 'ultraplan-worker-scratch-'));
  await mkdir(path.join(folder, 'src'));
  await writeFile(path.join(folder, 'src', 'app.ts'), ORIGINAL_APP);
  if (where === 'git') {
    const git = (...args: string[]) => execFileSync('git', ['-C', folder, ...args], { stdio: 'pipe' });
    git('init', '--quiet', '--initial-branch=main');
    git('add', '.');
    git('-c', 'user.name=Test', '-c', 'user.email=test@example.com', 'commit', '--quiet', '-m', 'the app');
  }
  // Gemini CLI allows its auto-edit mode only in a folder it trusts (the person did, here).
  await mkdir(path.join(home, '.gemini'), { recursive: true });
  await writeFile(
    path.join(home, '.gemini', 'trustedFolders.json'),
    JSON.stringify({ [folder]: 'TRUST_FOLDER', [scratch]: 'TRUST_FOLDER' }),
  );
  const model = new ScriptedModelServer(family, new Scenario(rounds));
  const url = await model.start();
  const database = await (await sharedPostgresCluster()).createDatabase();
  const replica = await startServer({ store: database });
  const agent = `acp:${argv.map((arg) => JSON.stringify(arg)).join(' ')}`;
  // Both workers on one machine: the same agent home (Claude keeps its conversations there) and
  // the same scratch folder, as workers sharing a volume would.
  const workers = await Promise.all(
    ['worker_a', 'worker_b'].map((workerId) =>
      startWorker({
        store: database,
        agent,
        leaseMs: LEASE_MS,
        workerId,
        // Each session's sandbox HOME starts as a copy of this one (Gemini's trusted folders).
        extraArgs: ['--workspace', folder, '--scratch', scratch, '--sandbox-home', home, '--allow-file-sources'],
        env: { ...env(home, url), ULTRAPLAN_AFTER_APPROVAL: 'acceptEdits' },
      }),
    ),
  );
  const token = replica.token ?? '';
  const backend = new HttpBackend({
    client: new SessionsClient({ baseUrl: replica.url, getToken: async () => token }),
    preferStream: false,
  });
  return { folder, home, scratch, model, replica, workers, backend };
}

async function closeRun(run: Run): Promise<void> {
  await Promise.all([run.replica, ...run.workers].map((p) => p.stop().catch(() => undefined)));
  killGroupsLeft([...processesWithHome(run.home), ...processesWithHome(path.join(run.scratch, 'sandboxes'), { under: true })]);
  await run.model.close();
  for (const dir of [run.folder, run.home, run.scratch]) await rm(dir, { recursive: true, force: true });
}

/** A session whose plan waits; then kill -9 of the worker that runs it (its agent goes with it, as with a lost machine). */
async function planThenKillWorker(
  run: Run,
  source?: string,
): Promise<{ sessionId: string; request: StoredEvent; survivor: WorkerProcess }> {
  const request = createRequest('Flip the flag in src/app.ts');
  if (source) request.session_context = { sources: [{ type: 'git_repository', url: source, revision: 'main' }], outcomes: [] };
  const session = await run.backend.createSession(request);
  const plan = await waitForEvent(run, session.id, isPlanRequest, 'the plan request');
  const holder = run.workers.find((w) => w.stderr().includes(`claimed session ${session.id.replace(/^cse_/, 'session_')}`));
  assert.ok(holder, 'a worker claimed the session');
  const survivor = run.workers.find((w) => w !== holder) as WorkerProcess;
  // Only the holder runs an agent now; the survivor starts its own once it claims the session.
  const agents = processesWithHome(run.home).filter((pid) => pid !== survivor.pid && pid !== holder.pid);
  await holder.kill();
  killGroupsLeft(agents);
  await waitFor(() => agents.filter(isAlive), {
    message: 'the killed worker’s agents to go',
    timeoutMs: 10_000,
    until: (pids) => pids.length === 0,
  });
  return { sessionId: session.id, request: plan, survivor };
}

async function events(run: Run, sessionId: string): Promise<StoredEvent[]> {
  return (await run.backend.transport.readEvents(sessionId, null)).events as StoredEvent[];
}

async function waitForEvent(run: Run, sessionId: string, match: (e: StoredEvent) => boolean, what: string): Promise<StoredEvent> {
  return waitFor(async () => (await events(run, sessionId)).find(match), {
    message: what,
    timeoutMs: 120_000,
    intervalMs: 200,
    detail: () => run.workers.map((w) => w.stderr().slice(-3000)).join('\n---\n'),
  });
}

async function statusIs(run: Run, sessionId: string, status: string): Promise<void> {
  await waitFor(async () => (await run.backend.getSession(sessionId)).session_status, {
    message: `session ${sessionId} ${status}`,
    timeoutMs: 60_000,
    intervalMs: 200,
    until: (shown) => shown === status,
  });
}

/** Nothing stored twice: every event's uuid is unique, and the plan request the person saw is there once. */
async function assertNoDuplicates(run: Run, sessionId: string, request: StoredEvent): Promise<void> {
  const all = await events(run, sessionId);
  assert.equal(new Set(all.map((e) => e.uuid)).size, all.length, 'no event stored twice');
  assert.equal(all.filter((e) => e.request_id === request.request_id && e.type === 'control_request').length, 1);
}

/** Approves the plan shown before the kill, waits for the edit; the same approval again is refused. */
async function approveAndSeeTheEdit(run: Run, sessionId: string, request: StoredEvent, file: string): Promise<void> {
  const decision = controlResponseEvent(String(request.request_id), { behavior: 'allow', updatedInput: { plan: PLAN_V1 } });
  await run.backend.sendEvents(sessionId, [decision]);
  await waitFor(() => readFile(file, 'utf8').catch(() => ''), {
    message: 'the edit',
    timeoutMs: 120_000,
    intervalMs: 200,
    until: (text) => text === UPDATED_APP,
  });
  await assert.rejects(
    run.backend.sendEvents(sessionId, [decision]),
    (err: unknown) => err instanceof SessionsError && /already answered/.test(err.message),
  );
}

const geminiPlans = (plan: string, name = 'flip.md'): ScenarioRound[] => [
  (view) => ({ toolCalls: [{ name: 'write_file', input: { file_path: path.join(geminiPlansDir(view), name), content: plan } }] }),
  () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: name } }] }),
];

const isPlanRequest = (e: StoredEvent) =>
  e.type === 'control_request' && (e.request as { tool_name?: string } | undefined)?.tool_name === 'ExitPlanMode';
const system = (subtype: string) => (e: StoredEvent) => e.type === 'system' && e.subtype === subtype;

describe('kill -9 of a worker while its real agent’s plan waits (PostgreSQL, model scripted)', function () {
  this.timeout(300_000);
  let run: Run | undefined;
  afterEach(async () => {
    if (run) await closeRun(run);
    run = undefined;
  });

  it("Claude's adapter: the other worker resumes the conversation with session/load; Approve carries the plan out", async () => {
    let planFile = '';
    const appFile = () => path.join(run!.folder, 'src', 'app.ts');
    run = await openRun(
      anthropicApi,
      claudePlanThenWrite(PLAN_V1, appFile, UPDATED_APP, (file) => (planFile = file)),
      [CLAUDE_ADAPTER],
      claudeEnv,
      'workspace',
    );
    const { sessionId, request, survivor } = await planThenKillWorker(run);
    const resumed = await waitForEvent(run, sessionId, system(AGENT_RESUMED_SUBTYPE), 'the resumed notice');
    assert.match(
      String(resumed.message),
      /^The worker running this session stopped and Claude \(ACP\) continued this session's conversation\. Its plan can still be decided\.$/,
    );
    assert.match(survivor.stderr(), new RegExp(`claimed session ${sessionId.replace(/^cse_/, 'session_')} \\(epoch 2\\)`));
    assert.equal((await events(run, sessionId)).filter(system(AGENT_LOST_SUBTYPE)).length, 0);
    await statusIs(run, sessionId, 'requires_action');

    await approveAndSeeTheEdit(run, sessionId, request, appFile());
    const afterLoad = run.model.rounds.find((round) =>
      /The reviewer approved your plan\. Carry it out now/.test(round.view?.lastUser.text ?? ''),
    )?.view;
    assert.ok(afterLoad, `the approval reached the model: ${run.model.describe()}`);
    assert.ok(afterLoad?.allText.includes(planFile), 'the reloaded conversation holds the plan file the model wrote before the kill');
    await assertNoDuplicates(run, sessionId, request);
    assert.equal((await events(run, sessionId)).filter(system(AGENT_RESUMED_SUBTYPE)).length, 1, 'resumed once');
  });

  it('Gemini CLI (no session/load): shown stopped; Approve starts a fresh turn that edits the clone of the session’s repository', async () => {
    const clonedApp = (sessionId: string) => path.join(run!.scratch, sessionId.replace(/^cse_/, 'session_'), 'src', 'app.ts');
    let sessionId = '';
    run = await openRun(
      geminiApi,
      [
        ...geminiPlans(PLAN_V1),
        (view) => {
          assert.match(view.allText, /The reviewer approved the plan below\. Carry it out now/);
          return { toolCalls: [{ name: 'write_file', input: { file_path: clonedApp(sessionId), content: UPDATED_APP } }] };
        },
        () => ({ text: 'Done.' }),
      ],
      geminiArgv(),
      geminiEnv,
      'git',
    );
    const killed = await planThenKillWorker(run, `file://${run.folder}`);
    sessionId = killed.sessionId;
    const lost = await waitForEvent(run, sessionId, system(AGENT_LOST_SUBTYPE), 'the agent_lost notice');
    assert.match(
      String(lost.message),
      /^The worker running this session stopped and this session's agent could not continue \(.*is not resumed with session\/load\)\. Its plan can still be decided: Approve starts a new agent turn/s,
    );
    await statusIs(run, sessionId, 'idle');
    await approveAndSeeTheEdit(run, sessionId, killed.request, clonedApp(sessionId));
    assert.equal(await readFile(path.join(run.folder, 'src', 'app.ts'), 'utf8'), ORIGINAL_APP, 'the repository itself is untouched');
    await assertNoDuplicates(run, sessionId, killed.request);
    assert.equal((await events(run, sessionId)).filter(system(AGENT_LOST_SUBTYPE)).length, 1, 'said once');
  });

  it('Gemini CLI: Continue (a message) instead of a decision goes on planning; the old plan can no longer be approved', async () => {
    run = await openRun(
      geminiApi,
      [
        ...geminiPlans(PLAN_V1),
        (view) => {
          assert.match(view.allText, /Person: Make it a constant too/);
          return {
            toolCalls: [
              {
                name: 'write_file',
                input: { file_path: path.join(geminiPlansDir(view), 'v2.md'), content: `${PLAN_V1}2. Keep it const.\n` },
              },
            ],
          };
        },
        () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'v2.md' } }] }),
      ],
      geminiArgv(),
      geminiEnv,
      'workspace',
    );
    const { sessionId, request } = await planThenKillWorker(run);
    await waitForEvent(run, sessionId, system(AGENT_LOST_SUBTYPE), 'the agent_lost notice');
    await run.backend.sendEvents(sessionId, [userMessageEvent('Make it a constant too')]);
    const next = await waitForEvent(
      run,
      sessionId,
      (e) => isPlanRequest(e) && e.request_id !== request.request_id,
      'the plan after Continue',
    );
    assert.equal((next.request as { input: { plan: string } }).input.plan.trimEnd(), `${PLAN_V1}2. Keep it const.`);
    await assert.rejects(
      run.backend.sendEvents(sessionId, [
        controlResponseEvent(String(request.request_id), { behavior: 'allow', updatedInput: { plan: PLAN_V1 } }),
      ]),
      (err: unknown) => err instanceof SessionsError && /can no longer be answered|already answered/.test(err.message),
    );
  });
});

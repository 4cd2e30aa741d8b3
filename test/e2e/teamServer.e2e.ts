// The extension against the team setup (docs/server.md, "PostgreSQL" and "Workers"): two
// ultraplan-server replicas on one real PostgreSQL behind a proxy, and one worker running the real
// Claude ACP adapter (only its model scripted on 127.0.0.1) in the folder the window has open.
// A plan started from the editor shows in the review; kill -9 of the replica its event stream is
// on; the extension's stream resumes on the other replica, Approve goes through it, the agent
// writes the file and the panel and status bar follow to the end.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { answerInputBox, openTestWindow, readStatusBar, runCommand, screenshot, waitFor, type TestWindow } from './harness';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy';
import { anthropicApi } from '../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer } from '../support/modelApi/scenario';
import { sharedPostgresCluster } from '../support/postgresCluster';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanThenWrite } from '../support/realAgents';
import { startServer, startWorker, type ServerProcess, type WorkerProcess } from '../support/serverProcess';
import { closeRealAgentRun } from './realAgentWindow';
import { decisionsSent, onlySession, planTask, reportIfFailed, reviewFrame, sessionEvents } from './ultraplanSteps';

const ORIGINAL = 'export const original = true;\n';
const UPDATED = 'export const original = false;\n';
const PLAN = '# Flip the flag\n\n1. Set original to false in src/app.ts.\n2. Run the tests.\n';
const STREAM_PATH = /\/events\/stream$/;

describe('the team server: two replicas on PostgreSQL and a worker with the real Claude adapter', function () {
  const home = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-team-e2e-home-'));
  let window: TestWindow | undefined;
  let replicas: ServerProcess[] = [];
  let worker: WorkerProcess | undefined;
  let proxy: FaultProxy | undefined;
  const workspace = (): string => {
    if (!window) throw new Error('the window is not open (its before hook failed)');
    return window.workspace;
  };
  const model = new ScriptedModelServer(
    anthropicApi,
    new Scenario(claudePlanThenWrite(PLAN, () => path.join(workspace(), 'src', 'app.ts'), UPDATED)),
  );

  before(async function () {
    this.timeout(120_000);
    await model.start();
    const database = await (await sharedPostgresCluster()).createDatabase();
    const token = `team-${Math.random().toString(16).slice(2)}`;
    replicas = await Promise.all([0, 1].map(() => startServer({ store: database, token, keepAliveMs: 2000 })));
    proxy = await startFaultProxy({ target: (replicas[0] as ServerProcess).url });
    window = await openTestWindow({
      suite: 'team-server',
      files: { 'README.md': '# Demo project\n', 'src/app.ts': ORIGINAL },
      settings: { 'ultraplan.backend': 'server', 'ultraplan.server.url': proxy.url },
    });
    await runCommand(window.page, 'Ultraplan: Set Server Token…');
    await answerInputBox(window.page, token);
    // The worker works in the folder the window has open (one machine: --workspace).
    worker = await startWorker({
      store: database,
      agent: `acp:${JSON.stringify(CLAUDE_ADAPTER)}`,
      extraArgs: ['--workspace', window.workspace],
      env: { ...claudeEnv(home, model.url), ULTRAPLAN_AFTER_APPROVAL: 'acceptEdits' },
    });
  });
  afterEach(async function () {
    await reportIfFailed(this, window);
  });
  after(async function () {
    await Promise.all([...replicas, ...(worker ? [worker] : [])].map((p) => p.stop().catch(() => undefined)));
    await proxy?.close();
    await closeRealAgentRun(window, home, model);
  });

  it('plans from the editor, survives kill -9 of the replica the stream is on, and Approve makes the agent write the file', async function () {
    this.timeout(240_000);
    const { page } = window!;
    const [first, second] = replicas as [ServerProcess, ServerProcess];
    await planTask(page, 'flip the flag in src/app.ts');
    const frame = await reviewFrame(page, '#plan li');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Set original to false in src\/app\.ts/);
    await screenshot(page, 'team-plan');
    // The review follows the session through an event stream, on the first replica.
    await waitFor(() => (proxy!.openStreams > 0 ? true : undefined), { timeoutMs: 30_000, message: 'the extension’s event stream' });

    await first.kill();
    const killedAt = Date.now();
    proxy!.setTarget(second.url);
    // The stream comes back, on the second replica, by itself.
    await waitFor(
      () => (proxy!.requests.some((r) => r.startedAt > killedAt && STREAM_PATH.test(r.path) && r.status === 200) ? true : undefined),
      { timeoutMs: 60_000, message: 'the event stream to resume on the other replica' },
    );
    await waitFor(async () => ((await frame.getByRole('button', { name: 'Approve', exact: true }).isEnabled()) ? true : undefined), {
      timeoutMs: 30_000,
      message: 'Approve to be enabled',
    });
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();

    // The panel and the status bar follow the agent to the end, through the second replica.
    await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 120_000 });
    assert.equal(readFileSync(path.join(workspace(), 'src', 'app.ts'), 'utf8'), UPDATED);
    await screenshot(page, 'team-approved');
    const session = await onlySession(second);
    const events = await sessionEvents(second, session.id.replace(/^cse_/, 'session_'));
    assert.equal(decisionsSent(events).length, 1, 'one decision stored');
    assert.equal(new Set(events.map((e) => e.uuid)).size, events.length, 'no event stored twice');
    assert.match(worker!.stderr(), /claimed session session_/);
  });
});

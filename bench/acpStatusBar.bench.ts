// From an ACP agent's exit-plan permission request to "Ultraplan: plan ready" in VS Code's status
// bar, in real code-server 4.100.3 + Chromium with the production build of the extension, for the
// same fake ACP agent program (test/fixtures/fake-acp-agent) behind:
//   embedded  the local session service (docs/service.md) runs the agent as the window's custom
//             command (ultraplan.agent.choice = custom), followed over its Unix socket — the baseline
//   server    a real ultraplan-server --agent acp:<the same command> --workspace <the window's folder>,
//             followed by the extension over HTTP with the event stream (its default)
// One window runs every session, the two backends alternating (ABBA after one unrecorded warm-up
// each), switched through ultraplan.backend, so both see the same machine load.
// t0: the agent stamps the moment it sends session/request_permission (performance.timeOrigin +
//     performance.now(); Node processes on one machine agree on it, as bench/acp.bench.ts relies on).
// t1: a MutationObserver on the status bar, installed in the workbench page before the task is
//     submitted, sees an item say "Ultraplan: plan ready"; then the frame after it (rAF + a task).
//     Page and bench clocks are related by the ping with the shortest round trip (error printed).
// Also from the extension's `-> plan_ready` log line (millisecond stamps): how much of it is
// the extension host noticing, and how much the status bar's trip to the page.
// Each session's request comes after a random 0.2-1.2 s, so nothing is measured at one phase of
// a timer; each is approved afterwards, so the next one turns the status bar from "planning".
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { answerInputBox, createWorkspace, dismissNotifications, runCommand, statusBarTexts, waitFor } from '../test/e2e/harness';
import { readAgentRecord } from '../test/support/fakeAcpAgent';
import { listSessions, planTask } from '../test/e2e/ultraplanSteps';
import { killGroupsLeft } from '../test/support/processes';
import { startServer, type ServerProcess } from '../test/support/serverProcess';
import { fakeAgentProgram } from '../test/support/fakeAcpAgent';
import { clockOffset, findUltraplanLogLine, logLineTime, openStagedWindow, type StagedWindow } from './codeServerWindow';
import { EXTENSION_ID, buildBundles, readManifest, stageExtension, tempRoot } from './extensionStaging';
import { result, type BenchResult } from './measure';
import { exitPlanScenario } from './fakeAgentScenario';

export const title =
  'ACP permission request -> "Ultraplan: plan ready" in the status bar (code-server 4.100.3 + Chromium): embedded vs server (stream)';

// Ten per backend, not five: the two differ by less than the run-to-run spread (about 15-45 ms),
// and with five the ratio swung between 0.85x and 1.5x across runs. About 70 s in all.
const SAMPLES = 10;
const SUITE = 'bench-acp-status-bar';
const PLAN_READY = 'Ultraplan: plan ready';

type Backend = 'embedded' | 'server';
/** Warm-up first (unrecorded), then ABBA so neither backend always goes first. */
const ORDER: Backend[] = [
  'embedded',
  'server',
  ...Array.from({ length: SAMPLES }, (_, i): Backend[] => (i % 2 === 0 ? ['embedded', 'server'] : ['server', 'embedded'])).flat(),
];
const WARMUP = 2;

interface RecordEntry {
  kind: string;
  hr?: number;
  pid?: number;
  toolCallId?: string;
  outcome?: string;
}

/**
 * In the workbench page: resolves with when a status bar item first shows `text` (DOM) and when
 * the frame after that was painted. Refuses when an item already shows it.
 */
export async function watchStatusBar(page: Page, text: string): Promise<void> {
  // A string, not a function: tsx's __name helper would not exist in the page.
  const installed = await page.evaluate(`(() => {
    const text = ${JSON.stringify(text)};
    const bar = document.getElementById('workbench.parts.statusbar');
    if (!bar) throw new Error('the workbench has no status bar');
    const showing = () => Array.from(bar.querySelectorAll('.statusbar-item')).some(
      (item) => (item.textContent || '').includes(text) && item.getClientRects().length > 0);
    if (showing()) return 'already there';
    window.__ultraplanBenchStatus = new Promise((resolve) => {
      const observer = new MutationObserver(() => {
        if (!showing()) return;
        observer.disconnect();
        const domAt = performance.timeOrigin + performance.now();
        requestAnimationFrame(() => setTimeout(() => resolve({ domAt, paintAt: performance.timeOrigin + performance.now() }), 0));
      });
      observer.observe(bar, { childList: true, subtree: true, characterData: true, attributes: true });
    });
    return 'watching';
  })()`);
  if (installed !== 'watching') throw new Error(`the status bar watch was installed too late (${String(installed)})`);
}

interface Sample {
  backend: Backend;
  /** Request -> the frame after the status bar says plan ready. */
  ms: number;
  /** Request -> the status bar's DOM says plan ready. */
  domMs: number;
  /** Request -> the extension's `-> plan_ready` log line. */
  hostMs: number;
  errorMs: number;
}

async function sample(
  window: StagedWindow,
  sessions: ServerProcess,
  backend: Backend,
  n: number,
  scenarioFile: string,
  record: string,
): Promise<Sample> {
  const { page, server } = window;
  const serverSessionsBefore = (await listSessions(sessions)).length;
  const toolCallId = `bench-${backend}-${n}`;
  await fs.promises.writeFile(scenarioFile, JSON.stringify(exitPlanScenario(200 + Math.random() * 1000, toolCallId)));
  const requestsBefore = readAgentRecord<RecordEntry>(record).filter((e) => e.kind === 'permission_request_sent').length;

  await watchStatusBar(page, PLAN_READY);
  await planTask(page, `bench ${n}: plan a settings store migration`);
  const painted = (await page.evaluate('window.__ultraplanBenchStatus')) as { domAt: number; paintAt: number };
  const clock = await clockOffset(page);
  const requests = readAgentRecord<RecordEntry>(record).filter((e) => e.kind === 'permission_request_sent');
  if (requests.length !== requestsBefore + 1)
    throw new Error(`expected one new permission request in the agent's record, found ${requests.length - requestsBefore}`);
  const sentAt = requests.at(-1)?.hr;
  if (typeof sentAt !== 'number') throw new Error('the agent did not stamp its permission request');
  const logLine = await waitFor(() => findUltraplanLogLine(server, `-> plan_ready (plan ${toolCallId})`), {
    timeoutMs: 10_000,
    message: "the extension's plan_ready log line",
  });

  // Approve it, and check that this session's agent is the one that asked (its answer names the tool call).
  await window.server.probe.executeCommand('ultraplan.review.approve');
  await waitFor(
    () =>
      readAgentRecord<RecordEntry>(record).some(
        (e) => e.kind === 'permission_outcome' && e.toolCallId === toolCallId && e.outcome === 'default',
      ) || undefined,
    {
      timeoutMs: 20_000,
      message: `the approval of ${toolCallId} to reach its agent`,
    },
  );
  await waitFor(async () => !(await statusBarTexts(page)).some((t) => t.includes(PLAN_READY)) || undefined, {
    timeoutMs: 20_000,
    message: 'the status bar to leave plan ready',
  });

  // The session ran where it was meant to: one more on the server for a server sample, none for an embedded one.
  const serverSessionsAdded = (await listSessions(sessions)).length - serverSessionsBefore;
  if (serverSessionsAdded !== (backend === 'server' ? 1 : 0))
    throw new Error(`a ${backend} sample added ${serverSessionsAdded} sessions to the server`);

  const ms = painted.paintAt - clock.offset - sentAt;
  if (!(ms > 0)) throw new Error(`negative request -> status bar time (${ms} ms): the clocks disagree`);
  return { backend, ms, domMs: painted.domAt - clock.offset - sentAt, hostMs: logLineTime(logLine) - sentAt, errorMs: clock.errorMs };
}

export async function run(): Promise<BenchResult[]> {
  const root = await tempRoot('ultraplan-bench-acp-status-');
  const scenarioFile = path.join(root.dir, 'scenario.json');
  const record = path.join(root.dir, 'record.jsonl');
  const argv = [process.execPath, fakeAgentProgram(), scenarioFile, record];
  let workspace: string | undefined;
  let sessions: ServerProcess | undefined;
  let window: StagedWindow | undefined;
  const samples: Sample[] = [];
  try {
    // The extension as a person gets it, built apart from the shared dist/ (others rebuild it).
    const dist = await buildBundles(path.join(root.dir, 'build'), { production: true });
    const extension = await stageExtension(path.join(root.dir, 'extension'), { dist });
    workspace = await createWorkspace({});
    await fs.promises.writeFile(scenarioFile, JSON.stringify(exitPlanScenario(0, 'unused')));
    sessions = await startServer({
      agent: `acp:${argv.map((arg) => JSON.stringify(arg)).join(' ')}`,
      extraArgs: ['--workspace', workspace],
    });
    window = await openStagedWindow({
      suite: SUITE,
      workspace,
      settings: {
        'ultraplan.backend': 'embedded',
        'ultraplan.agent.choice': 'custom',
        'ultraplan.agent.command': argv,
        'ultraplan.server.url': sessions.url,
      },
      staged: [{ id: EXTENSION_ID, version: readManifest().version, folder: extension }],
    });
    await runCommand(window.page, 'Ultraplan: Set Server Token…');
    await answerInputBox(window.page, sessions.token ?? '');
    await dismissNotifications(window.page);

    let current: Backend = 'embedded';
    for (const [n, backend] of ORDER.entries()) {
      if (backend !== current) {
        await window.server.probe.updateConfiguration('ultraplan', 'backend', backend);
        current = backend;
      }
      const s = await sample(window, sessions, backend, n, scenarioFile, record);
      console.log(
        `  ${n < WARMUP ? 'warm-up' : `sample ${n - WARMUP + 1}/${ORDER.length - WARMUP}`} ${backend}: request -> host plan_ready ${s.hostMs.toFixed(0)} ms -> status bar DOM ${s.domMs.toFixed(0)} ms -> painted ${s.ms.toFixed(0)} ms (clock error <= ${s.errorMs.toFixed(1)} ms)`,
      );
      if (n >= WARMUP) samples.push(s);
    }
  } finally {
    await window?.close();
    await sessions?.stop();
    killGroupsLeft(readAgentRecord<RecordEntry>(record).flatMap((e) => (e.kind === 'started' && typeof e.pid === 'number' ? [e.pid] : [])));
    if (workspace) await fs.promises.rm(workspace, { recursive: true, force: true });
    await root.remove();
  }

  const of = (backend: Backend, pick: (s: Sample) => number) => samples.filter((s) => s.backend === backend).map(pick);
  const worstError = Math.max(...samples.map((s) => s.errorMs));
  return [
    result(
      'embedded',
      'ms',
      'lower',
      of('embedded', (s) => s.ms),
      {
        note: `extension hosts the session, agent as ultraplan.agent.command; request -> frame painted after the status bar says plan ready; clock error <= ${worstError.toFixed(1)} ms`,
      },
    ),
    result(
      'server, stream',
      'ms',
      'lower',
      of('server', (s) => s.ms),
      {
        baseline: 'embedded',
        note: 'ultraplan-server --agent acp:<same command>, extension follows its SSE event stream; same window, alternating',
      },
    ),
    result(
      'embedded: request -> host logs plan_ready',
      'ms',
      'lower',
      of('embedded', (s) => s.hostMs),
      { note: "the extension's `-> plan_ready` log line (ms stamps)" },
    ),
    result(
      'server, stream: request -> host logs plan_ready',
      'ms',
      'lower',
      of('server', (s) => s.hostMs),
      { baseline: 'embedded: request -> host logs plan_ready' },
    ),
    result(
      'embedded: request -> status bar DOM',
      'ms',
      'lower',
      of('embedded', (s) => s.domMs),
      { note: 'MutationObserver in the workbench page' },
    ),
    result(
      'server, stream: request -> status bar DOM',
      'ms',
      'lower',
      of('server', (s) => s.domMs),
      { baseline: 'embedded: request -> status bar DOM' },
    ),
  ];
}

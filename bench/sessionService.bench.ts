// The local session service (docs/service.md), in one run:
// 1. Event -> the poller's phase report (what the status bar shows), through the service's Unix
//    socket (SessionsClient + event stream over socketFetch, the service a separate process, as
//    the extension follows it now) beside the in-process path the extension used before (a
//    SessionHost in this process, its subscription waking the poller: InProcessBackend). The same
//    scripted agent (examples/question.json): sessions wait on its question, each gets a reply at
//    a random moment, timed from just before the reply is sent to the next phase report.
// 2. The idle service's memory: resident set (VmRSS) of a service with no session and no client,
//    beside a bare `node` process that only waits (what any Node process costs here).
// 3. Reload -> ready plan painted, in real code-server + Chromium (production build), on the engine
//    floor (4.100.3) and the newest (4.139.1): a plan waits in the service; the window is
//    reloaded; from the extension's activation (its "activated" log line) to the plan on screen:
//    the status bar's "plan ready" (polled from outside), then from the panel's own performance
//    marks, read on the page's clock: its script started (the workbench has loaded the page), the
//    first painted frame showing the plan, and the first in which Approve was enabled. Baseline:
//    the same reload on the server backend (an ultraplan-server on 127.0.0.1, followed over TCP
//    with the token).
import { spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Frame } from 'playwright-core';
import { DEFAULT_POLL_INTERVAL_MS } from '../src/core/poller';
import { setPlanModeEvent, userMessageEvent } from '../src/core/protocol';
import { PERSISTED_SESSIONS_KEY } from '../src/core/stateKeys';
import type { SessionBackend } from '../src/core/sessionBackend';
import { SessionsClient } from '../src/client/sessionsClient';
import { InProcessBackend } from '../src/service/inProcessBackend';
import { SessionHost } from '../src/service/host/sessionHost';
import { HttpBackend } from '../src/client/httpBackend';
import { loadScenarioFile } from '../src/agents/catalogue/scenario';
import { scriptedAgentFactory } from '../src/agents/scripted/scriptedAgent';
import { withAgentLaunch, type AgentLaunch } from '../src/core/agentLaunch';
import { connectOrStartService } from '../src/client/localService/serviceLauncher';
import { servicePaths, SERVICE_DIR_ENV } from '../src/core/node/servicePaths';
import { socketFetch } from '../src/client/localService/socketFetch';
import {
  answerInputBox,
  findWebviewFrame,
  runCommand,
  statusBarTexts,
  waitForStoredWorkspaceState,
  type CodeServer,
} from '../test/e2e/harness';
import { planTask } from '../test/e2e/ultraplanSteps';
import { EXAMPLES_DIR, SERVER_JS, ensureServerBuilt, startServer } from '../test/support/serverProcess';
import { stopServices } from '../test/support/serviceProcess';
import { CODE_SERVERS, CODE_SERVER_ENV, FLOOR, NEWEST } from '../scripts/code-server-config.cjs';
import { clockOffset, logLineTime, openStagedWindow } from './codeServerWindow';
import { EXTENSION_ID, buildBundles, readManifest, stageExtension, tempRoot } from './extensionStaging';
import { result, type BenchResult } from './measure';
import { followForReplies, sleep } from './replyLatency';
import { waitFor } from '../test/support/wait';

export const title = 'Local session service: event -> poller over its socket vs in-process, idle memory, reload -> ready plan painted';

const SESSIONS = 40;
const MEMORY_SAMPLES = 5;
const RELOADS = 5;
const QUESTION_FILE = path.join(EXAMPLES_DIR, 'question.json');
const QUESTION: AgentLaunch = { kind: 'scripted', file: QUESTION_FILE, label: 'bench' };

function request(i: number) {
  return {
    title: `bench ${i}`,
    events: [setPlanModeEvent(`set-mode-bench-${i}`), userMessageEvent('Plan the build change.')].map((data) => ({
      type: 'event' as const,
      data,
    })),
  };
}

/** Reply latencies (ms) on one backend: every session waits on its question, then gets one reply. */
async function replyLatencies(backend: SessionBackend, launch: AgentLaunch | null): Promise<number[]> {
  const ids: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    ids.push((await backend.createSession(launch ? withAgentLaunch(request(i), launch) : request(i))).id);
  }
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  try {
    const { state, polls } = followForReplies(ids, backend.transport, stop.signal);
    await waitFor(() => state.every((s) => s.ready), { message: 'every session waiting on its question', timeoutMs: 60_000 });
    await Promise.all(
      ids.map(async (sessionId, i) => {
        await sleep(Math.random() * DEFAULT_POLL_INTERVAL_MS);
        state[i]!.sentAt = performance.now();
        await backend.sendEvents(sessionId, [userMessageEvent('Node 20.')]);
      }),
    );
    await waitFor(() => state.every((s) => s.latency >= 0), { message: 'a phase change in every session', timeoutMs: 30_000 });
    stop.abort();
    await Promise.all(polls);
    return state.map((s) => s.latency);
  } finally {
    stop.abort();
  }
}

function benchService(dir: string) {
  return connectOrStartService({
    paths: servicePaths({ env: { [SERVICE_DIR_ENV]: dir } }),
    version: 'bench',
    serverScript: SERVER_JS,
    idleExitSeconds: 0,
  });
}

async function eventToPoller(): Promise<BenchResult[]> {
  ensureServerBuilt();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'up-bench-svc-'));
  const host = await SessionHost.open({ agentFactory: scriptedAgentFactory(await loadScenarioFile(QUESTION_FILE), 'bench') });
  const inProcess = new InProcessBackend({ host });
  try {
    const connection = await benchService(dir);
    const client = new SessionsClient({
      baseUrl: 'http://localhost',
      getToken: async () => connection.token,
      fetch: socketFetch(connection.place.socket),
    });
    const socket = new HttpBackend({ client, preferStream: true, kind: 'embedded' });
    // Alternating halves, so both see the same machine load.
    const viaSocket = [...(await replyLatencies(socket, QUESTION))];
    const inHost = [...(await replyLatencies(inProcess, null))];
    viaSocket.push(...(await replyLatencies(socket, QUESTION)));
    inHost.push(...(await replyLatencies(inProcess, null)));
    await socket.dispose();
    return [
      result('event -> phase, in-process host (before)', 'ms', 'lower', inHost),
      result('event -> phase, service over its Unix socket', 'ms', 'lower', viaSocket, {
        baseline: 'event -> phase, in-process host (before)',
        note: `${SESSIONS * 2} sessions each; reply at a random moment, stream-woken poller`,
      }),
    ];
  } finally {
    await inProcess.dispose();
    await stopServices(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

function rssMiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]) / 1024;
}

async function idleMemory(): Promise<BenchResult[]> {
  ensureServerBuilt();
  const service: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < MEMORY_SAMPLES; i++) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'up-bench-mem-'));
    const node = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
    try {
      const connection = await benchService(dir);
      // Settled: no client (the status request's connection closes), nothing live.
      await sleep(6_000);
      service.push(rssMiB(connection.status.pid));
      bare.push(rssMiB(node.pid!));
    } finally {
      node.kill('SIGKILL');
      await stopServices(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return [
    result('idle memory, bare node process', 'MiB', 'lower', bare),
    result('idle memory, session service (no session, no client)', 'MiB', 'lower', service, { baseline: 'idle memory, bare node process' }),
  ];
}

interface ReloadSample {
  /** activated -> the status bar says "plan ready". */
  statusBar: number;
  /** activated -> the review panel's script started: the workbench has loaded its page. */
  scriptStarted: number;
  /** activated -> the first painted frame showing the plan in the review panel. */
  painted: number;
  /** activated -> its Approve enabled: the decision can be sent. */
  decidable: number;
}

/** From the "activated" log line after a reload to the ready plan on screen, once per reload. */
export async function reloadToPlan(backend: 'embedded' | 'server'): Promise<ReloadSample[]> {
  const root = await tempRoot('up-bench-reload-');
  const server = backend === 'server' ? await startServer({ scenario: path.join(EXAMPLES_DIR, 'approve.json') }) : undefined;
  try {
    const dist = await buildBundles(path.join(root.dir, 'dist-build'), { production: true });
    const staged = await stageExtension(path.join(root.dir, 'ext'), { dist });
    const settings: Record<string, unknown> =
      backend === 'embedded'
        ? {
            'ultraplan.backend': 'embedded',
            'ultraplan.agent.choice': 'demo',
            'ultraplan.embedded.scenario': path.join(EXAMPLES_DIR, 'approve.json'),
          }
        : { 'ultraplan.backend': 'server', 'ultraplan.server.url': server!.url };
    const window = await openStagedWindow({
      suite: `bench-service-reload-${backend}`,
      settings,
      staged: [{ id: EXTENSION_ID, folder: staged, version: readManifest(staged).version }],
    });
    try {
      if (server) {
        await runCommand(window.page, 'Ultraplan: Set Server Token…');
        await answerInputBox(window.page, server.token ?? '');
      }
      await planTask(window.page, 'plan the build change');
      // The browser stores workspace state on its own flush timer; a reload before that would
      // measure a window that never knew the session.
      await waitForStoredWorkspaceState(
        window.page,
        EXTENSION_ID,
        PERSISTED_SESSIONS_KEY,
        (saved) => /"phase":"plan_ready"/.test(JSON.stringify(saved ?? null)),
        'the ready session in the browser storage',
      );
      const samples: ReloadSample[] = [];
      for (let i = 0; i < RELOADS; i++) {
        const before = window.server.probe.announcement();
        const activatedBefore = activatedLines(window.server).length;
        await window.page.reload({ waitUntil: 'domcontentloaded' });
        await window.server.probe.ready(before ? { after: before } : {});
        let statusBar = 0;
        let frame: Frame | undefined;
        const deadline = Date.now() + 60_000;
        for (;;) {
          if (Date.now() > deadline) throw new Error('the plan did not come back after the reload');
          if (!statusBar && (await statusBarTexts(window.page)).some((t) => t.includes('plan ready'))) statusBar = Date.now();
          // A panel the extension opened itself (the workbench kept none) replaces a frame found early.
          if (frame?.isDetached()) frame = undefined;
          frame ??= await findWebviewFrame(window.page, '#app', { timeoutMs: 10 }).catch(() => undefined);
          const approve = frame?.getByRole('button', { name: 'Approve', exact: true });
          if (statusBar && approve && (await approve.isEnabled({ timeout: 10 }).catch(() => false))) break;
          await sleep(10);
        }
        // The panel's own marks (src/webview): when its script started, and the first painted frames
        // that showed the plan and let it be decided, on the page's clock.
        const clock = await clockOffset(frame!);
        const marks = (await frame!.evaluate(`(() => {
          const at = (m) => performance.timeOrigin + m.startTime;
          const painted = performance.getEntriesByName('ultraplan:painted');
          const started = performance.getEntriesByName('ultraplan:started')[0];
          const plan = painted.find((m) => m.detail && m.detail.plan);
          const decidable = painted.find((m) => m.detail && m.detail.decidable);
          return { started: started && at(started), plan: plan && at(plan), decidable: decidable && at(decidable) };
        })()`)) as { started?: number; plan?: number; decidable?: number };
        if (marks.started === undefined || marks.plan === undefined || marks.decidable === undefined) {
          throw new Error(`the panel left no marks of its start, its plan and its decision (${JSON.stringify(marks)})`);
        }
        const activated = logLineTime(await waitForActivated(window.server, activatedBefore));
        const since = (pageTime: number) => pageTime - clock.offset - activated;
        samples.push({
          statusBar: statusBar - activated,
          scriptStarted: since(marks.started),
          painted: since(marks.plan),
          decidable: since(marks.decidable),
        });
      }
      return samples;
    } finally {
      await window.close();
      if (backend === 'embedded') await stopServices(window.server.serviceDir);
    }
  } finally {
    await server?.stop();
    await root.remove();
  }
}

/** Every "Ultraplan … activated" line in the extension's logs, all extension hosts so far. */
function activatedLines(server: CodeServer): string[] {
  const lines: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === 'Ultraplan.log' && full.includes(EXTENSION_ID)) {
        lines.push(
          ...readFileSync(full, 'utf8')
            .split('\n')
            .filter((l) => /\] Ultraplan \S+ activated$/.test(l)),
        );
      }
    }
  };
  walk(path.join(server.userDataDir, 'logs'));
  return lines.sort();
}

async function waitForActivated(server: CodeServer, before: number): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const lines = activatedLines(server);
    if (lines.length > before) return lines[lines.length - 1]!;
    await sleep(10);
  }
  throw new Error('no "activated" log line after the reload');
}

/** Runs `measure` with the harness's windows on code-server `version` (the harness reads it per window). */
async function onCodeServer<T>(version: string, measure: () => Promise<T>): Promise<T> {
  const before = process.env[CODE_SERVER_ENV];
  process.env[CODE_SERVER_ENV] = version;
  try {
    return await measure();
  } finally {
    if (before === undefined) delete process.env[CODE_SERVER_ENV];
    else process.env[CODE_SERVER_ENV] = before;
  }
}

/** The reload measures on one code-server, each beside the server backend's in the same run. */
async function reloadResults(version: string): Promise<BenchResult[]> {
  const server = await onCodeServer(version, () => reloadToPlan('server'));
  const embedded = await onCodeServer(version, () => reloadToPlan('embedded'));
  const on = `VS Code ${CODE_SERVERS[version]?.vscode ?? '?'}`;
  /** One measure on both backends; the server backend's is the local service's baseline. */
  const onBoth = (what: string, pick: (s: ReloadSample) => number, note?: string): BenchResult[] => {
    const baseline = `reload -> ${what}, server backend (TCP), ${on}`;
    return [
      result(baseline, 'ms', 'lower', server.map(pick)),
      result(`reload -> ${what}, embedded (local service), ${on}`, 'ms', 'lower', embedded.map(pick), { baseline, note }),
    ];
  };
  return [
    ...onBoth(
      '"plan ready" in the status bar',
      (s) => s.statusBar,
      `from the extension's "activated" log line; ${RELOADS} reloads each on code-server ${version}`,
    ),
    result(
      `reload -> the panel's script started, embedded, ${on}`,
      'ms',
      'lower',
      embedded.map((s) => s.scriptStarted),
      {
        note: "the webview's page loaded by the workbench, before the panel's script has painted anything",
      },
    ),
    ...onBoth('plan painted in the panel', (s) => s.painted, "the panel's own mark after the frame that showed the plan"),
    ...onBoth('Approve enabled', (s) => s.decidable),
  ];
}

export async function run(): Promise<BenchResult[]> {
  return [...(await eventToPoller()), ...(await idleMemory()), ...(await reloadResults(FLOOR)), ...(await reloadResults(NEWEST))];
}

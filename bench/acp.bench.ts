// From an ACP agent's exit-plan permission request to the poller's "plan ready" (what turns the
// status bar to plan ready), for the same fake ACP agent (a real child process) behind:
//   embedded  SessionHost in this process, InProcessBackend (wakes on host activity) — the baseline
//   server    dist/server.mjs with --agent acp:…, followed over HTTP with the event stream
//   server, polling  the same server, plain polling at the default 3 s interval
// The agent stamps the moment it sends session/request_permission (performance.timeOrigin +
// performance.now(), comparable across processes); the poller's onPhase('plan_ready') is stamped
// the same way. Each sample is a new session (a new agent process) whose request comes after a
// random 0–3 s delay, so polling is not measured at one lucky phase of its interval.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pollForApprovedPlan } from '../src/core/poller';
import { controlResponseEvent, setPlanModeEvent, userMessageEvent } from '../src/core/protocol';
import { createAcpAgentFactory } from '../src/agents/acp/acpAgentFactory';
import type { SessionBackend } from '../src/core/sessionBackend';
import { SessionsClient } from '../src/client/sessionsClient';
import { InProcessBackend } from '../src/service/inProcessBackend';
import { SessionHost } from '../src/service/host/sessionHost';
import { HttpBackend } from '../src/client/httpBackend';
import { startServer } from '../test/support/serverProcess';
import { fakeAgentProgram, readAgentRecord } from '../test/support/fakeAcpAgent';
import { result, type BenchResult } from './measure';
import { exitPlanScenario } from './fakeAgentScenario';
import { watchPhases } from '../test/support/pollPhases';

export const title = 'ACP permission request -> "plan ready": embedded vs server (stream, polling 3 s)';

const SAMPLES = 5;
const now = () => performance.timeOrigin + performance.now();

/** One session: the latency from the agent's request to plan_ready, in ms. */
async function sample(backend: SessionBackend, scenarioFile: string, record: string): Promise<number> {
  await rm(record, { force: true });
  await writeFile(scenarioFile, JSON.stringify(exitPlanScenario(Math.random() * 3000)));
  const session = await backend.createSession({
    title: 'ultraplan: bench',
    events: [
      { type: 'event', data: setPlanModeEvent('set-mode-bench') },
      { type: 'event', data: userMessageEvent('Plan it.') },
    ],
  });
  let readyAt = 0;
  await pollForApprovedPlan({
    sessionId: session.id,
    transport: backend.transport,
    timeoutMs: 60_000,
    ...watchPhases((phase, detail) => {
      if (phase !== 'plan_ready' || !detail.pendingPlan?.requestId || readyAt) return;
      readyAt = now();
      void backend.sendEvents(session.id, [
        controlResponseEvent(detail.pendingPlan.requestId, { behavior: 'allow', updatedInput: { plan: detail.pendingPlan.plan ?? '' } }),
      ]);
    }),
  });
  const sent = readAgentRecord(record).find((entry) => entry.kind === 'permission_request_sent');
  if (!sent) throw new Error('bench: the agent did not record its permission request');
  await backend.archive(session.id);
  return readyAt - (sent.hr as number);
}

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ultraplan-acp-bench-'));
  const scenarioFile = path.join(dir, 'scenario.json');
  const record = path.join(dir, 'record.jsonl');
  const argv = [process.execPath, fakeAgentProgram(), scenarioFile, record];
  const results: BenchResult[] = [];
  try {
    const embedded = new InProcessBackend({ host: new SessionHost({ agentFactory: await createAcpAgentFactory({ argv, cwd: dir }) }) });
    const embeddedSamples: number[] = [];
    for (let i = 0; i < SAMPLES; i++) embeddedSamples.push(await sample(embedded, scenarioFile, record));
    await embedded.dispose();
    results.push(result('embedded', 'ms', 'lower', embeddedSamples, { note: 'SessionHost in process, poller woken by host activity' }));

    const server = await startServer({ agent: `acp:${argv.map((arg) => JSON.stringify(arg)).join(' ')}`, extraArgs: ['--workspace', dir] });
    try {
      const client = new SessionsClient({ baseUrl: server.url, getToken: async () => server.token ?? '' });
      for (const [name, preferStream, note] of [
        ['server, stream', true, 'dist/server.mjs over HTTP, SSE event stream'],
        ['server, polling 3 s', false, 'dist/server.mjs over HTTP, polling at the default interval'],
      ] as const) {
        const backend = new HttpBackend({ client, preferStream });
        const samples: number[] = [];
        for (let i = 0; i < SAMPLES; i++) samples.push(await sample(backend, scenarioFile, record));
        await backend.dispose();
        results.push(result(name, 'ms', 'lower', samples, { baseline: 'embedded', note }));
      }
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return results;
}

// Following sessions over HTTP against the real server process (dist/server.mjs, scripted agent
// examples/question.json), streaming vs polling at the default 3 s interval, in the same run:
//
// 1. Latency from an event appended on the server to the client's phase change. N sessions wait
//    on the agent's question (phase needs_input); each gets one reply at a random moment within
//    one poll interval, and we time from just before the reply is POSTed (the POST appends the
//    user event on the server; its loopback round trip, about a millisecond, is included in both
//    modes) to the poller's next phase report. One sample per session, all sessions followed at
//    once, so polling keeps its honest default interval without a 10-minute sequential run.
// 2. HTTP requests per idle minute per session: the same sessions, all idle, counted at the fault
//    proxy (used here as a pass-through counter) over a 10 s window and scaled to one minute.
// 3. The server's p50/p99 response time while 100 and then 1,000 idle sessions are polled at the
//    default interval, from the server's own per-request log lines over a 9 s window.
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { pollForApprovedPlan, DEFAULT_POLL_INTERVAL_MS } from '../src/core/poller';
import { setPlanModeEvent, userMessageEvent } from '../src/core/protocol';
import { SessionsClient } from '../src/client/sessionsClient';
import { HttpBackend } from '../src/client/httpBackend';
import { startFaultProxy } from '../test/support/faultProxy';
import { EXAMPLES_DIR, startServer, type ServerProcess } from '../test/support/serverProcess';
import { result, type BenchResult } from './measure';
import { followForReplies, sleep } from './replyLatency';
import { waitFor } from '../test/support/wait';

export const title = 'Sessions over HTTP: stream vs polling (3 s), idle request rate, server response time under load';

const LATENCY_SESSIONS = 200;
const IDLE_WINDOW_MS = 10_000;
const LOAD_WINDOW_MS = 9_000;
const LOAD_SIZES = [100, 1_000];

type Mode = 'polling' | 'stream';

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

/** Creates sessions a few at a time (a burst of a thousand POSTs would measure the burst). */
async function createSessions(backend: HttpBackend, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 20) {
    const batch = Array.from({ length: Math.min(20, count - i) }, (_, j) =>
      backend.createSession({
        title: `ultraplan: bench ${i + j}`,
        events: [
          { type: 'event', data: setPlanModeEvent(`set-mode-bench-${i + j}`) },
          { type: 'event', data: userMessageEvent('Plan the build change.') },
        ],
      }),
    );
    ids.push(...(await Promise.all(batch)).map((s) => s.id));
  }
  return ids;
}

interface ModeRun {
  latencies: number[];
  requestsPerIdleMinute: number;
  /** Client-observed p50 of the requests in the idle window (explains a cadence slower than 3 s). */
  idleRequestP50Ms: number;
}

/** fetch that records how long each request took, as the client saw it. */
function timedFetch(durations: number[]): typeof fetch {
  return async (input, init) => {
    const started = performance.now();
    try {
      return await fetch(input, init);
    } finally {
      durations.push(performance.now() - started);
    }
  };
}

async function followMode(server: ServerProcess, mode: Mode): Promise<ModeRun> {
  const proxy = await startFaultProxy({ target: server.url });
  const requestMs: number[] = [];
  const client = new SessionsClient({ baseUrl: proxy.url, getToken: async () => server.token ?? '', fetch: timedFetch(requestMs) });
  const backend = new HttpBackend({ client, preferStream: mode === 'stream' });
  const stop = new AbortController();
  // Every poller listens on this one signal: hundreds of listeners are expected, not a leak.
  setMaxListeners(0, stop.signal);
  try {
    const ids = await createSessions(backend, LATENCY_SESSIONS);
    const { state, polls } = followForReplies(ids, backend.transport, stop.signal);
    await waitFor(() => state.every((s) => s.ready), { message: `${mode}: every session waiting on its question`, timeoutMs: 60_000 });

    // Idle: nobody replies; count what the client sends.
    proxy.resetLog();
    requestMs.length = 0;
    const windowStart = performance.now();
    await sleep(IDLE_WINDOW_MS);
    const windowMs = performance.now() - windowStart;
    const idleRequestP50Ms = requestMs.length > 0 ? percentile(requestMs, 50) : 0;
    const requestsPerIdleMinute = (proxy.requests.length / ids.length) * (60_000 / windowMs);

    // One reply per session, at a random moment within one poll interval.
    await Promise.all(
      ids.map(async (sessionId, i) => {
        await sleep(Math.random() * DEFAULT_POLL_INTERVAL_MS);
        const s = state[i]!;
        s.sentAt = performance.now();
        await backend.sendEvents(sessionId, [userMessageEvent('Node 20.')]);
      }),
    );
    await waitFor(() => state.every((s) => s.latency >= 0), { message: `${mode}: a phase change in every session`, timeoutMs: 30_000 });
    stop.abort();
    await Promise.all(polls);
    return { latencies: state.map((s) => s.latency), requestsPerIdleMinute, idleRequestP50Ms };
  } finally {
    stop.abort();
    await backend.dispose();
    await proxy.close();
  }
}

/** Server-side durations (ms) of the requests it logged after `fromOffset` in its stderr. */
function loggedDurations(server: ServerProcess, fromOffset: number): number[] {
  const durations: number[] = [];
  for (const line of server.stderr().slice(fromOffset).split('\n')) {
    const match = / (GET|POST) \S+ \d{3} ([\d.]+)ms$/.exec(line);
    if (match && match[1] === 'GET') durations.push(Number(match[2]));
  }
  return durations;
}

async function serverUnderLoad(server: ServerProcess, sessions: number): Promise<number[]> {
  const client = new SessionsClient({ baseUrl: server.url, getToken: async () => server.token ?? '' });
  const backend = new HttpBackend({ client, preferStream: false });
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const ids = await createSessions(backend, sessions);
  const polls = ids.map((sessionId) =>
    pollForApprovedPlan({
      sessionId,
      transport: backend.transport,
      pollIntervalMs: DEFAULT_POLL_INTERVAL_MS,
      timeoutMs: 120_000,
      signal: stop.signal,
      maxConsecutiveFailures: 1_000,
    }).catch(() => undefined),
  );
  // One full interval to spread the pollers out, then the measured window.
  await sleep(DEFAULT_POLL_INTERVAL_MS);
  const offset = server.stderr().length;
  await sleep(LOAD_WINDOW_MS);
  const durations = loggedDurations(server, offset);
  stop.abort();
  await Promise.all(polls);
  await backend.dispose();
  return durations;
}

export async function run(): Promise<BenchResult[]> {
  const server = await startServer({ scenario: `${EXAMPLES_DIR}/question.json` });
  try {
    const polling = await followMode(server, 'polling');
    const stream = await followMode(server, 'stream');
    const results: BenchResult[] = [
      result('event->phase p50: polling @3 s', 'ms', 'lower', polling.latencies, {
        note: `${LATENCY_SESSIONS} sessions followed at once, one reply each at a random moment; median/min/max over the ${LATENCY_SESSIONS} samples`,
      }),
      result('event->phase p50: stream', 'ms', 'lower', stream.latencies, { baseline: 'event->phase p50: polling @3 s' }),
      result('event->phase p99: polling @3 s', 'ms', 'lower', [percentile(polling.latencies, 99)]),
      result('event->phase p99: stream', 'ms', 'lower', [percentile(stream.latencies, 99)], { baseline: 'event->phase p99: polling @3 s' }),
      result('requests per idle minute per session: polling @3 s', 'req/min', 'lower', [polling.requestsPerIdleMinute], {
        note:
          `counted at a pass-through proxy over ${IDLE_WINDOW_MS / 1000} s with ${LATENCY_SESSIONS} idle sessions, scaled to 60 s per session. ` +
          `A poll is 2 GETs and the next one starts 3 s after the previous ended, so 40/min is the ceiling; ` +
          `client-observed request p50 in the window: ${polling.idleRequestP50Ms.toFixed(1)} ms (client, proxy and pollers share this process)`,
      }),
      result('requests per idle minute per session: stream', 'req/min', 'lower', [stream.requestsPerIdleMinute], {
        note: 'the one long-lived stream connection per session is not counted again while it stays open',
      }),
    ];
    for (const size of LOAD_SIZES) {
      const durations = await serverUnderLoad(server, size);
      const note = `${durations.length} GETs logged by the server in ${LOAD_WINDOW_MS / 1000} s (its own timing), ${size} sessions polled at 3 s`;
      results.push(result(`server GET p50, ${size} sessions polled`, 'ms', 'lower', [percentile(durations, 50)], { note }));
      results.push(result(`server GET p99, ${size} sessions polled`, 'ms', 'lower', [percentile(durations, 99)]));
    }
    return results;
  } finally {
    await server.stop();
  }
}

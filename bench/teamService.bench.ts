// The team service (issue 20, docs/server.md) under load, real processes only: two
// `ultraplan-server --store postgres://…` replicas on a throwaway PostgreSQL cluster, beside the
// single-process journal server (`--data-dir`) in the same run, every request over HTTP.
// 1. Sessions held: SESSIONS sessions created over HTTP (round robin over the replicas), then
//    STREAMS live event streams open at once (half on each replica; all on the journal's one
//    process); every streamed session gets one more event, which must reach its stream; then the
//    resident set (VmRSS) of each server process.
// 2. Acknowledged events per second: WRITERS clients POST one user message at a time for
//    WRITE_SECONDS, over the replicas in turn; an event counts when answered 200, i.e. committed
//    (PostgreSQL: synchronous_commit on, fsync on; the journal: fsync per append).
// 3. Stream latency across replicas: events appended on replica A, timed from just before the
//    POST to their arrival on streams opened on replica B (the journal: the same process).
// Scale by environment: BENCH_TEAM_SESSIONS, BENCH_TEAM_STREAMS, BENCH_TEAM_WRITERS,
// BENCH_TEAM_WRITE_SECONDS, BENCH_TEAM_LATENCY_EVENTS.
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { startPostgresCluster, type PostgresCluster } from '../test/support/postgresCluster';
import type { ServerProcess } from '../test/support/serverProcess';
import { result, type BenchResult } from './measure';
import {
  FollowedStream,
  appendEvent,
  createSessions,
  envNumber,
  inParallel,
  noteEvent,
  percentile,
  progress,
  rssMiB,
  sleep,
  startJournal,
  startReplica,
  waitFor,
} from './teamServiceKit';

export const title = 'Team service: 2 PostgreSQL replicas vs the single-process journal (sessions held, events/s, stream latency)';

const SESSIONS = envNumber('BENCH_TEAM_SESSIONS', 10_000);
const STREAMS = Math.min(SESSIONS, envNumber('BENCH_TEAM_STREAMS', 2_000));
const WRITERS = envNumber('BENCH_TEAM_WRITERS', 32);
const WRITE_SECONDS = envNumber('BENCH_TEAM_WRITE_SECONDS', 5);
const LATENCY_EVENTS = envNumber('BENCH_TEAM_LATENCY_EVENTS', 400);
const RUNS = 3;
const RSS_SAMPLES = 5;
const LIMIT_ARGS = ['--max-sessions', String(SESSIONS + 1_000), '--max-streams', String(STREAMS + 100)];

interface Deployment {
  label: string;
  /** Where requests go, in turn: two replicas, or the one journal process. */
  servers: ServerProcess[];
  stop(): Promise<void>;
}

async function journalDeployment(): Promise<Deployment> {
  const server = await startJournal(LIMIT_ARGS);
  return { label: 'journal', servers: [server], stop: async () => void (await server.stop()) };
}

async function postgresDeployment(cluster: PostgresCluster): Promise<Deployment> {
  const database = await cluster.createDatabase();
  const token = randomBytes(24).toString('hex');
  const servers = [await startReplica(database, token, LIMIT_ARGS), await startReplica(database, token, LIMIT_ARGS)];
  return { label: 'PostgreSQL', servers, stop: async () => void (await Promise.all(servers.map((s) => s.stop()))) };
}

interface Held {
  createRate: number;
  rss: number[][];
  probed: number;
  openSeconds: number;
}

async function holdSessions(deployment: Deployment): Promise<Held> {
  const { servers } = deployment;
  const createStarted = performance.now();
  progress(`${deployment.label}: creating ${SESSIONS} sessions`);
  const ids = await createSessions(servers, SESSIONS);
  progress(`${deployment.label}: opening ${STREAMS} streams`);
  const createRate = SESSIONS / ((performance.now() - createStarted) / 1000);
  const streams = ids.slice(0, STREAMS).map((id) => new FollowedStream(id));
  try {
    const openStarted = performance.now();
    await inParallel(streams.length, 50, (i) => streams[i]!.open(servers[i % servers.length]!));
    if (!(await waitFor(() => streams.every((s) => s.received.length >= 2), 120_000))) {
      throw new Error(`${deployment.label}: not every stream delivered its session's first events within 120 s`);
    }
    const openSeconds = (performance.now() - openStarted) / 1000;
    // Every stream is live: one more event for each session, sent to the other replica.
    await inParallel(streams.length, 16, (i) => appendEvent(servers[(i + 1) % servers.length]!, streams[i]!.sessionId, noteEvent('probe')));
    await waitFor(() => streams.every((s) => s.received.length >= 3), 60_000);
    const probed = streams.filter((s) => s.received.length >= 3).length;
    await sleep(2_000);
    const rss: number[][] = servers.map(() => []);
    for (let i = 0; i < RSS_SAMPLES; i++) {
      servers.forEach((server, n) => rss[n]!.push(rssMiB(server.pid)));
      await sleep(1_000);
    }
    return { createRate, rss, probed, openSeconds };
  } finally {
    for (const stream of streams) stream.close();
  }
}

/** Acknowledged events per second over WRITE_SECONDS, WRITERS clients each one POST at a time. */
async function writeRate(deployment: Deployment, ids: readonly string[]): Promise<{ rate: number; refused: number }> {
  const { servers } = deployment;
  const deadline = performance.now() + WRITE_SECONDS * 1000;
  let acknowledged = 0;
  let refused = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      for (let k = 0; performance.now() < deadline; k++) {
        const id = ids[(writer + k * WRITERS) % ids.length]!;
        if ((await appendEvent(servers[(writer + k) % servers.length]!, id, noteEvent(`note ${k}`))) !== null) acknowledged++;
        else refused++;
      }
    }),
  );
  return { rate: acknowledged / WRITE_SECONDS, refused };
}

/** Latencies (ms) of LATENCY_EVENTS events appended on servers[0] and streamed from the last server. */
async function streamLatencies(deployment: Deployment, ids: readonly string[]): Promise<{ p50: number; p99: number; missing: number }> {
  const { servers } = deployment;
  const sent = new Map<string, number>();
  const latencies: number[] = [];
  const streams = ids.map(
    (id) =>
      new FollowedStream(id, (event, at) => {
        const uuid = event.data.uuid;
        const sentAt = uuid === undefined ? undefined : sent.get(uuid);
        if (sentAt !== undefined) latencies.push(at - sentAt);
      }),
  );
  try {
    await Promise.all(streams.map((s) => s.open(servers[servers.length - 1]!)));
    await sleep(500);
    // Four clients, each sending its next event 5-25 ms after the previous was answered.
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < LATENCY_EVENTS) {
          const i = next++;
          const event = noteEvent(`timed ${i}`);
          sent.set(event.uuid as string, performance.now());
          await appendEvent(servers[0]!, ids[i % ids.length]!, event);
          await sleep(5 + Math.random() * 20);
        }
      }),
    );
    await waitFor(() => latencies.length >= LATENCY_EVENTS, 10_000);
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), missing: LATENCY_EVENTS - latencies.length };
  } finally {
    for (const stream of streams) stream.close();
  }
}

export async function run(): Promise<BenchResult[]> {
  const loadAtStart = os.loadavg()[0]!.toFixed(1);
  const cluster = await startPostgresCluster();
  try {
    // 1. Sessions held, one deployment at a time (each alone on the machine).
    const journal = await journalDeployment();
    const journalHeld = await holdSessions(journal).finally(() => journal.stop());
    const postgres = await postgresDeployment(cluster);
    const postgresHeld = await holdSessions(postgres).finally(() => postgres.stop());

    // 2 and 3: both deployments up, measured in alternation so they see the same machine.
    const deployments = [await journalDeployment(), await postgresDeployment(cluster)];
    try {
      const writeIds = await Promise.all(deployments.map((d) => createSessions(d.servers, 64)));
      const latencyIds = await Promise.all(deployments.map((d) => createSessions(d.servers, 20)));
      const rates: number[][] = [[], []];
      const refused = [0, 0];
      const p50s: number[][] = [[], []];
      const p99s: number[][] = [[], []];
      const missing = [0, 0];
      for (let r = 0; r < RUNS; r++) {
        progress(`events/s and stream latency, run ${r + 1}`);
        for (const n of r % 2 === 0 ? [0, 1] : [1, 0]) {
          const written = await writeRate(deployments[n]!, writeIds[n]!);
          rates[n]!.push(written.rate);
          refused[n]! += written.refused;
          const latency = await streamLatencies(deployments[n]!, latencyIds[n]!);
          p50s[n]!.push(latency.p50);
          p99s[n]!.push(latency.p99);
          missing[n]! += latency.missing;
        }
      }
      const load = `machine load (1-min average) ${loadAtStart} at start, ${os.loadavg()[0]!.toFixed(1)} at end, on ${os.cpus().length} cores`;
      const heldNote = (h: Held, where: string) =>
        `${SESSIONS} sessions created over HTTP at ${h.createRate.toFixed(0)}/s; ${STREAMS} streams ${where} opened and delivering in ${h.openSeconds.toFixed(1)} s; ${h.probed}/${STREAMS} streams received a new event`;
      return [
        result('held: journal, RSS of its one process', 'MiB', 'lower', journalHeld.rss[0]!, {
          note: `${heldNote(journalHeld, 'on the one process')}; ${load}`,
        }),
        result('held: PostgreSQL, RSS of replica A', 'MiB', 'lower', postgresHeld.rss[0]!, {
          baseline: 'held: journal, RSS of its one process',
          note: heldNote(postgresHeld, 'half on each replica'),
        }),
        result('held: PostgreSQL, RSS of replica B', 'MiB', 'lower', postgresHeld.rss[1]!, {
          baseline: 'held: journal, RSS of its one process',
        }),
        result('create sessions over HTTP: journal', 'sessions/s', 'higher', [journalHeld.createRate]),
        result('create sessions over HTTP: PostgreSQL, 2 replicas', 'sessions/s', 'higher', [postgresHeld.createRate], {
          baseline: 'create sessions over HTTP: journal',
        }),
        result('acknowledged events/s: journal (fsync)', 'events/s', 'higher', rates[0]!, {
          note: `${WRITERS} clients, one event per POST, ${WRITE_SECONDS} s a run; ${refused[0]} refused`,
        }),
        result('acknowledged events/s: PostgreSQL, 2 replicas', 'events/s', 'higher', rates[1]!, {
          baseline: 'acknowledged events/s: journal (fsync)',
          note: `the same clients over both replicas; synchronous commit; ${refused[1]} refused`,
        }),
        result('stream latency p99: journal, one process', 'ms', 'lower', p99s[0]!, {
          note: `${LATENCY_EVENTS} events a run over 20 sessions, from before the POST to the stream; ${missing[0]} not received`,
        }),
        result('stream latency p99: PostgreSQL, append on A, stream on B', 'ms', 'lower', p99s[1]!, {
          baseline: 'stream latency p99: journal, one process',
          note: `woken by NOTIFY after commit; ${missing[1]} not received`,
        }),
        result('stream latency p50: journal, one process', 'ms', 'lower', p50s[0]!),
        result('stream latency p50: PostgreSQL, append on A, stream on B', 'ms', 'lower', p50s[1]!, {
          baseline: 'stream latency p50: journal, one process',
        }),
      ];
    } finally {
      await Promise.all(deployments.map((d) => d.stop()));
    }
  } finally {
    await cluster.destroy();
  }
}

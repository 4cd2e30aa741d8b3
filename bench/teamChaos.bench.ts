// The team service's chaos runs, timed, with real processes only (issue 20, docs/server.md):
// 1. Failover: FAILOVER_STREAMS clients stream from replica A while writers keep appending through
//    replica B; A is killed with SIGKILL and every client resumes on B from Last-Event-ID; timed
//    from the kill to each resumed stream's answer. A new replica takes A's place and the next run
//    kills B. Beside it, the journal: its one process killed and started again on the same data
//    directory (there is nowhere else to resume), its clients resuming on the new process.
// 2. PostgreSQL killed (SIGKILL) and restarted in the middle of that load: the longest pause in
//    acknowledged writes.
// 3. After all of it: acknowledged events lost, gaps and duplicates, on every stream (each read
//    from the start, across every resume) and in the store. Writers retry an event with the same
//    uuid until it is acknowledged, as a client does, so a retry must never store it twice.
// 4. A worker killed (SIGKILL) mid-turn: time until another worker claims the session after the
//    lease and the agent's next step reaches the stream. The agent is the server's scripted agent
//    (`scripted:` in the worker), which resumes from its checkpoint: what is timed is the lease
//    takeover, not a model.
// Scale by environment: BENCH_TEAM_FAILOVER_STREAMS, BENCH_TEAM_LEASE_MS.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startPostgresCluster, type PostgresCluster } from '../test/support/postgresCluster';
import { startWorker, tempDir, type ServerProcess, type WorkerProcess } from '../test/support/serverProcess';
import { result, type BenchResult } from './measure';
import {
  FollowedStream,
  appendEvent,
  createSessions,
  envNumber,
  ledgerOf,
  noteEvent,
  percentile,
  progress,
  seqOfId,
  sleep,
  startJournal,
  startReplica,
  sumLedgers,
  waitFor,
  type Ledger,
} from './teamServiceKit';

export const title = 'Team service chaos: replica and journal SIGKILL, PostgreSQL restart, worker SIGKILL; loss, gaps, duplicates';

const FAILOVER_STREAMS = envNumber('BENCH_TEAM_FAILOVER_STREAMS', 500);
const LEASE_MS = envNumber('BENCH_TEAM_LEASE_MS', 3_000);
const WRITERS = 8;
const RUNS = 3;

/** Where clients go: the process a test kills next, and the one that stays. */
interface Place {
  target(): ServerProcess;
}

/** Writers appending to random sessions through `place`, each event retried (same uuid) until acknowledged. */
class Writers {
  readonly acknowledged = new Map<string, Set<number>>();
  readonly ackTimes: number[] = [];
  retries = 0;
  private stopped = false;
  private readonly done: Promise<void[]>;

  constructor(
    private readonly ids: readonly string[],
    private readonly place: Place,
  ) {
    for (const id of ids) this.acknowledged.set(id, new Set());
    this.done = Promise.all(Array.from({ length: WRITERS }, () => this.write()));
  }

  private async write(): Promise<void> {
    for (let k = 0; !this.stopped; k++) {
      const id = this.ids[Math.floor(Math.random() * this.ids.length)]!;
      const event = noteEvent(`chaos ${k}`);
      // Given up when the run ends or after a minute: never acknowledged, so never counted.
      for (let attempt = 0; attempt < 600 && !this.stopped; attempt++) {
        const stored = await appendEvent(this.place.target(), id, event);
        if (stored !== null) {
          this.acknowledged.get(id)!.add(seqOfId(stored));
          this.ackTimes.push(performance.now());
          break;
        }
        this.retries++;
        await sleep(100);
      }
      await sleep(20);
    }
  }

  /** The longest pause between two acknowledgements after `from`. */
  longestPauseAfter(from: number): number {
    const times = this.ackTimes.filter((t) => t >= from - 5_000).sort((a, b) => a - b);
    let longest = 0;
    for (let i = 1; i < times.length; i++) longest = Math.max(longest, times[i]! - times[i - 1]!);
    return longest;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

interface Chaos {
  /** Per run: p99 (ms) from the kill to each stream answering again. */
  resumeP99: number[];
  resumeMedian: number[];
  streamLedger: Ledger;
  storeLost: number;
  acknowledged: number;
  retries: number;
  /** PostgreSQL only: the longest pause in acknowledged writes around its restart. */
  databasePauseMs?: number;
}

/** Every acknowledged event of every session is in the store: counts those that are not. */
async function lostFromStore(server: ServerProcess, writers: Writers): Promise<number> {
  let lost = 0;
  for (const [id, acknowledged] of writers.acknowledged) {
    const stored = new Set<number>();
    for (let cursor: string | null = null, more = true; more;) {
      const query: string = cursor ? `?limit=1000&after_id=${cursor}` : '?limit=1000';
      const response = await fetch(`${server.url}/v1/sessions/${id}/events${query}`, { headers: server.headers() });
      const page = (await response.json()) as { data: Array<{ id: string }>; has_more: boolean; last_id: string | null };
      for (const event of page.data) stored.add(seqOfId(event.id));
      cursor = page.last_id;
      more = page.has_more;
    }
    for (const n of acknowledged) if (!stored.has(n)) lost++;
  }
  return lost;
}

async function settle(streams: readonly FollowedStream[], writers: Writers): Promise<void> {
  const highest = (id: string) => Math.max(0, ...writers.acknowledged.get(id)!);
  await waitFor(() => streams.every((s) => Math.max(0, ...s.received) >= highest(s.sessionId)), 30_000);
}

/**
 * RUNS failovers of the streams: `kill()` kills the process they are on (and, for the journal,
 * starts it again), and each stream resumes where its `resume` points; then `replace()` readies
 * the next run. Per run, the p99 and median (ms) from the kill to each stream answering again.
 */
async function failovers(
  label: string,
  streams: readonly FollowedStream[],
  kill: () => Promise<void>,
  replace: () => Promise<void> = async () => {},
): Promise<Pick<Chaos, 'resumeP99' | 'resumeMedian'>> {
  const resumeP99: number[] = [];
  const resumeMedian: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    await sleep(1_000);
    for (const s of streams) s.resetFailover();
    const killedAt = performance.now();
    await kill();
    progress(`${label}: failover ${r + 1}, killed`);
    if (!(await waitFor(() => streams.every((s) => s.resumedAt !== null), 60_000))) {
      throw new Error(`${label}: ${streams.filter((s) => s.resumedAt === null).length} streams did not resume within 60 s`);
    }
    const times = streams.map((s) => s.resumedAt! - killedAt);
    resumeP99.push(percentile(times, 99));
    resumeMedian.push(percentile(times, 50));
    await replace();
  }
  return { resumeP99, resumeMedian };
}

/** Stops the writers, lets the streams catch up, and counts what is missing or doubled. */
async function ledgerAfter(
  streams: readonly FollowedStream[],
  writers: Writers,
  server: ServerProcess,
): Promise<Pick<Chaos, 'streamLedger' | 'storeLost' | 'acknowledged' | 'retries'>> {
  await writers.stop();
  await settle(streams, writers);
  return {
    streamLedger: sumLedgers(streams.map((s) => ledgerOf(s, writers.acknowledged.get(s.sessionId)!))),
    storeLost: await lostFromStore(server, writers),
    acknowledged: [...writers.acknowledged.values()].reduce((n, set) => n + set.size, 0),
    retries: writers.retries,
  };
}

async function postgresChaos(cluster: PostgresCluster): Promise<Chaos> {
  const database = await cluster.createDatabase();
  const token = randomBytes(24).toString('hex');
  const args = ['--max-streams', String(FAILOVER_STREAMS + 100)];
  const replicas = [await startReplica(database, token, args), await startReplica(database, token, args)];
  // replicas[0] holds the streams and is killed next; replicas[1] takes the writes and the resumes.
  const standby: Place = { target: () => replicas[1]! };
  const ids = await createSessions(replicas, FAILOVER_STREAMS);
  const streams = ids.map((id) => new FollowedStream(id, () => {}, standby.target));
  const writers = new Writers(ids, standby);
  try {
    await Promise.all(streams.map((s) => s.open(replicas[0]!)));
    const resumed = await failovers(
      'PostgreSQL',
      streams,
      () => replicas[0]!.kill(),
      async () => {
        // The survivor now holds the streams; a fresh replica takes the writes and the next resumes.
        replicas[0] = replicas[1]!;
        replicas[1] = await startReplica(database, token, args);
      },
    );
    await sleep(1_000);
    const restartFrom = performance.now();
    await cluster.restart({ crash: true });
    progress('PostgreSQL killed and restarted');
    await sleep(3_000);
    const databasePauseMs = writers.longestPauseAfter(restartFrom);
    return { ...resumed, ...(await ledgerAfter(streams, writers, replicas[1]!)), databasePauseMs };
  } finally {
    await writers.stop();
    for (const s of streams) s.close();
    await Promise.all(replicas.map((r) => r.stop()));
  }
}

async function journalChaos(): Promise<Chaos> {
  const args = ['--max-streams', String(FAILOVER_STREAMS + 100)];
  let server = await startJournal(args);
  const dataDir = server.dataDir;
  const current: Place = { target: () => server };
  const ids = await createSessions([server], FAILOVER_STREAMS);
  const streams = ids.map((id) => new FollowedStream(id, () => {}, current.target));
  const writers = new Writers(ids, current);
  try {
    await Promise.all(streams.map((s) => s.open(server)));
    // One process: its clients can only resume once it is started again on its data directory.
    const resumed = await failovers('journal', streams, async () => {
      await server.kill();
      server = await startJournal(args, dataDir);
    });
    return { ...resumed, ...(await ledgerAfter(streams, writers, server)) };
  } finally {
    await writers.stop();
    for (const s of streams) s.close();
    await server.stop();
  }
}

const STEPS = 40;

/** The agent's script: a step said every 150 ms, then a plan. */
function stepsScenarioFile(): string {
  const file = path.join(tempDir('ultraplan-bench-team-'), 'steps.json');
  const steps = Array.from({ length: STEPS }, (_, i) => [{ say: `Step ${i + 1}.` }, { sleep: 150 }]).flat();
  writeFileSync(file, JSON.stringify({ title: 'Steps (bench)', steps: [...steps, { plan: '# Plan\n\n1. Done.\n' }] }));
  return file;
}

function stepOf(event: { data: { type?: string; message?: { content?: unknown } } }): number | undefined {
  if (event.data.type !== 'assistant') return undefined;
  const match = /Step (\d+)\./.exec(JSON.stringify(event.data.message?.content ?? ''));
  return match ? Number(match[1]) : undefined;
}

interface WorkerTakeover {
  claimMs: number[];
  nextStepMs: number[];
  repeated: number;
  skipped: number;
}

async function workerTakeovers(cluster: PostgresCluster): Promise<WorkerTakeover> {
  const database = await cluster.createDatabase();
  const token = randomBytes(24).toString('hex');
  const replica = await startReplica(database, token);
  const agent = `scripted:${stepsScenarioFile()}`;
  const newWorker = (n: number) => startWorker({ store: database, agent, leaseMs: LEASE_MS, workerId: `bench_worker_${n}` });
  let started = 0;
  const workers: WorkerProcess[] = [await newWorker(started++), await newWorker(started++)];
  const out: WorkerTakeover = { claimMs: [], nextStepMs: [], repeated: 0, skipped: 0 };
  try {
    for (let r = 0; r < RUNS; r++) {
      const [id] = await createSessions([replica], 1);
      const steps: Array<{ step: number; at: number }> = [];
      const stream = new FollowedStream(id!, (event, at) => {
        const step = stepOf(event);
        if (step !== undefined) steps.push({ step, at });
      });
      await stream.open(replica);
      try {
        if (!(await waitFor(() => steps.length >= 3, 30_000))) throw new Error('the agent did not say three steps within 30 s');
        const holder = workers.findIndex((w) => w.stderr().includes(`claimed session ${id}`));
        if (holder < 0) throw new Error(`no worker claimed session ${id}`);
        const other = workers[1 - holder]!;
        const killedAt = performance.now();
        await workers[holder]!.kill();
        progress(`worker takeover ${r + 1}: worker killed`);
        const heardBefore = steps.length;
        let claimedAt = 0;
        await waitFor(() => {
          if (claimedAt === 0 && other.stderr().includes(`claimed session ${id}`)) claimedAt = performance.now();
          return claimedAt > 0;
        }, LEASE_MS + 30_000);
        if (claimedAt === 0) throw new Error(`no other worker claimed session ${id}:\n${other.stderr()}`);
        // Steps the dead worker committed before its kill may still be on their way: the
        // continuation is the first step to arrive after the other worker's claim.
        const countAtClaim = Math.max(heardBefore, steps.filter((s) => s.at <= claimedAt).length);
        if (!(await waitFor(() => steps.length > countAtClaim, 30_000))) throw new Error('the session did not go on after the takeover');
        out.claimMs.push(claimedAt - killedAt);
        out.nextStepMs.push(steps[countAtClaim]!.at - killedAt);
        await waitFor(() => steps.some((s) => s.step === STEPS), 30_000);
        const said = steps.map((s) => s.step);
        out.repeated += said.length - new Set(said).size;
        for (let n = 1; n <= STEPS; n++) if (!said.includes(n)) out.skipped++;
        workers[holder] = await newWorker(started++);
      } finally {
        stream.close();
      }
    }
    return out;
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await replica.stop();
  }
}

export async function run(): Promise<BenchResult[]> {
  const loadAtStart = os.loadavg()[0]!.toFixed(1);
  const cluster = await startPostgresCluster();
  try {
    progress('journal: failover runs');
    const journal = await journalChaos();
    progress('PostgreSQL: failover runs, then a database restart');
    const postgres = await postgresChaos(cluster);
    progress('PostgreSQL: worker takeovers');
    const takeover = await workerTakeovers(cluster);
    const load = `machine load (1-min average) ${loadAtStart} at start, ${os.loadavg()[0]!.toFixed(1)} at end, on ${os.cpus().length} cores`;
    const ledgerNote = (c: Chaos) =>
      `${c.acknowledged} events acknowledged by ${WRITERS} writers (${c.retries} retried POSTs); store: ${c.storeLost} lost; streams: ${c.streamLedger.lost} lost, ${c.streamLedger.gaps} gaps, ${c.streamLedger.duplicates} duplicates`;
    const ledger = (name: string, c: Chaos, extra: { baseline?: string; note?: string } = {}) => [
      result(`${name}: acknowledged events lost`, 'events', 'lower', [c.streamLedger.lost + c.storeLost], extra),
      result(`${name}: gaps on streams`, 'events', 'lower', [c.streamLedger.gaps]),
      result(`${name}: duplicates on streams`, 'events', 'lower', [c.streamLedger.duplicates]),
    ];
    return [
      result('stream resume p99: journal, its process killed and restarted', 'ms', 'lower', journal.resumeP99, {
        note: `${FAILOVER_STREAMS} streams, SIGKILL, the same data dir restarted, clients resume by Last-Event-ID; ${load}`,
      }),
      result('stream resume p99: PostgreSQL, replica killed, resumed on the other', 'ms', 'lower', postgres.resumeP99, {
        baseline: 'stream resume p99: journal, its process killed and restarted',
        note: `${FAILOVER_STREAMS} streams on the killed replica, writers on the other`,
      }),
      result('stream resume median: journal', 'ms', 'lower', journal.resumeMedian),
      result('stream resume median: PostgreSQL', 'ms', 'lower', postgres.resumeMedian, { baseline: 'stream resume median: journal' }),
      result('PostgreSQL SIGKILL + restart under load: longest pause in acknowledged writes', 'ms', 'lower', [postgres.databasePauseMs!], {
        note: 'writers retry every 100 ms; the replicas reconnect on their own',
      }),
      ...ledger('after chaos, journal', journal, { note: ledgerNote(journal) }),
      ...ledger('after chaos, PostgreSQL', postgres, { note: ledgerNote(postgres) }),
      result('worker SIGKILL mid-turn: another worker claims the session', 'ms', 'lower', takeover.claimMs, {
        note: `lease ${LEASE_MS} ms; goal: the session goes on within lease + 2 s`,
      }),
      result('worker SIGKILL mid-turn: the next agent step reaches the stream', 'ms', 'lower', takeover.nextStepMs, {
        note: `scripted agent resumed from its checkpoint, a step every 150 ms; steps repeated ${takeover.repeated}, skipped ${takeover.skipped}`,
      }),
    ];
  } finally {
    await cluster.destroy();
  }
}

// Shared parts of the team-service benches (teamService.bench.ts, teamChaos.bench.ts): real
// ultraplan-server processes (the journal, or PostgreSQL replicas) driven over plain HTTP, event
// streams followed with node:http so thousands can be open from this one process, and a ledger
// per stream that counts what was acknowledged against what arrived.
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createParser } from 'eventsource-parser';
import { setPlanModeEvent, userMessageEvent } from '../src/core/protocol';
import { startServer, tempDir, type ServerProcess } from '../test/support/serverProcess';

/** A number from the environment (scale knobs of these benches), else the default. */
export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return value;
}

/** A progress line on stderr (these runs take minutes). */
export function progress(line: string): void {
  process.stderr.write(`  ${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident set of a process (VmRSS), in MiB. */
export function rssMiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) / 1024;
}

/** The p-th percentile (0..100) by nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error('percentile of no values');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Runs `work(i)` for i in [0, count) with at most `concurrency` at once; results in order. */
export async function inParallel<T>(count: number, concurrency: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      out[i] = await work(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return out;
}

/**
 * A scripted agent that stays at work for ten minutes and says nothing: a journal session then
 * holds what a PostgreSQL session without a worker holds (its creation events, status running),
 * and a user message stays in the log only, so both stores store the same events.
 */
export function quietScenarioFile(): string {
  const file = path.join(tempDir('ultraplan-bench-team-'), 'quiet.json');
  writeFileSync(file, JSON.stringify({ title: 'Quiet (bench)', steps: [{ sleep: 600_000 }] }));
  return file;
}

/** The journal server; `dataDir`: start again on the sessions of one that died. */
export function startJournal(extraArgs: string[] = [], dataDir?: string): Promise<ServerProcess> {
  return startServer({ scenario: quietScenarioFile(), extraArgs, startTimeoutMs: 120_000, ...(dataDir ? { dataDir } : {}) });
}

export function startReplica(database: string, token: string, extraArgs: string[] = []): Promise<ServerProcess> {
  return startServer({ store: database, token, extraArgs, startTimeoutMs: 60_000 });
}

/** Event number of an id `e_000000000012` (12). */
export function seqOfId(id: string): number {
  const match = /^e_(\d+)$/.exec(id);
  if (!match) throw new Error(`not an event id: ${id}`);
  return Number(match[1]);
}

export async function createSession(server: ServerProcess, n: number): Promise<string> {
  const response = await fetch(`${server.url}/v1/sessions`, {
    method: 'POST',
    headers: server.headers(),
    body: JSON.stringify({
      title: `bench ${n}`,
      events: [setPlanModeEvent(`set-mode-bench-${n}`), userMessageEvent('Plan the build change.')].map((data) => ({
        type: 'event',
        data,
      })),
    }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`creating a session failed: HTTP ${response.status} ${text}`);
  return (JSON.parse(text) as { id: string }).id;
}

/** Creates `count` sessions over HTTP, round robin over `servers`. */
export function createSessions(servers: readonly ServerProcess[], count: number, concurrency = 16): Promise<string[]> {
  return inParallel(count, concurrency, (i) => createSession(servers[i % servers.length]!, i));
}

/** A user message with its own uuid (the idempotency key of a retried POST). */
export function noteEvent(text: string, uuid: string = randomUUID()): Record<string, unknown> {
  return { ...userMessageEvent(text), uuid };
}

/**
 * POSTs one event; resolves with its stored id when acknowledged (HTTP 200), else null (a
 * refusal, a 503, a connection cut). An acknowledged event is one the store says it committed.
 */
export async function appendEvent(server: ServerProcess, sessionId: string, event: Record<string, unknown>): Promise<string | null> {
  try {
    const response = await fetch(`${server.url}/v1/sessions/${sessionId}/events`, {
      method: 'POST',
      headers: server.headers(),
      body: JSON.stringify({ events: [event] }),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    if (response.status !== 200) return null;
    return (JSON.parse(text) as { data: Array<{ id: string }> }).data[0]!.id;
  } catch {
    return null;
  }
}

export interface StreamEvent {
  id: string;
  data: { uuid?: string; type?: string; message?: { content?: unknown } };
}

/**
 * One client's event stream of one session, over node:http (one socket each). It remembers
 * every event number it received, across reconnects, so gaps and duplicates can be counted; when
 * `resume` is set and the connection is lost, it reconnects at once to the server `resume`
 * names, with Last-Event-ID, and records when that stream answered.
 */
export class FollowedStream {
  readonly received: number[] = [];
  lastId: string | null = null;
  /** performance.now() when the connection was lost, and when a resumed stream answered 200. */
  lostAt: number | null = null;
  resumedAt: number | null = null;
  resumeFailures = 0;
  private request: http.ClientRequest | null = null;
  private closed = false;

  constructor(
    readonly sessionId: string,
    private readonly onEvent: (event: StreamEvent, at: number) => void = () => {},
    private readonly resume?: () => ServerProcess,
  ) {}

  /** Connects; resolves when the stream answered 200 (rejects otherwise). */
  open(server: ServerProcess): Promise<void> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...server.headers(), accept: 'text/event-stream' };
      if (this.lastId !== null) headers['last-event-id'] = this.lastId;
      const parser = createParser({
        onEvent: (message) => {
          if (message.event === 'status' || message.id === undefined) return;
          this.lastId = message.id;
          this.received.push(seqOfId(message.id));
          this.onEvent({ id: message.id, data: JSON.parse(message.data) as StreamEvent['data'] }, performance.now());
        },
      });
      let answered = false;
      const lost = () => {
        if (this.request !== request) return;
        this.request = null;
        if (!answered) reject(new Error(`stream of ${this.sessionId}: the connection failed before an answer`));
        if (this.closed) return;
        this.lostAt ??= performance.now();
        // Only a stream that was up starts resuming; a failed attempt is retried by reconnect().
        if (answered && this.resume) void this.reconnect();
      };
      const request = http.get(`${server.url}/v1/sessions/${this.sessionId}/events/stream`, { headers, agent: false }, (res) => {
        answered = true;
        if (res.statusCode !== 200) {
          res.resume();
          this.request = null;
          const internal = server
            .stderr()
            .split('\n')
            .filter((line) => line.startsWith('internal error'));
          reject(
            new Error(
              `stream of ${this.sessionId}: HTTP ${res.statusCode}${internal.length ? `; the server said:\n${internal.join('\n')}` : ''}`,
            ),
          );
          return;
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => parser.feed(chunk));
        res.on('close', lost);
        resolve();
      });
      request.on('error', lost);
      this.request = request;
    });
  }

  private async reconnect(): Promise<void> {
    const deadline = performance.now() + 60_000;
    while (!this.closed && performance.now() < deadline) {
      try {
        await this.open(this.resume!());
        this.resumedAt = performance.now();
        return;
      } catch {
        this.resumeFailures++;
        await sleep(50);
      }
    }
  }

  /** Forgets a past loss (before the next failover). */
  resetFailover(): void {
    this.lostAt = null;
    this.resumedAt = null;
  }

  close(): void {
    this.closed = true;
    this.request?.destroy();
    this.request = null;
  }
}

/** Events lost, gaps and duplicates of one stream, against the ids its session acknowledged. */
export interface Ledger {
  lost: number;
  gaps: number;
  duplicates: number;
}

/** `acknowledged`: numbers of the events the store answered 200 for. The stream read from the start. */
export function ledgerOf(stream: FollowedStream, acknowledged: Iterable<number>): Ledger {
  const seen = new Set(stream.received);
  let gaps = 0;
  const highest = Math.max(0, ...stream.received);
  for (let n = 1; n <= highest; n++) if (!seen.has(n)) gaps++;
  let lost = 0;
  for (const n of acknowledged) if (!seen.has(n)) lost++;
  return { lost, gaps, duplicates: stream.received.length - seen.size };
}

export function sumLedgers(ledgers: readonly Ledger[]): Ledger {
  return ledgers.reduce((a, b) => ({ lost: a.lost + b.lost, gaps: a.gaps + b.gaps, duplicates: a.duplicates + b.duplicates }), {
    lost: 0,
    gaps: 0,
    duplicates: 0,
  });
}

/** Waits until `done()` or the deadline; returns whether it was done. */
export async function waitFor(done: () => boolean, timeoutMs: number, stepMs = 25): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await sleep(stepMs);
  }
  return true;
}

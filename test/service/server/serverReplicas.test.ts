// Replicas: several real ultraplan-server processes on one real PostgreSQL database serve any
// session. Reads, cursor paging and streams work on whichever replica a client reaches; a stream
// cut by a replica's SIGKILL resumes on another from Last-Event-ID with no gap and no duplicate;
// a restart of PostgreSQL loses nothing acknowledged; identical decisions sent at once to
// different replicas count once.
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createParser } from 'eventsource-parser';
import { Client } from 'pg';
import { controlResponseEvent, userMessageEvent } from '../../../src/core/protocol';
import { openPool } from '../../../src/service/store/postgres/database';
import { SessionLeases } from '../../../src/service/store/postgres/leases';
import { startFaultProxy } from '../../support/faultProxy';
import { sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import { startServer, type ServerProcess } from '../../support/serverProcess';
import { waitFor } from '../../support/wait';
import { call, createSession } from './serverTestKit';

describe('ultraplan-server replicas on PostgreSQL', function () {
  this.timeout(120_000);
  let cluster: PostgresCluster;
  let database: string;
  let replicas: ServerProcess[] = [];
  const token = randomUUID();

  before(async () => {
    cluster = await sharedPostgresCluster();
  });
  beforeEach(async () => {
    database = await cluster.createDatabase();
    replicas = await Promise.all([0, 1, 2].map(() => startServer({ store: database, token })));
  });
  afterEach(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
  });

  const replica = (n: number) => replicas[n] as ServerProcess;

  it('serves any session from any replica: create on one, read, page and append on the others', async () => {
    const id = await createSession(replica(0));
    const got = await call(replica(1), 'GET', `/v1/code/sessions/${id}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.session.worker_status, 'running');

    for (let i = 0; i < 5; i++) {
      const sent = await call(replica(i % 3), 'POST', `/v1/code/sessions/${id}/events`, {
        events: [{ payload: userMessageEvent(`note ${i}`) }],
      });
      assert.equal(sent.status, 200);
    }
    // Paging across replicas: each page from another replica, by the previous page's cursor.
    const seen: number[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const query: string = cursor === null ? '?sort_order=asc&limit=2' : `?sort_order=asc&limit=2&cursor=${cursor}`;
      const answer = await call(replica(page % 3), 'GET', `/v1/code/sessions/${id}/events${query}`);
      assert.equal(answer.status, 200);
      seen.push(...answer.body.data.map((e: { sequence_num: number }) => e.sequence_num));
      cursor = answer.body.next_cursor;
      if (cursor === null) break;
    }
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7]);

    const second = await createSession(replica(2));
    const listed = await call(replica(1), 'GET', '/v1/code/sessions?limit=1');
    assert.equal(listed.body.data[0].id, second.replace(/^session_/, 'cse_'));
    const next = await call(replica(0), 'GET', `/v1/code/sessions?limit=1&cursor=${listed.body.next_cursor}`);
    assert.equal(next.body.data[0].id, id.replace(/^session_/, 'cse_'));
  });

  it('a stream cut by a SIGKILL of its replica resumes on another from Last-Event-ID: no gap, no duplicate', async () => {
    const id = await createSession(replica(0));
    const proxy = await startFaultProxy({ target: replica(1).url });
    try {
      const writer = appendSteadily(replica(2), id, 60);
      const reader = new ResumingReader(proxy.url, replica(0).headers(), id);
      const done = reader.readUntil((seqs) => seqs.length >= 62);
      await reader.waitFor((seqs) => seqs.length >= 15);
      await replica(1).kill(); // mid-stream, on the replica the reader is connected to
      proxy.setTarget(replica(0).url);
      const acknowledged = await writer;
      const seqs = await done;
      assert.ok(reader.connections >= 2, 'the reader reconnected');
      assert.deepEqual(
        seqs,
        Array.from({ length: 62 }, (_, i) => i + 1),
        'every event once, in order',
      );
      assert.equal(acknowledged.length, 60);
    } finally {
      await proxy.close();
    }
  });

  it('streams on another replica still get the commits made while every LISTEN connection is cut', async () => {
    const id = await createSession(replica(0));
    const reader = new ResumingReader(replica(1).url, replica(1).headers(), id);
    const done = reader.readUntil((seqs) => seqs.length >= 4);
    await reader.waitFor((seqs) => seqs.length >= 2);
    // Every replica's LISTEN connection is cut: the next commits are announced to nobody.
    const admin = new Client({ connectionString: database });
    await admin.connect();
    try {
      const { rows } = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query ILIKE 'LISTEN%'");
      assert.ok(rows.length >= 3, `the replicas' LISTEN connections were found (${rows.length})`);
    } finally {
      await admin.end();
    }
    for (const text of ['after the cut', 'and one more']) {
      assert.equal(
        (await call(replica(2), 'POST', `/v1/code/sessions/${id}/events`, { events: [{ payload: userMessageEvent(text) }] })).status,
        200,
      );
    }
    assert.deepEqual(await done, [1, 2, 3, 4]);
    assert.equal(reader.connections, 1, 'the same stream carried them');
  });

  it('counts one of 50 identical decisions sent at once across replicas', async () => {
    const id = await createSession(replica(0));
    await agentAsks(database, id, 'req_plan');
    const decision = controlResponseEvent('req_plan', { behavior: 'allow', updatedInput: { plan: '# Plan' } });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(replica(i % 3), 'POST', `/v1/code/sessions/${id}/events`, { events: [{ payload: decision }] }),
      ),
    );
    assert.equal(answers.filter((a) => a.status === 200).length, 1, JSON.stringify(answers.map((a) => a.status)));
    assert.ok(answers.every((a) => a.status === 200 || a.status === 409));
    const events = await call(replica(1), 'GET', `/v1/code/sessions/${id}/events?sort_order=asc&limit=1000`);
    assert.equal(events.body.data.filter((e: { payload: { type: string } }) => e.payload.type === 'control_response').length, 1);
  });

  it('loses nothing acknowledged when PostgreSQL restarts; replicas reconnect and streams go on', async () => {
    const id = await createSession(replica(0));
    const reader = new ResumingReader(replica(1).url, replica(1).headers(), id);
    const acknowledged: number[] = [];
    const send = async (n: number) => {
      const answer = await call(replica(n % 3), 'POST', `/v1/code/sessions/${id}/events`, {
        events: [{ payload: { ...userMessageEvent(`m${n}`), uuid: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}` } }],
      });
      if (answer.status === 200) acknowledged.push(answer.body.results[0].sequence_num);
      return answer.status;
    };
    for (let n = 0; n < 10; n++) assert.equal(await send(n), 200);
    const done = reader.readUntil((seqs) => seqs.length >= 2 + 20);
    await cluster.restart({ crash: true });
    // Retried until each is acknowledged: the same uuid is stored once however often it is sent.
    for (let n = 10; n < 20; n++) {
      await waitFor(() => send(n), {
        until: (status) => status === 200,
        message: `message ${n} acknowledged: a replica answers again after the restart`,
        timeoutMs: 20_000,
      });
    }
    const seqs = await done;
    assert.deepEqual(
      seqs,
      Array.from({ length: 22 }, (_, i) => i + 1),
    );
    const stored = await call(replica(2), 'GET', `/v1/code/sessions/${id}/events?sort_order=asc&limit=1000`);
    const storedSeqs = stored.body.data.map((e: { sequence_num: number }) => e.sequence_num);
    for (const seq of acknowledged) assert.ok(storedSeqs.includes(seq), `acknowledged event ${seq} is stored`);
    assert.equal(storedSeqs.length, 22);
  });
});

/** Writes as a worker would: claims the session and has its agent ask for a decision. */
async function agentAsks(database: string, sessionId: string, requestId: string): Promise<void> {
  const pool = openPool(database, () => {});
  try {
    const leases = new SessionLeases(pool, 'test-worker', 60_000, () => {});
    const claimed = await leases.claim();
    assert.equal(claimed?.sessionId, sessionId);
    await leases.write({ sessionId, epoch: claimed.epoch }, [
      {
        t: 'event',
        origin: 'agent',
        event: {
          type: 'control_request',
          request_id: requestId,
          request: { subtype: 'can_use_tool', tool_name: 'ExitPlanMode', input: { plan: '# Plan' }, tool_use_id: 'toolu_1' },
        },
      },
      { t: 'status', status: 'requires_action' },
    ]);
  } finally {
    await pool.end();
  }
}

/** Appends `count` user messages one after another; resolves with their sequence numbers. */
async function appendSteadily(server: ServerProcess, id: string, count: number): Promise<number[]> {
  const seqs: number[] = [];
  for (let i = 0; i < count; i++) {
    const answer = await call(server, 'POST', `/v1/code/sessions/${id}/events`, { events: [{ payload: userMessageEvent(`step ${i}`) }] });
    assert.equal(answer.status, 200);
    seqs.push(answer.body.results[0].sequence_num);
    await new Promise((r) => setTimeout(r, 15));
  }
  return seqs;
}

/** An SSE client of the current wire that reconnects with Last-Event-ID, as the extension does. */
class ResumingReader {
  readonly seqs: number[] = [];
  connections = 0;
  private readonly waiters: Array<{ check: (seqs: number[]) => boolean; resolve: () => void }> = [];
  private stopped = false;

  constructor(
    private readonly base: string,
    private readonly headers: Record<string, string>,
    private readonly id: string,
  ) {}

  async readUntil(done: (seqs: number[]) => boolean, timeoutMs = 60_000): Promise<number[]> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.seqs)) {
      if (Date.now() > deadline) throw new Error(`stream: only ${this.seqs.length} events within ${timeoutMs} ms: ${this.seqs.join(',')}`);
      await this.connectOnce(done, deadline).catch(() => {});
      if (!done(this.seqs)) await new Promise((r) => setTimeout(r, 100));
    }
    this.stopped = true;
    return this.seqs;
  }

  waitFor(check: (seqs: number[]) => boolean): Promise<void> {
    if (check(this.seqs)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ check, resolve }));
  }

  private async connectOnce(done: (seqs: number[]) => boolean, deadline: number): Promise<void> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), Math.max(0, deadline - Date.now()));
    const last = this.seqs.at(-1);
    try {
      const response = await fetch(`${this.base}/v1/code/sessions/${this.id}/events/stream`, {
        headers: { ...this.headers, ...(last !== undefined ? { 'last-event-id': String(last) } : {}) },
        signal: controller.signal,
      });
      if (!response.ok || !response.body) return;
      this.connections++;
      const parser = createParser({
        onEvent: (e) => {
          this.seqs.push(Number(e.id));
          for (const waiter of [...this.waiters]) {
            if (waiter.check(this.seqs)) {
              this.waiters.splice(this.waiters.indexOf(waiter), 1);
              waiter.resolve();
            }
          }
        },
      });
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      while (!this.stopped && !done(this.seqs)) {
        const { done: ended, value } = await reader.read();
        if (ended) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
      await reader.cancel().catch(() => {});
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
  }
}

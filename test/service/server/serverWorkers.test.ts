// Workers: agents run in `ultraplan-server worker` processes, not in the API replicas. Two real
// workers and two real replicas on one real PostgreSQL database: a session created on one replica
// is planned by a worker and decided on the other replica; a worker killed (SIGKILL) mid-turn
// leaves its session to the other worker once the lease runs out, which resumes the agent from
// its checkpoint without repeating a step; a worker fenced out by a newer lease stores nothing.
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { controlResponseEvent, userMessageEvent } from '../../../src/core/protocol';
import { openPool } from '../../../src/service/store/postgres/database';
import { LeaseLostError, SessionLeases } from '../../../src/service/store/postgres/leases';
import { PostgresServerStore } from '../../../src/service/store/postgres/postgresStore';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { EXAMPLES_DIR, startServer, startWorker, type ServerProcess, type WorkerProcess } from '../../support/serverProcess';
import { createRequest } from '../hostTestKit';
import { call, createSession, waitForEvents, waitForStatus } from './serverTestKit';

const LEASE_MS = 2_000;

describe('ultraplan-server workers on PostgreSQL', function () {
  this.timeout(120_000);
  let database: string;
  let replicas: ServerProcess[] = [];
  let workers: WorkerProcess[] = [];
  const token = randomUUID();

  beforeEach(async () => {
    database = await (await sharedPostgresCluster()).createDatabase();
    replicas = await Promise.all([0, 1].map(() => startServer({ store: database, token })));
    workers = await Promise.all(
      ['worker_a', 'worker_b'].map((workerId) =>
        // One person's server: its sessions may clone this machine's folders (file://).
        startWorker({
          store: database,
          agent: `scripted:${path.join(EXAMPLES_DIR, 'slow.json')}`,
          leaseMs: LEASE_MS,
          workerId,
          extraArgs: ['--allow-file-sources'],
        }),
      ),
    );
  });
  afterEach(async () => {
    await Promise.all([...replicas, ...workers].map((p) => p.stop()));
  });

  it('a worker plans a session created on one replica; the decision sent to the other reaches its agent', async () => {
    const id = await createSession(replicas[0] as ServerProcess);
    const events = await waitForEvents(replicas[1] as ServerProcess, id, (e) => e.some(isPlanRequest), 20_000);
    const request = events.find(isPlanRequest);
    await waitForStatus(replicas[1] as ServerProcess, id, 'requires_action', 20_000);
    const sent = await call(replicas[1] as ServerProcess, 'POST', `/v1/sessions/${id}/events`, {
      events: [controlResponseEvent(request.request_id, { behavior: 'allow', updatedInput: request.request.input })],
    });
    assert.equal(sent.status, 200);
    const after = await waitForEvents(replicas[0] as ServerProcess, id, (e) => texts(e).includes('Executed.'), 20_000);
    assert.equal(texts(after).filter((t) => t === 'Executed.').length, 1);
    await waitForStatus(replicas[0] as ServerProcess, id, 'idle', 20_000);
  });

  it('a worker killed mid-turn: the other claims the session after the lease and the agent goes on from its checkpoint', async () => {
    const id = await createSession(replicas[0] as ServerProcess);
    await waitForEvents(replicas[0] as ServerProcess, id, (e) => texts(e).includes('Step one.'), 20_000);
    const holder = workers.findIndex((w) => w.stderr().includes(`claimed session ${id}`));
    assert.ok(holder >= 0, 'one worker claimed the session');
    const other = workers[1 - holder] as WorkerProcess;
    await (workers[holder] as WorkerProcess).kill(); // mid-turn: the scenario sleeps between its steps
    const events = await waitForEvents(replicas[1] as ServerProcess, id, (e) => e.some(isPlanRequest), 30_000);
    assert.match(
      other.stderr(),
      new RegExp(`claimed session ${id}`),
      `the other worker took the session over:\n${workers.map((w) => w.stderr()).join('\n---\n')}`,
    );
    // A new epoch: the killed worker's lease ran out and was taken over, not shared.
    assert.match(other.stderr(), new RegExp(`claimed session ${id} \\(epoch 2\\)`));
    assert.match(other.stderr(), /agent resumed on another worker/);
    for (const step of ['Step one.', 'Step two, after a pause.']) {
      assert.equal(texts(events).filter((t) => t === step).length, 1, `"${step}" said once`);
    }
    const request = events.find(isPlanRequest);
    const sent = await call(replicas[0] as ServerProcess, 'POST', `/v1/sessions/${id}/events`, {
      events: [controlResponseEvent(request.request_id, { behavior: 'allow', updatedInput: request.request.input })],
    });
    assert.equal(sent.status, 200);
    await waitForEvents(replicas[0] as ServerProcess, id, (e) => texts(e).includes('Executed.'), 20_000);
  });

  it('a session whose git source cannot be cloned says why; the worker goes on with other sessions', async () => {
    const missing = `file://${path.join(EXAMPLES_DIR, 'no-such-repository')}`;
    const answer = await call(replicas[0] as ServerProcess, 'POST', '/v1/sessions', {
      ...createRequest('Plan it'),
      session_context: { sources: [{ type: 'git_repository', url: missing, revision: 'main' }], outcomes: [] },
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const bad = answer.body.id as string;
    const events = await waitForEvents(replicas[1] as ServerProcess, bad, (e) => e.some((x) => x.subtype === 'agent_error'), 20_000);
    const error = events.find((e) => e.subtype === 'agent_error');
    assert.match(
      error.message,
      /^The worker could not prepare this session's workspace: git clone of file:\/\/.*no-such-repository failed: .+\. Send a message to try again\.$/,
    );
    assert.ok(events.some((e) => e.type === 'result' && e.is_error === true));
    await waitForStatus(replicas[1] as ServerProcess, bad, 'idle', 20_000);
    // Nothing crashed: both workers still run, and the next session is planned.
    const good = await createSession(replicas[1] as ServerProcess);
    await waitForEvents(replicas[0] as ServerProcess, good, (e) => e.some(isPlanRequest), 30_000);
    assert.equal(events.filter((e) => e.subtype === 'agent_error').length, 1);
    // A message tries again, and says why again (the source is still missing), once.
    assert.equal(
      (await call(replicas[0] as ServerProcess, 'POST', `/v1/sessions/${bad}/events`, { events: [userMessageEvent('again')] })).status,
      200,
    );
    await waitForEvents(replicas[0] as ServerProcess, bad, (e) => e.filter((x) => x.subtype === 'agent_error').length === 2, 20_000);
  });

  it('a worker whose lease was taken over stores nothing more (its epoch is fenced out)', async () => {
    const store = await PostgresServerStore.open({ connectionString: database });
    await Promise.all(workers.map((w) => w.stop()));
    workers = [];
    const pool = openPool(database, () => {});
    try {
      const created = await store.createSession({
        title: 'Fenced',
        events: [{ type: 'event', data: { type: 'user', message: { role: 'user', content: 'Plan it' } } }],
      });
      const first = new SessionLeases(pool, 'first', 50, () => {});
      const second = new SessionLeases(pool, 'second', 60_000, () => {});
      const old = await first.claim();
      assert.equal(old?.sessionId, created.id);
      await new Promise((r) => setTimeout(r, 100)); // the first lease runs out unrenewed
      const taken = await second.claim();
      assert.equal(taken?.sessionId, created.id);
      assert.ok((taken?.epoch ?? 0) > old.epoch);
      await assert.rejects(
        first.write({ sessionId: created.id, epoch: old.epoch }, [
          { t: 'event', origin: 'agent', event: { type: 'assistant', message: 'stale' } },
        ]),
        LeaseLostError,
      );
      assert.deepEqual(await first.renew([{ sessionId: created.id, epoch: old.epoch }]), new Set([created.id]));
      const events = (await store.readEvents(created.id, null, 1000)).data;
      assert.ok(!events.some((e) => e.type === 'assistant'), 'nothing from the fenced worker was stored');
    } finally {
      await pool.end();
      await store.close();
    }
  });
});

function isPlanRequest(event: any): boolean {
  return event.type === 'control_request' && event.request?.subtype === 'can_use_tool';
}

function texts(events: any[]): string[] {
  return events
    .filter((e) => e.type === 'assistant')
    .flatMap((e) => (Array.isArray(e.message?.content) ? e.message.content : []))
    .filter((b: { type?: string }) => b.type === 'text')
    .map((b: { text: string }) => b.text);
}

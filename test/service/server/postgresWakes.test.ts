// Wakes on PostgreSQL (src/service/store/postgres/wakes.ts), at the moments a count read without
// a lock gets wrong: a message to a session at work whose turn ends before the message commits is
// a wake, checked under the session's row lock, and refused at the live limit like any other.
import * as assert from 'node:assert/strict';
import { Client } from 'pg';
import { appendTogether } from '../../../src/service/store/postgres/appendFunction';
import { PostgresServerStore } from '../../../src/service/store/postgres/postgresStore';
import { LIVE_STATUSES, QuotaError } from '../../../src/service/store/quotas';
import type { SessionOwner } from '../../../src/service/identity/sessionOwner';
import { createRequest } from '../hostTestKit';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { waitFor } from '../../support/wait';

const alice: SessionOwner = { sub: 'alice', name: 'Alice', groups: [] };

describe('Wakes on PostgreSQL: the live limit under the row lock', function () {
  this.timeout(60_000);
  let url: string;
  let store: PostgresServerStore;
  const clients: Client[] = [];

  beforeEach(async () => {
    url = await (await sharedPostgresCluster()).createDatabase();
    store = await PostgresServerStore.open({ connectionString: url, limits: { maxSessionsPerUser: 10, maxLivePerUser: 2 } });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end().catch(() => undefined);
    await store.close();
  });

  async function connect(): Promise<Client> {
    const client = new Client({ connectionString: url });
    await client.connect();
    clients.push(client);
    return client;
  }

  const create = async (): Promise<string> => (await store.createSession(createRequest('plan it'), undefined, alice)).id;
  const setStatus = (client: Client, id: string, status: string) =>
    client.query('UPDATE sessions SET status = $2 WHERE id = $1', [id, status]);
  const eventCount = async (id: string) => (await store.readEvents(id, null)).data.length;

  it('stores an append checked to be at work only while its session is at work (migration 11)', async () => {
    const admin = await connect();
    const id = await create();
    const message = (uuid: string) => ({
      sessionId: id,
      inputs: [
        {
          given: uuid,
          stamped: { type: 'user', uuid, message: { role: 'user', content: 'more' }, session_id: id, id: 'e_0' },
          decision: null,
          audit: null,
        },
      ],
      actor: undefined,
    });
    const before = await eventCount(id);
    const [atWork] = await appendTogether(store.pool, [message('u-running')], new Date(), [true], LIVE_STATUSES);
    assert.equal(atWork?.outcome, 'ok');
    assert.equal(await eventCount(id), before + 1);
    await setStatus(admin, id, 'idle');
    const [idle] = await appendTogether(store.pool, [message('u-idle')], new Date(), [true], LIVE_STATUSES);
    assert.equal(idle?.outcome, 'not_at_work');
    assert.equal(await eventCount(id), before + 1, 'a not_at_work append stored something');
    // Unchecked (a session without owner), the same append goes in as before.
    const [unchecked] = await appendTogether(store.pool, [message('u-unchecked')], new Date(), [false], LIVE_STATUSES);
    assert.equal(unchecked?.outcome, 'ok');
  });

  it('refuses a message to a session at work when its turn ends (and another wakes) before the message commits', async () => {
    const admin = await connect();
    // Alice: `other` idle, `target` and `busy` at work: her limit of two.
    const other = await create();
    await setStatus(admin, other, 'idle');
    const target = await create();
    await create();
    const before = await eventCount(target);
    // A worker is writing `target`'s turn end: it holds the session's row lock.
    const worker = await connect();
    await worker.query('BEGIN');
    await worker.query('SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [target]);
    // The message is read as going to a session at work, then waits for the row lock.
    const sent = store.appendEvents(target, [{ type: 'user', uuid: 'late', message: { role: 'user', content: 'one more thing' } }]);
    sent.catch(() => undefined);
    await waitFor(
      async () =>
        Number(
          (
            await admin.query<{ n: string }>(
              "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%ultraplan_append_batch_at_work%'",
            )
          ).rows[0]?.n,
        ) > 0,
      { message: 'the append waiting for the row lock', timeoutMs: 10_000 },
    );
    // The turn ends, and meanwhile another of Alice's sessions is woken: she is at her limit again.
    await setStatus(worker, target, 'idle');
    await setStatus(worker, other, 'running');
    await worker.query('COMMIT');
    await assert.rejects(sent, (err: unknown) => err instanceof QuotaError && err.limit === 'max_live_per_user' && err.status === 429);
    assert.equal(await eventCount(target), before, 'the refused message was stored');
    assert.equal((await store.getSession(target)).session_status, 'idle');
    // Once a place frees, the same message is a wake that goes through and counts at once.
    await setStatus(admin, other, 'idle');
    const [stored] = await store.appendEvents(target, [
      { type: 'user', uuid: 'late', message: { role: 'user', content: 'one more thing' } },
    ]);
    assert.equal(stored?.duplicate, false);
    assert.equal((await store.getSession(target)).session_status, 'running');
  });
});

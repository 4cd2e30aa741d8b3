// Fair shares where several processes share one PostgreSQL (a throwaway cluster): the per-user
// limit holding for creations sent at once to two replicas, workers claiming users round-robin
// under a per-user slot cap, and retention (one replica at a time; audit rows kept as configured).
import * as assert from 'node:assert/strict';
import { Client } from 'pg';
import { SessionLeases } from '../../../src/service/store/postgres/leases';
import { PostgresServerStore } from '../../../src/service/store/postgres/postgresStore';
import type { SessionHostLimits } from '../../../src/service/host/sessionHost';
import { QuotaError } from '../../../src/service/store/quotas';
import type { SessionOwner } from '../../../src/service/identity/sessionOwner';
import { createRequest } from '../hostTestKit';
import { sharedPostgresCluster } from '../../support/postgresCluster';

const alice: SessionOwner = { sub: 'alice', name: 'Alice', groups: [] };
const bob: SessionOwner = { sub: 'bob', name: 'Bob', groups: [] };
const DAY_MS = 24 * 60 * 60 * 1000;

describe('Fair shares on PostgreSQL', function () {
  this.timeout(60_000);
  let url: string;
  const stores: PostgresServerStore[] = [];

  async function replica(limits: Partial<SessionHostLimits> = {}): Promise<PostgresServerStore> {
    const store = await PostgresServerStore.open({ connectionString: url, limits });
    stores.push(store);
    return store;
  }

  beforeEach(async () => {
    url = await (await sharedPostgresCluster()).createDatabase();
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  const create = async (store: PostgresServerStore, owner: SessionOwner | null, title = 'fair'): Promise<string> =>
    (await store.createSession(createRequest('plan it', title), undefined, owner)).id;

  it('lets exactly max-sessions-per-user through of 12 creations sent at once to two replicas', async () => {
    const limits = { maxSessionsPerUser: 3, maxLivePerUser: 100 };
    const [one, two] = [await replica(limits), await replica(limits)];
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => create(i % 2 === 0 ? one : two, alice)));
    const created = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.equal(created.length, 3);
    assert.equal(refused.length, 9);
    for (const { reason } of refused) {
      assert.ok(reason instanceof QuotaError, String(reason));
      assert.equal(reason.limit, 'max_sessions_per_user');
      assert.equal(reason.status, 429);
    }
    assert.equal(await one.countSessions(), 3);
  });

  it('lets exactly max-live-per-user through of 8 creations sent at once to two replicas', async () => {
    const limits = { maxSessionsPerUser: 100, maxLivePerUser: 2 };
    const [one, two] = [await replica(limits), await replica(limits)];
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => create(i % 2 === 0 ? one : two, bob)));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 2);
    for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as QuotaError).limit, 'max_live_per_user');
  });

  it("serves users round-robin: with one slot, B's one session runs second, not after A's five", async () => {
    const store = await replica({ maxLivePerUser: 10 });
    const titles = new Map<string, string>();
    for (let i = 1; i <= 5; i++) titles.set(await create(store, alice, `A${i}`), `A${i}`);
    titles.set(await create(store, bob, 'B1'), 'B1');
    const worker = new SessionLeases(store.pool, 'one-slot-worker', 60_000, () => {});
    const order: string[] = [];
    // One slot: the worker runs a session until it is archived, then claims the next.
    for (;;) {
      const claimed = await worker.claim();
      if (!claimed) break;
      order.push(titles.get(claimed.sessionId) as string);
      await store.archive(claimed.sessionId);
    }
    assert.deepEqual(order, ['A1', 'B1', 'A2', 'A3', 'A4', 'A5']);
  });

  it('caps the worker slots one user holds across workers claiming at once', async () => {
    const store = await replica({ maxLivePerUser: 10 });
    for (let i = 0; i < 6; i++) await create(store, alice);
    const bobs = await create(store, bob);
    const workers = ['w1', 'w2', 'w3'].map((id) => new SessionLeases(store.pool, id, 60_000, () => {}));
    const claims = await Promise.all(Array.from({ length: 9 }, (_, i) => (workers[i % 3] as SessionLeases).claim(2)));
    const claimed = claims.filter((c) => c !== undefined).map((c) => c.sessionId);
    assert.equal(claimed.length, 3, 'two of alice, one of bob');
    assert.ok(claimed.includes(bobs));
    // One of alice's ends: the slot it held is free for her next one.
    await store.archive(claimed.find((id) => id !== bobs) as string);
    assert.ok(await (workers[0] as SessionLeases).claim(2));
    assert.equal(await (workers[1] as SessionLeases).claim(2), undefined);
  });

  it('keeps audit rows after their session is deleted, until the audit retention; one replica sweeps at a time', async () => {
    const store = await replica();
    const id = await create(store, alice);
    await store.archive(id, { sub: 'alice', name: 'Alice' });
    const later = new Date(Date.now() + DAY_MS);

    const holder = new Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(7401551125)');
      assert.equal(await store.sweep({ archivedBefore: later, auditBefore: null }), null, 'another replica is sweeping');
      await holder.query('COMMIT');

      assert.deepEqual(await store.sweep({ archivedBefore: later, auditBefore: null }), { sessions: 1, auditRows: 0 });
      const audit = await holder.query('SELECT action FROM audit WHERE session_id = $1', [id]);
      assert.deepEqual(
        audit.rows.map((r: { action: string }) => r.action),
        ['archive'],
      );
      assert.deepEqual(await store.sweep({ archivedBefore: null, auditBefore: later }), { sessions: 0, auditRows: 1 });
    } finally {
      await holder.end();
    }
  });
});

// Fair shares on both stores (the journal, and PostgreSQL on a throwaway cluster): per-user limits
// on sessions held and live sessions, archived sessions counting toward nothing, the limits holding
// for concurrent creations on two replicas, and retention deleting what was archived long ago.
import * as assert from 'node:assert/strict';
import type { AgentContext } from '../../../src/agents/agent';
import { SessionHost, type SessionHostLimits } from '../../../src/service/host/sessionHost';
import { FileSessionStore } from '../../../src/service/store/sessionStore';
import { JournalServerStore } from '../../../src/service/store/journalStore';
import { SessionLeases } from '../../../src/service/store/postgres/leases';
import { PostgresServerStore } from '../../../src/service/store/postgres/postgresStore';
import type { ServerStore } from '../../../src/service/store/serverStore';
import { QuotaError, type QuotaName } from '../../../src/service/store/quotas';
import { retentionCutoffs, type Sweepable } from '../../../src/service/store/retention';
import type { SessionOwner } from '../../../src/service/identity/sessionOwner';
import { SessionsError } from '../../../src/core/errors';
import { createRequest } from '../hostTestKit';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { tempDir } from '../../support/serverProcess';
import { waitFor } from '../../support/wait';

const DAY_MS = 24 * 60 * 60 * 1000;
const alice: SessionOwner = { sub: 'alice', name: 'Alice', groups: [] };
const bob: SessionOwner = { sub: 'bob', name: 'Bob', groups: [] };

interface QuotaStore {
  store: ServerStore & Sweepable;
  /** The session's agent ends its turn (status idle): it is no longer live. */
  agentIdle(sessionId: string): Promise<void>;
  /** Another server on the same sessions: a second replica on PostgreSQL, the same host for the journal (one process). */
  replica(): Promise<ServerStore>;
  close(): Promise<void>;
}

type Open = (limits: Partial<SessionHostLimits>) => Promise<QuotaStore>;

const openJournal: Open = async (limits) => {
  const contexts = new Map<string, AgentContext>();
  const dataDir = tempDir('ultraplan-quotas-');
  const host = await SessionHost.open({
    store: new FileSessionStore(dataDir),
    limits,
    agentFactory: ({ sessionId }) => ({
      label: 'quota agent',
      start: async (ctx) => void contexts.set(sessionId, ctx),
      // As an ACP agent does: a message starts a turn (the host counts a wake until it is handed over).
      onUserMessage: () => contexts.get(sessionId)?.setStatus('running'),
      onDecision: () => {},
      stop: async () => {},
    }),
  });
  const store = new JournalServerStore(host, dataDir);
  return {
    store,
    async agentIdle(sessionId) {
      await waitFor(() => contexts.has(sessionId), { message: 'the agent started', timeoutMs: 10_000 });
      contexts.get(sessionId)?.setStatus('idle');
      await waitFor(async () => (await store.getSession(sessionId)).session_status === 'idle', { message: 'idle', timeoutMs: 10_000 });
    },
    replica: async () => store,
    close: () => store.close(),
  };
};

let postgresUrl: string | undefined;

const openPostgres: Open = async (limits) => {
  postgresUrl = await (await sharedPostgresCluster()).createDatabase();
  const store = await PostgresServerStore.open({ connectionString: postgresUrl, limits });
  const leases = new SessionLeases(store.pool, 'quota-worker', 60_000, () => {});
  const held = new Map<string, number>();
  const replicas: PostgresServerStore[] = [];
  return {
    store,
    async agentIdle(sessionId) {
      while (!held.has(sessionId)) {
        const claimed = await leases.claim();
        if (!claimed) throw new Error(`session ${sessionId} could not be claimed`);
        held.set(claimed.sessionId, claimed.epoch);
      }
      await leases.write({ sessionId, epoch: held.get(sessionId) as number }, [{ t: 'status', status: 'idle' }]);
    },
    async replica() {
      const replica = await PostgresServerStore.open({ connectionString: postgresUrl as string, limits });
      replicas.push(replica);
      return replica;
    },
    close: async () => {
      for (const replica of replicas.splice(0)) await replica.close();
      await store.close();
    },
  };
};

const create = async (store: ServerStore, owner: SessionOwner | null): Promise<string> =>
  (await store.createSession(createRequest('plan it'), undefined, owner)).id;

async function refusedBy(promise: Promise<unknown>, limit: QuotaName, value: number, status: number): Promise<QuotaError> {
  let caught: unknown;
  await assert.rejects(promise, (err: unknown) => {
    caught = err;
    return true;
  });
  assert.ok(caught instanceof QuotaError, `expected a QuotaError, got ${String(caught)}`);
  assert.equal(caught.limit, limit, caught.message);
  assert.equal(caught.value, value);
  assert.equal(caught.status, status);
  return caught;
}

for (const [name, open] of [
  ['journal', openJournal],
  ['postgres', openPostgres],
] as const) {
  describe(`Fair shares: ${name}`, function () {
    this.timeout(60_000);
    const opened: QuotaStore[] = [];
    async function openWith(limits: Partial<SessionHostLimits>): Promise<QuotaStore> {
      const subject = await open(limits);
      opened.push(subject);
      return subject;
    }
    afterEach(async () => {
      for (const subject of opened.splice(0)) await subject.close();
    });

    it('one user cannot fill the server: their own limit is a 429 naming it, others still create, and archiving frees a place', async () => {
      const { store } = await openWith({ maxSessions: 5, maxSessionsPerUser: 3, maxLivePerUser: 10 });
      const mine = [await create(store, alice), await create(store, alice), await create(store, alice)];
      const refusal = await refusedBy(create(store, alice), 'max_sessions_per_user', 3, 429);
      assert.equal(refusal.retryAfterMs, undefined, 'no retry helps until one is archived');
      assert.match(refusal.message, /limit per user \(max_sessions_per_user 3\)/);
      await create(store, bob);
      await store.archive(mine[0] as string);
      await create(store, alice);
      assert.equal(await store.countSessions(), 5);
    });

    it('archived sessions stop counting toward --max-sessions', async () => {
      const { store } = await openWith({ maxSessions: 2 });
      const first = await create(store, null);
      await create(store, null);
      const refusal = await refusedBy(create(store, null), 'max_sessions', 2, 409);
      assert.match(refusal.message, /limit of 2 sessions/);
      await store.archive(first);
      await create(store, null);
    });

    it('limits live sessions per user with Retry-After; a session whose turn ended is not live', async () => {
      const subject = await openWith({ maxSessionsPerUser: 10, maxLivePerUser: 2 });
      const { store } = subject;
      const first = await create(store, alice);
      await create(store, alice);
      const refusal = await refusedBy(create(store, alice), 'max_live_per_user', 2, 429);
      assert.equal(refusal.retryAfterMs, 30_000);
      await create(store, bob);
      await subject.agentIdle(first);
      await create(store, alice);
      await refusedBy(create(store, alice), 'max_live_per_user', 2, 429);
    });

    it('a message waking an idle session while its user is at the live limit is a 429 naming it, stores nothing, and goes through once a place frees', async () => {
      const subject = await openWith({ maxSessionsPerUser: 10, maxLivePerUser: 2 });
      const { store } = subject;
      const idle = await create(store, alice);
      const busy = await create(store, alice);
      await subject.agentIdle(idle);
      await create(store, alice);
      const uuid = `wake-${Date.now()}`;
      const wake = { type: 'user', uuid, message: { role: 'user', content: 'one more thing' } };
      const before = (await store.readEvents(idle, null)).data.length;
      const refusal = await refusedBy(store.appendEvents(idle, [wake]), 'max_live_per_user', 2, 429);
      assert.equal(refusal.retryAfterMs, 30_000);
      assert.match(refusal.message, /not woken and nothing was stored/);
      assert.equal((await store.readEvents(idle, null)).data.length, before, 'the refused message was stored');
      assert.equal((await store.getSession(idle)).session_status, 'idle');
      // Another user's wake is theirs to count; a session already at work takes messages as before.
      await store.appendEvents(busy, [{ type: 'user', message: { role: 'user', content: 'and this' } }]);
      // A place frees: the same message, sent again as it was, is stored once.
      await subject.agentIdle(busy);
      const [appended] = await store.appendEvents(idle, [wake]);
      assert.equal(appended?.duplicate, false);
      const stored = (await store.readEvents(idle, null)).data.filter((event) => event.uuid === uuid);
      assert.equal(stored.length, 1);
      // The woken session is at work (on PostgreSQL from its wake on, on the journal once its agent
      // takes the message, and counted until then): the limit is full again.
      await waitFor(async () => ((await store.getSession(idle)).session_status === 'running' ? true : undefined), {
        message: 'the woken session at work',
        timeoutMs: 10_000,
      });
      await refusedBy(create(store, alice), 'max_live_per_user', 2, 429);
      // Its retry (the answer lost on the way) is answered with what was stored, whatever the count.
      const [again] = await store.appendEvents(idle, [wake]);
      assert.equal(again?.duplicate, true);
    });

    it('twenty wakes at once (two replicas on PostgreSQL) let exactly the live limit through; the rest are 429 and store nothing', async () => {
      const limit = 3;
      const subject = await openWith({ maxSessionsPerUser: 50, maxLivePerUser: limit });
      const replicas = [subject.store, await subject.replica()];
      const idle: string[] = [];
      for (let i = 0; i < 20; i++) {
        const id = await create(subject.store, alice);
        await subject.agentIdle(id);
        idle.push(id);
      }
      const before = await Promise.all(idle.map(async (id) => (await subject.store.readEvents(id, null)).data.length));
      const results = await Promise.allSettled(
        idle.map((id, index) =>
          (replicas[index % 2] as ServerStore).appendEvents(id, [
            { type: 'user', uuid: `race-${index}`, message: { role: 'user', content: 'go on' } },
          ]),
        ),
      );
      const woken = idle.filter((_, index) => results[index]?.status === 'fulfilled');
      assert.equal(
        woken.length,
        limit,
        `woken: ${woken.length}; ${results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok')).join(' | ')}`,
      );
      for (const result of results) {
        if (result.status === 'fulfilled') continue;
        const err = result.reason as unknown;
        assert.ok(err instanceof QuotaError, `a refusal other than the limit: ${String(err)}`);
        assert.equal(err.limit, 'max_live_per_user');
        assert.equal(err.status, 429);
        assert.match(err.message, /max_live_per_user 3\).*not woken and nothing was stored/);
      }
      const after = await Promise.all(idle.map(async (id) => (await subject.store.readEvents(id, null)).data.length));
      const statusesNow = async () => Promise.all(idle.map(async (id) => (await subject.store.getSession(id)).session_status));
      const statuses = await waitFor(statusesNow, {
        message: 'the woken sessions at work',
        timeoutMs: 10_000,
        until: (now) => now.filter((status) => status === 'running').length >= limit,
      });
      idle.forEach((id, index) => {
        const wasWoken = woken.includes(id);
        assert.equal(after[index], (before[index] as number) + (wasWoken ? 1 : 0), `events of ${id}`);
        assert.equal(statuses[index], wasWoken ? 'running' : 'idle', `status of ${id}`);
      });
      // The woken count as at work at once: another creation or wake is refused until one ends its turn.
      await refusedBy(create(subject.store, alice), 'max_live_per_user', limit, 429);
      const refusedId = idle.find((id) => !woken.includes(id)) as string;
      await refusedBy(
        (replicas[1] as ServerStore).appendEvents(refusedId, [{ type: 'user', message: { role: 'user', content: 'again' } }]),
        'max_live_per_user',
        limit,
        429,
      );
      await subject.agentIdle(woken[0] as string);
      await (replicas[1] as ServerStore).appendEvents(refusedId, [{ type: 'user', message: { role: 'user', content: 'again' } }]);
    });

    it('leaves sessions made with the shared token to the server total alone', async () => {
      const { store } = await openWith({ maxSessionsPerUser: 1, maxLivePerUser: 1 });
      for (let i = 0; i < 3; i++) await create(store, null);
      assert.equal(await store.countSessions(), 3);
    });

    it('deletes sessions archived longer than the retention, with their events, and nothing else', async () => {
      const { store } = await openWith({});
      const old = await create(store, alice);
      const live = await create(store, bob);
      await store.archive(old, { sub: 'alice', name: 'Alice' });
      const policy = { archivedDays: 30, auditDays: null };
      // The clock moved 29 days on: kept; 31 days on: deleted.
      assert.deepEqual(await store.sweep(retentionCutoffs(policy, new Date(Date.now() + 29 * DAY_MS))), { sessions: 0, auditRows: 0 });
      assert.equal((await store.getSession(old)).session_status, 'archived');
      assert.deepEqual(await store.sweep(retentionCutoffs(policy, new Date(Date.now() + 31 * DAY_MS))), { sessions: 1, auditRows: 0 });
      await assert.rejects(store.getSession(old), (err: unknown) => err instanceof SessionsError && err.status === 404);
      await assert.rejects(store.readEvents(old, null), (err: unknown) => err instanceof SessionsError && err.status === 404);
      assert.equal((await store.getSession(live)).session_status, 'running');
      assert.ok((await store.readEvents(live, null)).data.length > 0);
      assert.equal(await store.countSessions(), 1);
    });
  });
}

// One contract, both stores: the JSONL journal (a SessionHost over FileSessionStore) and
// PostgreSQL (a throwaway cluster of Debian's postgresql). Whatever the server's routes rely on
// holds the same on either: numbering, paging, idempotent retries, a decision counted once, every
// limit, archive, and the wake-up after a commit.
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AgentContext } from '../../../src/agents/agent';
import { SessionHost, type SessionHostLimits } from '../../../src/service/host/sessionHost';
import { FileSessionStore } from '../../../src/service/store/sessionStore';
import { JournalServerStore } from '../../../src/service/store/journalStore';
import { SessionLeases } from '../../../src/service/store/postgres/leases';
import { PostgresServerStore } from '../../../src/service/store/postgres/postgresStore';
import { MIGRATIONS, migrate } from '../../../src/service/store/postgres/migrations';
import { openPool } from '../../../src/service/store/postgres/database';
import type { ServerStore } from '../../../src/service/store/serverStore';
import type { SessionOwner, Visibility } from '../../../src/service/identity/sessionOwner';
import { SessionsError } from '../../../src/core/errors';
import { setPlanModeEvent, userMessageEvent } from '../../../src/core/protocol';
import { sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import { tempDir } from '../../support/serverProcess';
import { waitFor } from '../../support/wait';
import { canUseTool } from '../../support/sessionEvents';

interface StoreUnderTest {
  store: ServerStore;
  /** The session's agent asks for a decision on a plan (a can_use_tool control_request). */
  agentAsks(sessionId: string, requestId: string): Promise<void>;
  close(): Promise<void>;
}

type OpenStore = (limits?: Partial<SessionHostLimits>) => Promise<StoreUnderTest>;

let cluster: PostgresCluster | undefined;

const openJournal: OpenStore = async (limits) => {
  const contexts = new Map<string, AgentContext>();
  const host = await SessionHost.open({
    store: new FileSessionStore(tempDir('ultraplan-contract-')),
    ...(limits ? { limits } : {}),
    // The agent is not under test here: it only says what the test tells it to.
    agentFactory: ({ sessionId }) => ({
      label: 'contract agent',
      start: async (ctx) => void contexts.set(sessionId, ctx),
      onUserMessage: () => {},
      onDecision: () => {},
      stop: async () => {},
    }),
  });
  const store = new JournalServerStore(host, 'journal');
  return {
    store,
    async agentAsks(sessionId, requestId) {
      contexts.get(sessionId)?.emit(planRequest(requestId));
      await waitFor(async () => (await store.readEvents(sessionId, null, 1000)).data.some((e) => e.request_id === requestId), {
        message: `the plan request ${requestId} stored`,
        timeoutMs: 10_000,
      });
    },
    close: () => store.close(),
  };
};

const openPostgres: OpenStore = async (limits) => {
  const pg = cluster as PostgresCluster;
  const connectionString = await pg.createDatabase();
  const store = await PostgresServerStore.open({ connectionString, ...(limits ? { limits } : {}) });
  const leases = new SessionLeases(store.pool, 'contract-worker', 60_000, () => {});
  const held = new Map<string, number>();
  return {
    store,
    async agentAsks(sessionId, requestId) {
      // Claims sessions (oldest first) until this one is held, as a worker would.
      while (!held.has(sessionId)) {
        const claimed = await leases.claim();
        if (!claimed) throw new Error(`session ${sessionId} could not be claimed`);
        held.set(claimed.sessionId, claimed.epoch);
      }
      await leases.write({ sessionId, epoch: held.get(sessionId) as number }, [
        { t: 'event', event: planRequest(requestId), origin: 'agent' },
        { t: 'status', status: 'requires_action' },
      ]);
    },
    close: () => store.close(),
  };
};

for (const [name, open] of [
  ['journal', openJournal],
  ['postgres', openPostgres],
] as const) {
  describe(`ServerStore contract: ${name}`, function () {
    this.timeout(60_000);
    let subject: StoreUnderTest;
    let store: ServerStore;
    const others: StoreUnderTest[] = [];

    before(async () => {
      if (name === 'postgres') cluster = await sharedPostgresCluster();
    });
    beforeEach(async () => {
      subject = await open();
      store = subject.store;
    });
    afterEach(async () => {
      await subject.close();
      for (const other of others.splice(0)) await other.close();
    });

    async function openWith(limits: Partial<SessionHostLimits>): Promise<ServerStore> {
      const other = await open(limits);
      others.push(other);
      return other.store;
    }

    it('creates a session, reads it back, and lists sessions newest first with a cursor', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(await create(store, `  Plan ${i}  `));
      const got = await store.getSession(ids[0] as string);
      assert.equal(got.title, 'Plan 0');
      assert.equal(got.session_status, 'running');
      assert.deepEqual(got.session_context, { sources: [], outcomes: [], model: 'contract' });

      const first = await store.listSessions(2, null);
      assert.deepEqual(
        first.data.map((s) => s.id),
        [ids[2], ids[1]],
      );
      assert.equal(first.nextCursor, ids[1]);
      const second = await store.listSessions(2, first.nextCursor);
      assert.deepEqual(
        second.data.map((s) => s.id),
        [ids[0]],
      );
      assert.equal(second.nextCursor, null);
      await refused(store.listSessions(2, 'session_never'), 400, /next_cursor/);
      await refused(store.getSession('session_never'), 404, /no session/);
      assert.equal(await store.countSessions(), 3);
    });

    it('numbers events per session and pages them by cursor', async () => {
      const id = await create(store);
      const other = await create(store);
      for (let i = 0; i < 3; i++) await store.appendEvents(id, [userMessageEvent(`reply ${i}`)]);
      await store.appendEvents(other, [userMessageEvent('elsewhere')]);

      const all = (await store.readEvents(id, null, 1000)).data;
      assert.deepEqual(
        all.map((e) => e.id),
        ['e_000000000001', 'e_000000000002', 'e_000000000003', 'e_000000000004', 'e_000000000005'],
      );
      assert.ok(all.every((e) => e.session_id === id && typeof e.uuid === 'string'));
      assert.deepEqual(
        (await store.readEvents(other, null, 1000)).data.map((e) => e.id),
        ['e_000000000001', 'e_000000000002', 'e_000000000003'],
      );

      const page = await store.readEvents(id, null, 2);
      assert.equal(page.has_more, true);
      assert.equal(page.last_id, 'e_000000000002');
      const rest = await store.readEvents(id, page.last_id, 1000);
      assert.deepEqual(
        rest.data.map((e) => e.id),
        ['e_000000000003', 'e_000000000004', 'e_000000000005'],
      );
      assert.equal(rest.has_more, false);
      assert.equal((await store.readEvents(id, 'e_000000000005', 10)).data.length, 0);
      await refused(store.readEvents(id, null, 0), 400, /limit/);
      await refused(store.readEvents('session_never', null, 10), 404, /no session/);
    });

    it("takes an event's uuid as its idempotency key: a retry is answered with what was stored", async () => {
      const id = await create(store);
      const uuid = randomUUID();
      const [first] = await store.appendEvents(id, [{ ...userMessageEvent('once'), uuid }]);
      assert.equal(first?.duplicate, false);
      const [again] = await store.appendEvents(id, [{ ...userMessageEvent('once'), uuid }]);
      assert.equal(again?.duplicate, true);
      assert.equal(again?.event.id, first?.event.id);

      const other = randomUUID();
      const batch = await store.appendEvents(id, [
        { ...userMessageEvent('twice in a batch'), uuid: other },
        { ...userMessageEvent('twice in a batch'), uuid: other },
      ]);
      assert.deepEqual(
        batch.map((a) => a.duplicate),
        [false, true],
      );
      assert.equal(batch[1]?.event.id, batch[0]?.event.id);
      const texts = (await store.readEvents(id, null, 1000)).data.filter((e) => e.type === 'user').map((e) => e.uuid);
      assert.equal(texts.filter((u) => u === uuid).length, 1);
      assert.equal(texts.filter((u) => u === other).length, 1);
    });

    it('answers a mixed batch in order: a stored uuid, a new one, its repeat, and one with no uuid', async () => {
      const id = await create(store);
      const kept = randomUUID();
      const [stored] = await store.appendEvents(id, [{ ...userMessageEvent('kept'), uuid: kept }]);
      const fresh = randomUUID();
      const batch = await store.appendEvents(id, [
        { ...userMessageEvent('kept'), uuid: kept },
        { ...userMessageEvent('fresh'), uuid: fresh },
        { ...userMessageEvent('fresh'), uuid: fresh },
        userMessageEvent('no uuid'),
      ]);
      assert.deepEqual(
        batch.map((a) => [a.event.id, a.duplicate]),
        [
          [stored?.event.id, true],
          ['e_000000000004', false],
          ['e_000000000004', true],
          ['e_000000000005', false],
        ],
      );
      const all = (await store.readEvents(id, null, 1000)).data;
      assert.deepEqual(
        all.map((e) => e.id),
        ['e_000000000001', 'e_000000000002', 'e_000000000003', 'e_000000000004', 'e_000000000005'],
      );
      // What an append answers is what a reader later reads, member for member.
      assert.deepEqual(all.slice(2), [stored?.event, batch[1]?.event, batch[3]?.event]);
    });

    it('numbers concurrent appends to one session without a gap, each uuid once, retries included', async () => {
      const id = await create(store);
      const uuids = Array.from({ length: 30 }, () => randomUUID());
      // Every event sent twice at once (a client retrying while its first POST is in flight).
      const answers = await Promise.all(
        [...uuids, ...uuids].map((uuid, n) => store.appendEvents(id, [{ ...userMessageEvent(`concurrent ${n % 30}`), uuid }])),
      );
      const all = (await store.readEvents(id, null, 1000)).data;
      assert.deepEqual(
        all.map((e) => e.id),
        Array.from({ length: 32 }, (_, i) => `e_${String(i + 1).padStart(12, '0')}`),
      );
      const stored = all.slice(2);
      assert.deepEqual(new Set(stored.map((e) => e.uuid)), new Set(uuids));
      uuids.forEach((uuid, n) => {
        const [first, second] = [answers[n]?.[0], answers[n + 30]?.[0]];
        assert.equal(first?.event.id, second?.event.id, `both sends of ${uuid} answered with one event`);
        assert.equal([first?.duplicate, second?.duplicate].filter(Boolean).length, 1);
        assert.deepEqual(
          stored.find((e) => e.uuid === uuid),
          first?.event,
        );
      });
    });

    it('counts a decision once: a second one is 409, one nobody asked for is 400', async () => {
      const id = await create(store);
      await subject.agentAsks(id, 'req_plan_1');
      await refused(store.appendEvents(id, [decision('req_unknown')]), 400, /no control_request req_unknown/);
      await refused(
        store.appendEvents(id, [userMessageEvent('and'), decision('req_plan_1'), decision('req_plan_1')]),
        409,
        /events\[2\]: control_request req_plan_1 was already answered/,
      );
      const [answer] = await store.appendEvents(id, [decision('req_plan_1')]);
      assert.equal(answer?.duplicate, false);
      await refused(store.appendEvents(id, [decision('req_plan_1')]), 409, /already answered/);
    });

    it('lets exactly one of 20 identical decisions sent at once win', async () => {
      const id = await create(store);
      await subject.agentAsks(id, 'req_race');
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => store.appendEvents(id, [decision('req_race')])));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as SessionsError).status, 409);
      const stored = (await store.readEvents(id, null, 1000)).data.filter((e) => e.type === 'control_response');
      assert.equal(stored.length, 1);
    });

    it('enforces the same limits, and a refused batch stores nothing', async () => {
      const limited = await openWith({ maxSessions: 2, maxEventsPerAppend: 2, maxEventBytes: 2_000 });
      const id = await create(limited);
      await create(limited);
      await refused(create(limited), 409, /limit of 2 sessions/);
      assert.equal(await limited.countSessions(), 2);

      const before = (await limited.readEvents(id, null, 1000)).data.length;
      await refused(
        limited.appendEvents(id, [userMessageEvent('a'), userMessageEvent('b'), userMessageEvent('c')]),
        400,
        /at most 2 events/,
      );
      await refused(limited.appendEvents(id, [userMessageEvent('x'.repeat(3_000))]), 413, /at most 2000 bytes/);
      await refused(limited.appendEvents(id, [userMessageEvent('fine'), { type: 'assistant' }]), 400, /only the agent writes/);
      await refused(limited.appendEvents(id, []), 400, /non-empty/);
      assert.equal((await limited.readEvents(id, null, 1000)).data.length, before);
    });

    it('archives once; an archived session takes no more events', async () => {
      const id = await create(store);
      await store.archive(id);
      assert.equal((await store.getSession(id)).session_status, 'archived');
      await refused(store.archive(id), 409, /already archived/);
      await refused(store.appendEvents(id, [userMessageEvent('late')]), 409, /archived/);
      await refused(store.archive('session_never'), 404, /no session/);
    });

    it('keeps each session’s owner, and lists and pages only what a visibility lets through', async () => {
      const alice: SessionOwner = { sub: 'alice', name: 'alice@example.com', groups: ['reviewers', 'dev'] };
      const bob: SessionOwner = { sub: 'bob', name: null, groups: ['ops'] };
      const a1 = await create(store, 'Alice 1', alice);
      const shared = await create(store, 'Shared token');
      const b1 = await create(store, 'Bob 1', bob);
      const a2 = await create(store, 'Alice 2', alice);
      assert.deepEqual(await store.getOwner(a1), alice);
      assert.equal(await store.getOwner(shared), null);
      await refused(store.getOwner('session_never'), 404, /no session/);
      assert.deepEqual((await store.getSession(a1)).owner, { id: 'alice', name: 'alice@example.com' });
      assert.equal((await store.getSession(shared)).owner, undefined);

      const ids = async (visibility: Visibility, limit = 10, cursor: string | null = null) =>
        (await store.listSessions(limit, cursor, visibility)).data.map((s) => s.id);
      assert.deepEqual(await ids(null), [a2, b1, shared, a1]);
      assert.deepEqual(await ids({ sub: 'alice', reviewGroups: [] }), [a2, a1]);
      assert.deepEqual(await ids({ sub: 'carol', reviewGroups: ['reviewers'] }), [a2, a1], 'a member of a review group alice is in');
      assert.deepEqual(await ids({ sub: 'carol', reviewGroups: ['ops', 'dev'] }), [a2, b1, a1]);
      assert.deepEqual(await ids({ sub: 'carol', reviewGroups: ['elsewhere'] }), []);
      const page = await store.listSessions(1, null, { sub: 'alice', reviewGroups: [] });
      assert.equal(page.nextCursor, a2);
      assert.deepEqual(await ids({ sub: 'alice', reviewGroups: [] }, 1, page.nextCursor), [a1]);
      await refused(store.listSessions(1, b1, { sub: 'alice', reviewGroups: [] }), 400, /next_cursor/);
    });

    it('wakes a watcher after a commit of its session', async () => {
      const id = await create(store);
      let woken = 0;
      const stop = store.watch(id, () => woken++);
      try {
        await store.appendEvents(id, [userMessageEvent('wake up')]);
        await waitFor(() => woken > 0, { message: 'the watcher woken', timeoutMs: 10_000 });
      } finally {
        stop();
      }
    });
  });
}

async function create(store: ServerStore, title = 'Plan the change', owner: SessionOwner | null = null): Promise<string> {
  const session = await store.createSession(
    {
      title,
      events: [
        { type: 'event', data: setPlanModeEvent('req_mode') },
        { type: 'event', data: userMessageEvent('Plan it') },
      ],
      session_context: { sources: [], outcomes: [], model: 'contract' },
    },
    undefined,
    owner,
  );
  return session.id;
}

const planRequest = (requestId: string) => canUseTool(requestId, `toolu_${requestId}`, '# Plan\n1. do it');

function decision(requestId: string) {
  return {
    type: 'control_response',
    response: { subtype: 'success', request_id: requestId, response: { behavior: 'allow', updatedInput: { plan: '# Plan\n1. do it' } } },
  };
}

async function refused(promise: Promise<unknown>, status: number, message: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof SessionsError, `expected a SessionsError, got ${String(err)}`);
    assert.equal(err.status, status, err.message);
    assert.match(err.message, message);
    return true;
  });
}

describe('PostgreSQL schema migrations', function () {
  this.timeout(60_000);

  it('are applied once when several servers start on a fresh database at the same time', async () => {
    const pg = await sharedPostgresCluster();
    const connectionString = await pg.createDatabase();
    const pools = Array.from({ length: 4 }, () => openPool(connectionString, () => {}));
    try {
      const applied = await Promise.all(pools.map((pool) => migrate(pool)));
      assert.deepEqual(
        applied.flat(),
        MIGRATIONS.map((m) => m.version),
      );
      const { rows } = await (pools[0] as (typeof pools)[0]).query('SELECT version FROM schema_migrations ORDER BY version');
      assert.deepEqual(
        rows.map((r: { version: number }) => r.version),
        MIGRATIONS.map((m) => m.version),
      );
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it('refuses a database whose schema is newer than this server knows', async () => {
    const pg = await sharedPostgresCluster();
    const connectionString = await pg.createDatabase();
    const pool = openPool(connectionString, () => {});
    try {
      await migrate(pool);
      await pool.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')");
      await assert.rejects(migrate(pool), /schema is version 999, newer than this ultraplan-server knows/);
    } finally {
      await pool.end();
    }
  });
});

// The PostgreSQL store's one-statement append (migration 3, appendFunction.ts) and its grouped
// announcements, on a real cluster: a database made by an older server takes the migration and
// goes on numbering where it was; the audit rows are written with the events; every session
// announced at once is told, and each announcement resolves only once it went.
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { announce, openPool, SESSION_CHANNEL } from '../../../src/service/store/postgres/database';
import { MIGRATIONS } from '../../../src/service/store/postgres/migrations';
import { PostgresServerStore } from '../../../src/service/store/postgres/postgresStore';
import { SessionLeases } from '../../../src/service/store/postgres/leases';
import { SessionsError } from '../../../src/core/errors';
import { userMessageEvent } from '../../../src/core/protocol';
import { sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import { canUseTool } from '../../support/sessionEvents';

describe('PostgreSQL one-statement append', function () {
  this.timeout(60_000);
  let cluster: PostgresCluster;

  before(async () => {
    cluster = await sharedPostgresCluster();
  });

  async function withClient<T>(connectionString: string, work: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ connectionString });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }

  it('migrates a database an older server made, and numbers on from its last event', async () => {
    const connectionString = await cluster.createDatabase();
    const id = 'session_made_by_version_2';
    await withClient(connectionString, async (client) => {
      // What a server that knew migrations 1 and 2 left: its schema and a session of 3 events.
      await client.query(
        'CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      for (const migration of MIGRATIONS.filter((m) => m.version <= 2)) {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      }
      await client.query(
        "INSERT INTO sessions (id, title, created_at, updated_at, status, last_seq) VALUES ($1, 'old', now(), now(), 'running', 3)",
        [id],
      );
      for (let seq = 1; seq <= 3; seq++) {
        const body = { id: `e_${String(seq).padStart(12, '0')}`, ...userMessageEvent(`old ${seq}`), uuid: `old-${seq}`, session_id: id };
        await client.query("INSERT INTO events (session_id, seq, uuid, origin, body, at) VALUES ($1, $2, $3, 'client', $4, now())", [
          id,
          seq,
          body.uuid,
          JSON.stringify(body),
        ]);
      }
    });
    const logged: string[] = [];
    const store = await PostgresServerStore.open({ connectionString, log: (line) => logged.push(line) });
    try {
      assert.ok(
        logged.includes(
          `postgres: applied schema migrations ${MIGRATIONS.filter((m) => m.version > 2)
            .map((m) => m.version)
            .join(', ')}`,
        ),
        logged.join('\n'),
      );
      const [retried, next] = await store.appendEvents(id, [
        { ...userMessageEvent('old 2'), uuid: 'old-2' },
        { ...userMessageEvent('new'), uuid: randomUUID() },
      ]);
      assert.deepEqual([retried?.event.id, retried?.duplicate], ['e_000000000002', true]);
      assert.equal(retried?.event.type, 'user');
      assert.deepEqual([next?.event.id, next?.duplicate], ['e_000000000004', false]);
      assert.deepEqual((await store.readEvents(id, 'e_000000000003', 10)).data, [next?.event], 'the stored event is the one answered');
    } finally {
      await store.close();
    }
  });

  it('writes the audit rows with the events, numbered as they were stored, and none for a duplicate', async () => {
    const connectionString = await cluster.createDatabase();
    const store = await PostgresServerStore.open({ connectionString });
    const leases = new SessionLeases(store.pool, 'audit-worker', 60_000, () => {});
    try {
      const { id } = await store.createSession({ title: 'Audited', events: [{ type: 'event', data: userMessageEvent('Plan it') }] });
      const lease = await leases.claim();
      assert.equal(lease?.sessionId, id);
      await leases.write({ sessionId: id, epoch: lease?.epoch as number }, [
        { t: 'event', event: canUseTool('req_audit', 'toolu_audit', '# Plan'), origin: 'agent' },
      ]);
      const actor = { sub: 'user-carol', name: 'Carol' };
      const uuid = randomUUID();
      const decision = {
        type: 'control_response',
        response: { subtype: 'success', request_id: 'req_audit', response: { behavior: 'deny', message: 'no' } },
      };
      const answers = await store.appendEvents(id, [{ ...userMessageEvent('why'), uuid }, decision], actor);
      await store.appendEvents(id, [{ ...userMessageEvent('why'), uuid }], actor);
      const rows = await withClient(connectionString, async (client) => {
        const audit = await client.query(
          'SELECT actor_sub, actor_name, action, request_id, seq::int FROM audit WHERE session_id = $1 ORDER BY id',
          [id],
        );
        const decisions = await client.query('SELECT request_id, seq::int FROM decisions WHERE session_id = $1', [id]);
        const requests = await client.query('SELECT state FROM control_requests WHERE session_id = $1', [id]);
        return { audit: audit.rows, decisions: decisions.rows, requests: requests.rows };
      });
      assert.deepEqual(
        answers.map((a) => a.event.id),
        ['e_000000000003', 'e_000000000004'],
      );
      assert.deepEqual(rows.audit, [
        { actor_sub: 'user-carol', actor_name: 'Carol', action: 'reply', request_id: null, seq: 3 },
        { actor_sub: 'user-carol', actor_name: 'Carol', action: 'deny', request_id: 'req_audit', seq: 4 },
      ]);
      assert.deepEqual(rows.decisions, [{ request_id: 'req_audit', seq: 4 }]);
      assert.deepEqual(rows.requests, [{ state: 'answered' }]);
    } finally {
      await store.close();
    }
  });

  it('commits appends that arrive together in one statement; a refusal or an error in it is its own append’s alone', async () => {
    const connectionString = await cluster.createDatabase();
    const store = await PostgresServerStore.open({ connectionString });
    const leases = new SessionLeases(store.pool, 'batch-worker', 60_000, () => {});
    const statements: string[] = [];
    const poolQuery = store.pool.query.bind(store.pool) as (...args: unknown[]) => unknown;
    (store.pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const [config] = args as [string | { text: string }];
      statements.push(typeof config === 'string' ? config : config.text);
      return poolQuery(...args);
    };
    try {
      const create = async (title: string) =>
        (await store.createSession({ title, events: [{ type: 'event', data: userMessageEvent('Plan it') }] })).id;
      const sessions = [await create('one'), await create('two'), await create('three')];
      const archived = await create('archived');
      await store.archive(archived);
      // An agent event's uuid sent by a client: the events table refuses it (unique), which
      // undoes the statement it is in.
      const agentUuid = randomUUID();
      const lease = await leases.claim();
      await leases.write({ sessionId: lease?.sessionId as string, epoch: lease?.epoch as number }, [
        { t: 'event', event: { type: 'assistant', uuid: agentUuid, message: { role: 'assistant', content: [] } }, origin: 'agent' },
      ]);
      statements.length = 0;

      const sends = [
        ...Array.from({ length: 18 }, (_, n) => ({
          session: sessions[n % 3] as string,
          event: { ...userMessageEvent(`n ${n}`), uuid: randomUUID() },
        })),
        { session: archived, event: userMessageEvent('too late') },
        { session: lease?.sessionId as string, event: { ...userMessageEvent('stolen uuid'), uuid: agentUuid } },
      ];
      const results = await Promise.allSettled(sends.map(({ session, event }) => store.appendEvents(session, [event])));

      // The first two went alone (nothing else was waiting); the other 18 together, then, as
      // that statement was undone, each alone.
      const batches = statements.filter((text) => text.includes('ultraplan_append_batch')).length;
      assert.equal(batches, 2 + 1 + 18);
      results.slice(0, 18).forEach((result, n) => assert.equal(result.status, 'fulfilled', `append ${n}`));
      const [late, stolen] = results.slice(18);
      assert.equal(late?.status === 'rejected' && (late.reason as SessionsError).status, 409);
      assert.match(late?.status === 'rejected' ? String(late.reason) : '', /archived/);
      assert.equal(stolen?.status === 'rejected' && (stolen.reason as SessionsError).status, 409);
      for (const session of sessions) {
        const events = (await store.readEvents(session, null, 1000)).data;
        assert.deepEqual(
          events.map((e) => e.id),
          Array.from({ length: session === lease?.sessionId ? 8 : 7 }, (_, i) => `e_${String(i + 1).padStart(12, '0')}`),
          'six appends after the prompt (and the agent’s event), numbered without a gap',
        );
      }

      // Without the refused uuid, appends waiting together go as one statement.
      statements.length = 0;
      await Promise.all(
        Array.from({ length: 12 }, (_, n) => store.appendEvents(sessions[n % 3] as string, [userMessageEvent(`again ${n}`)])),
      );
      assert.equal(statements.filter((text) => text.includes('ultraplan_append_batch')).length, 3);
    } finally {
      await store.close();
    }
  });

  it('tells every session announced at once, and resolves each announcement once it went', async () => {
    const connectionString = await cluster.createDatabase();
    const pool = openPool(connectionString, () => {});
    const listener = new Client({ connectionString });
    const heard = new Set<string>();
    try {
      await listener.connect();
      listener.on('notification', (message) => {
        if (message.channel === SESSION_CHANNEL && message.payload) heard.add(message.payload);
      });
      await listener.query(`LISTEN ${SESSION_CHANNEL}`);
      const ids = Array.from({ length: 50 }, (_, i) => `session_announced_${i}`);
      await Promise.all([...ids, ...ids].map((id) => announce(pool, id, () => {})));
      // The listener's connection delivers what was sent before it answers this round trip.
      await listener.query('SELECT 1');
      assert.deepEqual(new Set(ids), heard);
    } finally {
      await listener.end();
      await pool.end();
    }
  });
});

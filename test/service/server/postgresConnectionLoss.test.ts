// What a replica sees when its database connections fail under it, on a real PostgreSQL: a
// connection terminated while a transaction holds it, and a pool with every connection busy. Both
// must be a 503 the client retries, and the process must live on (pg emits 'error' on a
// checked-out client whose connection drops; with no listener that ended the process, which is
// how a database restart under load killed replicas in the team-service bench).
import * as assert from 'node:assert/strict';
import { Client } from 'pg';
import { SessionsError } from '../../../src/core/errors';
import { openPool, query, transaction } from '../../../src/service/store/postgres/database';
import { sharedPostgresCluster } from '../../support/postgresCluster';

const isUnavailable503 = (err: unknown) => err instanceof SessionsError && err.status === 503 && err.kind === 'transient';

describe('PostgreSQL connections lost under a replica', function () {
  this.timeout(60_000);
  let url: string;

  before(async () => {
    url = await (await sharedPostgresCluster()).createDatabase();
  });

  it('a connection terminated while a transaction holds it: a 503, no uncaught error, and the pool serves the next request', async () => {
    const pool = openPool(url, () => {});
    const admin = new Client({ connectionString: url });
    await admin.connect();
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    // Mocha's own handler would fail the test too; this one names the cause.
    process.prependListener('uncaughtException', onUncaught);
    try {
      await assert.rejects(
        transaction(pool, async (client) => {
          const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
          await admin.query('SELECT pg_terminate_backend($1)', [pid]);
          // The connection ends while we hold it between two statements.
          await new Promise((resolve) => setTimeout(resolve, 300));
          await client.query('SELECT 1');
        }),
        isUnavailable503,
      );
      assert.deepEqual(uncaught, []);
      const [row] = await query<{ one: number }>(pool, 'SELECT 1 AS one');
      assert.equal(row?.one, 1);
    } finally {
      process.off('uncaughtException', onUncaught);
      await admin.end();
      await pool.end();
    }
  });

  it('every pooled connection busy past the wait: a 503 to retry, not a 500', async () => {
    const pool = openPool(url, () => {}, 1);
    const busy = await pool.connect();
    try {
      await assert.rejects(query(pool, 'SELECT 1'), isUnavailable503);
      await assert.rejects(
        transaction(pool, async () => {}),
        isUnavailable503,
      );
    } finally {
      busy.release();
      await pool.end();
    }
  });
});

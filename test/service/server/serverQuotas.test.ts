// One user cannot fill the real server for everyone (the server process, a stand-in OIDC issuer,
// the journal and two PostgreSQL replicas): their own limit answers 429 with the limit's name and
// value, other users still create, archiving frees a place, and creations sent at once to two
// replicas cannot pass a user's limit together.
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client } from 'pg';
import { decodeLine, encodeLine, type LogRecord } from '../../../src/service/store/sessionStore';
import { startOidcIssuer, type OidcIssuer } from '../../support/oidcIssuer';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { startServer, tempDir, type ServerProcess } from '../../support/serverProcess';
import { createRequest } from '../hostTestKit';
import { call, type Answer } from './serverTestKit';
import { waitFor } from '../../support/wait';

describe('ultraplan-server fair shares: per-user limits over HTTP', function () {
  this.timeout(120_000);
  let issuer: OidcIssuer;
  let alice: string;
  let bob: string;
  let servers: ServerProcess[] = [];

  before(async () => {
    issuer = await startOidcIssuer();
    alice = await issuer.token('user-alice', { email: 'alice@example.com' });
    bob = await issuer.token('user-bob', { email: 'bob@example.com' });
  });
  after(() => issuer.close());
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    servers = [];
  });

  const oidcArgs = (...limits: string[]) => ['--oidc-issuer', issuer.url, '--oidc-audience', issuer.audience, ...limits];
  let turn = 0;
  const as = (token: string, method: string, path: string, body?: unknown): Promise<Answer> => {
    const server = servers[turn++ % servers.length] as ServerProcess;
    return call(server, method, path, body, { headers: server.headers({ authorization: `Bearer ${token}` }) });
  };
  const create = (token: string) => as(token, 'POST', '/v1/sessions', createRequest('plan it'));

  it('journal: a user past their session limit gets 429 naming it; others create; archiving frees a place', async () => {
    servers = [
      await startServer({ extraArgs: oidcArgs('--max-sessions', '10', '--max-sessions-per-user', '2', '--max-live-per-user', '5') }),
    ];
    const first = await create(alice);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal((await create(alice)).status, 200);
    const refused = await create(alice);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.type, 'rate_limit_error');
    assert.equal(refused.body.error.limit, 'max_sessions_per_user');
    assert.equal(refused.body.error.value, 2);
    assert.equal(refused.headers.get('retry-after'), null, 'only archiving frees a place');
    assert.equal((await create(bob)).status, 200, 'another user still creates');
    assert.equal((await as(alice, 'POST', `/v1/sessions/${first.body.id as string}/archive`, {})).status, 200);
    assert.equal((await create(alice)).status, 200, 'an archived session counts no more');
  });

  it('PostgreSQL: of 10 creations sent at once to two replicas, max-live-per-user pass; the rest are 429 with Retry-After', async () => {
    const store = await (await sharedPostgresCluster()).createDatabase();
    const args = oidcArgs('--max-sessions-per-user', '50', '--max-live-per-user', '3');
    servers = await Promise.all([0, 1].map(() => startServer({ store, extraArgs: args })));
    const answers = await Promise.all(Array.from({ length: 10 }, () => create(alice)));
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429, 429, 429, 429, 429], JSON.stringify(answers.map((a) => a.body)));
    for (const answer of answers.filter((a) => a.status === 429)) {
      assert.equal(answer.body.error.limit, 'max_live_per_user');
      assert.equal(answer.body.error.value, 3);
      assert.equal(answer.headers.get('retry-after'), '30');
    }
    assert.equal((await create(bob)).status, 200);
  });

  describe('--retain-archived-days: a server deletes at start what was archived longer ago', () => {
    const FORTY_DAYS_AGO = () => new Date(Date.now() - 40 * 24 * 60 * 60 * 1000);

    it('journal: the session archived 40 days ago is gone after a restart with 30 days; the other stays', async () => {
      const dataDir = tempDir('ultraplan-retention-');
      servers = [await startServer({ dataDir })];
      const [server] = servers as [ServerProcess];
      const created = async () => (await call(server, 'POST', '/v1/sessions', createRequest('plan it'))).body.id as string;
      const old = await created();
      const kept = await created();
      assert.equal((await call(server, 'POST', `/v1/sessions/${old}/archive`, {})).status, 200);
      await server.stop();
      // The archive's journal line, dated 40 days back (with its checksum made again, as the server writes it).
      const journal = path.join(dataDir, 'sessions', old, 'log.jsonl');
      const lines = readFileSync(journal, 'utf8').trimEnd().split('\n');
      const dated = lines.map((line) => {
        const record = JSON.parse(decodeLine(line, true).json) as LogRecord;
        return record.t === 'status' && record.status === 'archived' ? encodeLine({ ...record, at: FORTY_DAYS_AGO().toISOString() }) : line;
      });
      assert.notDeepEqual(dated, lines);
      writeFileSync(journal, `${dated.join('\n')}\n`);

      servers = [await startServer({ dataDir, extraArgs: ['--retain-archived-days', '30'] })];
      const [again] = servers as [ServerProcess];
      await waitFor(async () => (await call(again, 'GET', `/v1/sessions/${old}`)).status === 404, {
        message: 'the old session deleted',
        timeoutMs: 10_000,
      });
      assert.equal((await call(again, 'GET', `/v1/sessions/${kept}`)).status, 200);
      await waitFor(() => /retention: deleted 1 archived session/.test(again.stderr()), { message: 'the sweep logged', timeoutMs: 10_000 });
      assert.deepEqual(readdirSync(path.join(dataDir, 'sessions')), [kept], 'the folder is gone, nothing half removed');
    });

    it('PostgreSQL: a replica started with 30 days deletes the session archived 40 days ago', async () => {
      const store = await (await sharedPostgresCluster()).createDatabase();
      servers = [await startServer({ store })];
      const [server] = servers as [ServerProcess];
      const old = (await call(server, 'POST', '/v1/sessions', createRequest('plan it'))).body.id as string;
      assert.equal((await call(server, 'POST', `/v1/sessions/${old}/archive`, {})).status, 200);
      const db = new Client({ connectionString: store });
      await db.connect();
      try {
        await db.query('UPDATE sessions SET archived_at = $2 WHERE id = $1', [old, FORTY_DAYS_AGO()]);
      } finally {
        await db.end();
      }
      servers.push(await startServer({ store, extraArgs: ['--retain-archived-days', '30'] }));
      await waitFor(async () => (await call(server, 'GET', `/v1/sessions/${old}`)).status === 404, {
        message: 'the old session deleted',
        timeoutMs: 10_000,
      });
    });
  });
});

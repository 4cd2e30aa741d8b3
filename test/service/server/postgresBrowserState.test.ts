// The review page's sign-in state on PostgreSQL, as two replicas (two stores, two pools) on one
// real database see it: a browser session started on one is live on the other and ended on both
// by one sign-out; a one-time link redeemed on both at the same moment works once; a sign-in under
// way is finished once; expiry is the database's; only digests are stored; retention takes the
// rows of a deleted session, and the periodic sweep the expired ones.
import * as assert from 'node:assert/strict';
import { Client } from 'pg';
import { PostgresServerStore } from '../../../src/service/store/postgres/postgresStore';
import { BrowserSessions, digest } from '../../../src/service/http/reviewPage/browserSessions';
import type { UserPrincipal } from '../../../src/service/identity/sessionOwner';
import { createRequest } from '../hostTestKit';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { setTimeout as delay } from 'node:timers/promises';

const alice: UserPrincipal = {
  kind: 'user',
  sub: 'user-alice',
  name: 'alice@example.com',
  groups: ['reviewers'],
  reviewGroups: ['reviewers'],
  admin: false,
};
const LINKS_AT_ONCE = 40;

describe('review page browser state on PostgreSQL (two replicas)', function () {
  this.timeout(60_000);
  let url: string;
  let stores: PostgresServerStore[] = [];
  let db: Client;

  beforeEach(async () => {
    url = await (await sharedPostgresCluster()).createDatabase();
    stores = await Promise.all([0, 1].map(() => PostgresServerStore.open({ connectionString: url })));
    db = new Client({ connectionString: url });
    await db.connect();
  });
  afterEach(async () => {
    await db.end();
    for (const store of stores.splice(0)) await store.close();
  });

  const replica = (i: number, times: { linkTtlMs?: number; idleMs?: number; maxMs?: number } = {}) =>
    new BrowserSessions({ ...times, store: (stores[i] as PostgresServerStore).browserState });

  it('a session started on one replica is live on the other; a sign-out on either ends it on both', async () => {
    const [a, b] = [replica(0), replica(1)];
    const { id, session } = await a.start(alice, null);
    const onB = await b.find(id);
    assert.ok(!('expired' in onB), JSON.stringify(onB));
    assert.deepEqual(onB.principal, alice, 'the principal round-trips through the row');
    assert.equal(onB.csrfToken, session.csrfToken, 'the CSRF token is the same on every replica');
    await b.end(id);
    assert.match(((await a.find(id)) as { expired: string }).expired, /signed out/);
    assert.match(((await b.find(id)) as { expired: string }).expired, /signed out/);
  });

  it('a due principal is renewed once across both replicas, read from the refresh token only this cookie unseals', async () => {
    const sent: string[] = [];
    const renew = async (refreshToken: string) => {
      sent.push(refreshToken);
      await delay(50);
      return {
        principal: { ...alice, groups: [], reviewGroups: [] },
        renewal: { refreshToken: `refresh-${sent.length + 1}`, ttlMs: 60_000 },
      };
    };
    const on = (i: number) => new BrowserSessions({ store: (stores[i] as PostgresServerStore).browserState, renew });
    const [a, b] = [on(0), on(1)];
    const { id } = await a.start(alice, null, { refreshToken: 'refresh-1', ttlMs: 1500 });
    const row = await db.query('SELECT sealed_refresh FROM browser_sessions');
    assert.equal(row.rows.length, 1);
    assert.ok(!String(row.rows[0].sealed_refresh).includes('refresh-1'), 'sealed, not the token');
    assert.deepEqual(((await b.find(id)) as { principal: UserPrincipal }).principal.groups, ['reviewers'], 'not due yet');
    await delay(1600);
    const found = await Promise.all([a.find(id), b.find(id), a.find(id), b.find(id)]);
    assert.deepEqual(sent, ['refresh-1'], 'one renewal for four requests on two replicas');
    assert.ok(found.every((f) => !('expired' in f)));
    assert.deepEqual(((await b.find(id)) as { principal: UserPrincipal }).principal.groups, [], 'every replica sees the renewed groups');
    const other = await a.start(alice, null, { refreshToken: 'refresh-x', ttlMs: 0 });
    const noRefresh = await a.start(alice, null, { refreshToken: undefined, ttlMs: 0 });
    assert.match(((await b.find(noRefresh.id)) as { expired: string }).expired, /sign-in has expired/);
    await b.find(other.id);
    assert.deepEqual(sent, ['refresh-1', 'refresh-x']);
  });

  it(`a one-time link redeemed on both replicas at the same moment works once (${LINKS_AT_ONCE} links)`, async () => {
    const [a, b] = [replica(0), replica(1)];
    const tokens = await Promise.all(Array.from({ length: LINKS_AT_ONCE }, () => a.mintLink('session_x', alice)));
    const outcomes = await Promise.all(
      tokens.map(async ({ token }) => {
        const both = await Promise.all([a.redeemLink(token, 'session_x'), b.redeemLink(token, 'session_x')]);
        return both.filter((r) => 'id' in r).length;
      }),
    );
    assert.deepEqual(outcomes, Array(LINKS_AT_ONCE).fill(1));
    const { rows } = await db.query('SELECT count(*)::int AS n FROM review_links');
    assert.equal(rows[0].n, 0, 'every link is spent');
  });

  it('stores digests only: no cookie, link token or CSRF token is in any row', async () => {
    const a = replica(0);
    const { id, session } = await a.start(alice, 'session_x');
    const { token } = await a.mintLink('session_x', alice);
    const dump = JSON.stringify([
      (await db.query('SELECT * FROM browser_sessions')).rows,
      (await db.query('SELECT * FROM review_links')).rows,
    ]);
    for (const secret of [id, token, session.csrfToken]) assert.ok(!dump.includes(secret), 'a secret is in the database');
    assert.ok(dump.includes(digest(id)) && dump.includes(digest(token)), 'their digests are the keys');
  });

  it("expiry is the database's: an idle session, an expired link and sign-in are refused, then swept", async () => {
    const a = replica(0, { linkTtlMs: 300, idleMs: 400, maxMs: 60_000 });
    const idle = await a.start(alice, null);
    const { token } = await a.mintLink('session_x', alice);
    const state = (stores[0] as PostgresServerStore).browserState;
    assert.equal(await state.putSignIn('s'.repeat(43), 'sealed', 300), true);
    await delay(600);
    assert.match(((await a.find(idle.id)) as { expired: string }).expired, /expired/);
    assert.deepEqual(await a.redeemLink(token, 'session_x'), { refused: 'this review link has expired; ask for a new link' });
    assert.equal(await state.takeSignIn('s'.repeat(43)), null);
    const lifetime = replica(1, { idleMs: 60_000, maxMs: 500 });
    const capped = await lifetime.start(alice, null);
    assert.ok(!('expired' in (await lifetime.find(capped.id))));
    await delay(600);
    assert.match(((await lifetime.find(capped.id)) as { expired: string }).expired, /expired/, 'the lifetime ends it, used or not');
    assert.equal(await state.putSignIn('t'.repeat(43), 'sealed', 300), true);
    await delay(400);
    assert.ok((await state.sweepExpired()) >= 2, 'the expired rows are deleted');
    const left = await db.query(
      'SELECT (SELECT count(*) FROM browser_sessions)::int + (SELECT count(*) FROM review_links)::int + (SELECT count(*) FROM browser_sign_ins)::int AS n',
    );
    assert.equal(left.rows[0].n, 0);
  });

  it('a sign-in under way is taken once, whichever replica the issuer sends the browser back to', async () => {
    const [one, two] = stores.map((s) => s.browserState);
    const key = digest('some-state');
    assert.equal(await one?.putSignIn(key, 'sealed-blob', 60_000), true);
    const taken = await Promise.all([one?.takeSignIn(key), two?.takeSignIn(key)]);
    assert.deepEqual(
      taken.filter((t) => t !== null),
      ['sealed-blob'],
    );
  });

  it("retention deletes a deleted session's links and link-scoped browser sessions with it", async () => {
    const store = stores[0] as PostgresServerStore;
    const id = (await store.createSession(createRequest('plan it', 'kept briefly'), undefined, null)).id;
    const a = replica(0);
    await a.mintLink(id, alice);
    const scoped = await a.start(alice, id);
    const unscoped = await a.start(alice, null);
    await store.archive(id);
    assert.deepEqual(await store.sweep({ archivedBefore: new Date(Date.now() + 60_000), auditBefore: null }), {
      sessions: 1,
      auditRows: 0,
    });
    const links = await db.query('SELECT count(*)::int AS n FROM review_links WHERE session_id = $1', [id]);
    assert.equal(links.rows[0].n, 0);
    assert.match(((await a.find(scoped.id)) as { expired: string }).expired, /no browser session/);
    assert.ok(!('expired' in (await a.find(unscoped.id))), 'a sign-in for every session the person sees stays');
  });
});

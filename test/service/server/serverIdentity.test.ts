// Per-user identity on the real server process, against a stand-in OIDC issuer on 127.0.0.1
// (discovery and JWKS, tokens signed by jose): on the journal (one server) and on PostgreSQL (two
// replicas and a worker). Each user sees and decides only their own sessions, those shared in a
// review group, or all as an admin; another user's token is 403 on every route of a session; a
// token that is expired, forged, for another issuer or audience, unsigned, or HMAC-signed with
// the issuer's public key is 401; every decision leaves an audit line naming its user.
import { strict as assert } from 'node:assert';
import { Client } from 'pg';
import { controlResponseEvent, userMessageEvent } from '../../../src/core/protocol';
import { SessionsError } from '../../../src/core/errors';
import { connectServer } from '../../../src/client/serverConnection';
import { startOidcIssuer, type OidcIssuer } from '../../support/oidcIssuer';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { waitFor } from '../../support/wait';
import {
  EXAMPLES_DIR,
  runServerCli,
  serversPerTest,
  startServer,
  startWorker,
  tempDir,
  type ServerProcess,
  type WorkerProcess,
} from '../../support/serverProcess';
import { createRequest } from '../hostTestKit';
import { assertError, call, type Answer } from './serverTestKit';

const REVIEW_GROUP = 'team-plans';
const ADMIN_GROUP = 'ultraplan-admins';
const SKEW_SECONDS = 5;

interface Users {
  alice: string;
  /** Shares alice's review group. */
  bob: string;
  /** In a review group alice is not in. */
  mallory: string;
  admin: string;
}

describe('ultraplan-server identity: per-user OIDC tokens', function () {
  this.timeout(120_000);
  let issuer: OidcIssuer;
  let users: Users;

  before(async () => {
    issuer = await startOidcIssuer();
    users = {
      alice: await issuer.token('user-alice', { email: 'alice@example.com', groups: [REVIEW_GROUP, 'engineering'] }),
      bob: await issuer.token('user-bob', { name: 'Bob', groups: [REVIEW_GROUP] }),
      mallory: await issuer.token('user-mallory', { email: 'mallory@example.com', groups: ['other-review', 'engineering'] }),
      admin: await issuer.token('user-admin', { groups: [ADMIN_GROUP] }),
    };
  });
  after(() => issuer.close());

  const oidcArgs = () => [
    '--oidc-issuer',
    issuer.url,
    '--oidc-audience',
    issuer.audience,
    '--oidc-review-groups',
    `${REVIEW_GROUP},other-review`,
    '--oidc-admin-group',
    ADMIN_GROUP,
    '--oidc-clock-skew-seconds',
    String(SKEW_SECONDS),
  ];

  for (const kind of ['journal', 'postgres'] as const) {
    describe(`on the ${kind === 'journal' ? 'journal (one server)' : 'PostgreSQL store (two replicas, one worker)'}`, () => {
      let servers: ServerProcess[] = [];
      let worker: WorkerProcess | undefined;
      let database: string | undefined;
      /** Each request goes to the next server: with replicas, any of them answers for any session. */
      let turn = 0;
      const as = (token: string, method: string, path: string, body?: unknown): Promise<Answer> => {
        const server = servers[turn++ % servers.length] as ServerProcess;
        return call(server, method, path, body, { headers: server.headers({ authorization: `Bearer ${token}` }) });
      };
      const createAs = async (token: string, prompt: string): Promise<string> => {
        const answer = await as(token, 'POST', '/v1/sessions', createRequest(prompt));
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        return answer.body.id as string;
      };
      const planRequest = (token: string, id: string): Promise<any> =>
        waitFor(
          async () => {
            const page = await as(token, 'GET', `/v1/sessions/${id}/events?limit=1000`);
            assert.equal(page.status, 200, JSON.stringify(page.body));
            return page.body.data.find((e: any) => e.type === 'control_request' && e.request?.subtype === 'can_use_tool');
          },
          { message: `the plan request in session ${id}`, timeoutMs: 30_000 },
        );

      before(async () => {
        const scenario = `scripted:${EXAMPLES_DIR}/approve.json`;
        if (kind === 'journal') {
          servers = [await startServer({ agent: scenario, extraArgs: oidcArgs() })];
        } else {
          database = await (await sharedPostgresCluster()).createDatabase();
          const store = database;
          servers = await Promise.all([0, 1].map(() => startServer({ store, extraArgs: oidcArgs() })));
          worker = await startWorker({ store, agent: scenario });
        }
      });
      after(async () => {
        await Promise.all([...servers.map((s) => s.stop()), worker?.stop()]);
      });

      it('a session belongs to its creator: lists show one’s own, those shared in a review group, and all to an admin', async () => {
        const mine = await createAs(users.alice, 'Plan alice’s change');
        const theirs = await createAs(users.mallory, 'Plan mallory’s change');
        const listed = async (token: string) => {
          const older = await as(token, 'GET', '/v1/sessions');
          const current = await as(token, 'GET', '/v1/code/sessions?limit=100');
          assert.equal(older.status, 200);
          assert.equal(current.status, 200);
          const ids = older.body.data.map((s: any) => s.id as string);
          assert.deepEqual(
            current.body.data.map((s: any) => (s.id as string).replace(/^cse_/, 'session_')),
            [...ids].reverse(),
            'both wires list the same sessions',
          );
          return ids;
        };
        const alice = await listed(users.alice);
        assert.ok(alice.includes(mine) && !alice.includes(theirs), `alice lists ${alice.join(', ')}`);
        const mallory = await listed(users.mallory);
        assert.ok(mallory.includes(theirs) && !mallory.includes(mine), `mallory lists ${mallory.join(', ')}`);
        const bob = await listed(users.bob);
        assert.ok(bob.includes(mine) && !bob.includes(theirs), 'bob sees alice’s session through their review group, not mallory’s');
        const admin = await listed(users.admin);
        assert.ok(admin.includes(mine) && admin.includes(theirs), 'the admin sees every session');

        const read = await as(users.alice, 'GET', `/v1/sessions/${mine}`);
        assert.deepEqual(read.body.owner, { id: 'user-alice', name: 'alice@example.com' });
        const code = await as(users.bob, 'GET', `/v1/code/sessions/${mine.replace('session_', 'cse_')}`);
        assert.equal(code.status, 200);
        assert.equal((await as(users.admin, 'GET', `/v1/sessions/${theirs}/events`)).status, 200);
      });

      it('another user’s token is 403 on every route of the session, and changes nothing', async () => {
        const id = await createAs(users.alice, 'Plan a private change');
        const request = await planRequest(users.alice, id);
        const before = (await as(users.alice, 'GET', `/v1/sessions/${id}/events?limit=1000`)).body.data.length;
        const cse = id.replace('session_', 'cse_');
        const decision = controlResponseEvent(request.request_id, { behavior: 'allow', updatedInput: request.request.input });
        const attempts: Array<[string, string, unknown?]> = [
          ['GET', `/v1/sessions/${id}`],
          ['GET', `/v1/sessions/${id}/events`],
          ['POST', `/v1/sessions/${id}/events`, { events: [decision] }],
          ['POST', `/v1/sessions/${id}/events`, { events: [userMessageEvent('ignore the plan')] }],
          ['POST', `/v1/sessions/${id}/archive`, {}],
          ['GET', `/v1/code/sessions/${cse}`],
          ['GET', `/v1/code/sessions/${cse}/events?sort_order=asc`],
          ['POST', `/v1/code/sessions/${cse}/events`, { events: [{ payload: decision }] }],
          ['POST', `/v1/code/sessions/${cse}/archive`, {}],
        ];
        for (const [method, path, body] of attempts) {
          assertError(await as(users.mallory, method, path, body), 403, 'permission_error', /belongs to another user/);
        }
        for (const path of [`/v1/sessions/${id}/events/stream`, `/v1/code/sessions/${cse}/events/stream`]) {
          const server = servers[0] as ServerProcess;
          const response = await fetch(`${server.url}${path}`, { headers: server.headers({ authorization: `Bearer ${users.mallory}` }) });
          assert.equal(response.status, 403, `${path} streamed to another user`);
          assert.match(response.headers.get('content-type') ?? '', /application\/json/);
          await response.body?.cancel();
        }
        // A list cursor naming their session is as unknown as one never given: it reveals nothing.
        assert.equal((await as(users.mallory, 'GET', `/v1/code/sessions?cursor=${cse}`)).status, 400);
        const after = await as(users.alice, 'GET', `/v1/sessions/${id}`);
        assert.equal(after.body.session_status, 'requires_action');
        assert.equal((await as(users.alice, 'GET', `/v1/sessions/${id}/events?limit=1000`)).body.data.length, before);
      });

      it('a review-group member streams and decides; the audit names them', async () => {
        const id = await createAs(users.alice, 'Plan a shared change');
        const request = await planRequest(users.bob, id);
        const server = servers[0] as ServerProcess;
        const stream = await fetch(`${server.url}/v1/code/sessions/${id.replace('session_', 'cse_')}/events/stream`, {
          headers: server.headers({ authorization: `Bearer ${users.bob}` }),
        });
        assert.equal(stream.status, 200);
        const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
        const first = new TextDecoder().decode((await reader.read()).value);
        assert.match(first, /event: client_event/, 'the member’s stream carries the session’s events');
        await reader.cancel();

        const sent = await as(users.bob, 'POST', `/v1/sessions/${id}/events`, {
          events: [controlResponseEvent(request.request_id, { behavior: 'allow', updatedInput: request.request.input })],
        });
        assert.equal(sent.status, 200, JSON.stringify(sent.body));
        const reply = await as(users.alice, 'POST', `/v1/sessions/${id}/events`, {
          events: [userMessageEvent('thanks')],
        });
        assert.equal(reply.status, 200, JSON.stringify(reply.body));

        const lines = servers
          .flatMap((s) => s.stderr().split('\n'))
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line))
          .filter((entry) => entry.session_id === id)
          // From both replicas, whose logs together have no order: compared by action.
          .sort((x, y) => String(x.audit).localeCompare(String(y.audit)));
        assert.deepEqual(
          lines.map((e) => [e.audit, e.user, e.user_name, e.request_id]),
          [
            ['allow', 'user-bob', 'Bob', request.request_id],
            ['reply', 'user-alice', 'alice@example.com', null],
          ],
        );
        if (kind === 'postgres') {
          const client = new Client({ connectionString: database });
          await client.connect();
          try {
            const { rows } = await client.query(
              'SELECT actor_sub, actor_name, action, request_id FROM audit WHERE session_id = $1 ORDER BY id',
              [id],
            );
            assert.deepEqual(rows, [
              { actor_sub: 'user-bob', actor_name: 'Bob', action: 'allow', request_id: request.request_id },
              { actor_sub: 'user-alice', actor_name: 'alice@example.com', action: 'reply', request_id: null },
            ]);
          } finally {
            await client.end();
          }
        }
      });

      it('ownership survives a restart of the server', async () => {
        const id = await createAs(users.alice, 'Plan across a restart');
        if (kind === 'journal') {
          const dataDir = (servers[0] as ServerProcess).dataDir;
          await (servers[0] as ServerProcess).stop();
          servers = [await startServer({ agent: `scripted:${EXAMPLES_DIR}/approve.json`, dataDir, extraArgs: oidcArgs() })];
        } else {
          await (servers[0] as ServerProcess).kill();
          servers[0] = await startServer({ store: database as string, extraArgs: oidcArgs() });
        }
        for (const server of servers) {
          const read = (token: string) =>
            call(server, 'GET', `/v1/sessions/${id}`, undefined, { headers: server.headers({ authorization: `Bearer ${token}` }) });
          assert.deepEqual((await read(users.alice)).body.owner, { id: 'user-alice', name: 'alice@example.com' });
          assert.equal((await read(users.mallory)).status, 403);
        }
      });

      it('refuses (401) tokens an attacker would try, and the shared token', async () => {
        const id = await createAs(users.alice, 'Plan something worth stealing');
        const claims = { groups: [ADMIN_GROUP] };
        const aliceParts = users.alice.split('.');
        const otherIssuer = await startOidcIssuer({ audience: issuer.audience });
        const tokens: Record<string, [string, RegExp]> = {
          'expired (beyond the clock skew)': [await issuer.token('user-admin', claims, { expiresIn: -(SKEW_SECONDS + 60) }), /expired at/],
          'signed by another key under the issuer’s kid': [await issuer.forged('user-admin', claims), /signature verification failed/],
          'for another issuer': [await issuer.token('user-admin', claims, { issuer: otherIssuer.url }), /"iss" claim/],
          'from another issuer altogether': [await otherIssuer.token('user-admin', claims), /signature verification failed/],
          'for another audience': [await issuer.token('user-admin', claims, { audience: 'some-other-api' }), /"aud" claim/],
          'unsigned (alg none)': [issuer.unsigned('user-admin', claims), /"alg" .* not allowed/],
          'HS256 with the issuer’s public key as secret': [await issuer.hmacWithPublicKey('user-admin', claims), /"alg" .* not allowed/],
          'alice’s signature on an admin payload': [
            [
              aliceParts[0],
              Buffer.from(
                JSON.stringify({ ...JSON.parse(Buffer.from(aliceParts[1] as string, 'base64url').toString()), groups: [ADMIN_GROUP] }),
              ).toString('base64url'),
              aliceParts[2],
            ].join('.'),
            /signature verification failed/,
          ],
          'the shared token (not accepted beside OIDC)': [(servers[0] as ServerProcess).token as string, /Invalid Compact JWS/],
          'not a JWT': ['hello', /Invalid Compact JWS/],
        };
        await otherIssuer.close();
        for (const [what, [token, why]] of Object.entries(tokens)) {
          for (const path of ['/v1/code/sessions', `/v1/sessions/${id}`]) {
            const answer = await as(token, 'GET', path);
            assert.equal(answer.status, 401, `${what} on ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
            assert.equal(answer.body.error.type, 'authentication_error');
            assert.match(answer.body.error.message, why, what);
            assert.equal(answer.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
          }
        }
        const expired = await as((tokens['expired (beyond the clock skew)'] as [string, RegExp])[0], 'GET', '/v1/code/sessions');
        assert.equal(expired.body.error.reason, 'token_expired');
        assert.match(expired.body.error.message, /expired at \d{4}-/);
        // What a person sees through the extension's client: what happened and the command to renew.
        const client = connectServer(
          {
            baseUrl: (servers[0] as ServerProcess).url,
            getToken: async () => (tokens['expired (beyond the clock skew)'] as [string, RegExp])[0],
          },
          { preferStream: false },
        );
        await assert.rejects(
          client.listSessions(),
          (err) =>
            err instanceof SessionsError && err.kind === 'unauthorized' && /expired\. Run "Ultraplan: Set Server Token…"/.test(err.message),
        );
        await client.dispose();
        // Expired within the tolerated skew still passes.
        const recent = await issuer.token('user-alice', { groups: [REVIEW_GROUP] }, { expiresIn: -1 });
        assert.equal((await as(recent, 'GET', `/v1/sessions/${id}`)).status, 200);
        // The probes stay open to a process manager without a token; nothing else does.
        for (const probe of ['/healthz', '/readyz']) {
          assert.equal((await fetch(`${(servers[0] as ServerProcess).url}${probe}`)).status, 200, probe);
        }
        assertError(
          await call(servers[0] as ServerProcess, 'GET', '/v1/code/sessions', undefined, {
            headers: { 'content-type': 'application/json' },
          }),
          401,
          'authentication_error',
          /missing bearer token/,
        );
      });
    });
  }
});

describe('ultraplan-server without OIDC: the shared token', function () {
  this.timeout(60_000);
  let server: ServerProcess | undefined;
  afterEach(() => server?.stop());

  it('still opens every session, and its sessions have no owner', async () => {
    server = await startServer({});
    const created = await call(server, 'POST', '/v1/sessions', createRequest('Plan alone'));
    assert.equal(created.status, 200);
    assert.equal(created.body.owner, undefined);
    const listed = await call(server, 'GET', '/v1/code/sessions');
    assert.deepEqual(
      listed.body.data.map((s: any) => s.id),
      [created.body.id.replace('session_', 'cse_')],
    );
    assert.equal(
      (await call(server, 'GET', '/v1/code/sessions', undefined, { headers: server.headers({ authorization: 'Bearer nope' }) })).status,
      401,
    );
  });
});

describe('ultraplan-server OIDC settings', function () {
  this.timeout(60_000);
  let issuer: OidcIssuer;
  before(async () => {
    issuer = await startOidcIssuer();
  });
  after(() => issuer.close());
  const servers = serversPerTest();

  it('takes them from the ULTRAPLAN_OIDC_* environment a deployment’s Secret sets', async () => {
    const server = await servers.start({
      env: {
        ULTRAPLAN_OIDC_ISSUER: issuer.url,
        ULTRAPLAN_OIDC_AUDIENCE: issuer.audience,
        ULTRAPLAN_OIDC_JWKS_URL: issuer.jwksUrl,
        ULTRAPLAN_OIDC_GROUPS_CLAIM: 'roles',
        ULTRAPLAN_OIDC_ADMIN_GROUP: 'root',
        ULTRAPLAN_OIDC_REVIEW_GROUPS: 'a,b',
      },
    });
    assert.match(server.stderr(), /the shared token is not accepted with --oidc-issuer/);
    const user = await issuer.token('someone', { roles: ['root'] });
    const other = await issuer.token('other', {});
    const created = await call(server, 'POST', '/v1/sessions', createRequest('Plan it'), {
      headers: server.headers({ authorization: `Bearer ${other}` }),
    });
    assert.equal(created.status, 200);
    const listed = await call(server, 'GET', '/v1/sessions', undefined, { headers: server.headers({ authorization: `Bearer ${user}` }) });
    assert.deepEqual(
      listed.body.data.map((s: any) => s.id),
      [created.body.id],
      'an admin by the configured claim and group',
    );
    assert.equal((await call(server, 'GET', '/v1/sessions')).status, 401, 'the shared token');
  });

  it('refuses to start with settings that could not work', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--oidc-issuer', issuer.url], /needs --oidc-audience/],
      [['--oidc-issuer', 'http://id.example.com', '--oidc-audience', 'x'], /https:\/\/ URL/],
      [['--oidc-audience', 'x'], /needs --oidc-issuer/],
      [['--oidc-issuer', issuer.url, '--oidc-audience', 'x', '--oidc-clock-skew-seconds', 'soon'], /0 to 600/],
    ];
    for (const [args, message] of cases) {
      const result = await runServerCli(['--data-dir', tempDir(), '--agent', `scripted:${EXAMPLES_DIR}/approve.json`, ...args], {
        env: { ULTRAPLAN_SERVER_TOKEN: 'x'.repeat(32) },
      });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
    }
  });
});

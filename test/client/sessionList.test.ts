// Listing sessions on every backend ("Attach to Session…"): the server's `GET /v1/code/sessions`
// over real HTTP against the real server process, SessionsClient.listSessions (paging, its schema,
// items left out), Claude Code on the web's list through the strict Claude-compatibility server,
// and the embedded host's list.
import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SessionsError } from '../../src/core/errors';
import { attachClaudeWebBackend, type ClaudeWebBackend } from '../../src/client/claudeWeb/backend';
import { SessionsClient } from '../../src/client/sessionsClient';
import { InProcessBackend } from '../../src/service/inProcessBackend';
import { SessionHost } from '../../src/service/host/sessionHost';
import { startClaudeCompatProxy, type ClaudeCompatProxy } from '../support/claudeCompatProxy';
import { makeClaudeHome, type ClaudeHome } from '../support/claudeCompatFixtures';
import { serverForSuite, EXAMPLES_DIR, createCodeSessionByHttp, startServer } from '../support/serverProcess';
import { createRequest, scenarioFactory } from '../service/hostTestKit';

const ORG = 'org-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';

describe('session lists', function () {
  this.timeout(60_000);
  const server = serverForSuite({ scenario: join(EXAMPLES_DIR, 'question.json') });
  const created: string[] = [];

  before(async () => {
    // Created one after another: each has its own creation time (the list's order).
    for (const title of ['first', 'second', 'third']) {
      created.push(await createCodeSessionByHttp(server, title));
      await new Promise((r) => setTimeout(r, 15));
    }
  });

  describe('ultraplan-server GET /v1/code/sessions', () => {
    const get = async (query: string, headers = server.headers()) => {
      const response = await fetch(`${server.url}/v1/code/sessions${query}`, { headers });
      return { status: response.status, body: (await response.json()) as any };
    };

    it('lists newest first in the current wire shape, paged with next_cursor', async () => {
      const first = await get('?limit=2');
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual(
        first.body.data.map((s: { title: string }) => s.title),
        ['ultraplan: third', 'ultraplan: second'],
      );
      const item = first.body.data[0];
      assert.equal(item.id, created[2]);
      assert.match(item.id, /^cse_/);
      assert.equal(item.status, 'active');
      assert.ok(typeof item.worker_status === 'string' && typeof item.created_at === 'string');
      assert.equal(first.body.next_cursor, created[1]);
      const second = await get(`?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
      assert.deepEqual(
        second.body.data.map((s: { id: string }) => s.id),
        [created[0]],
      );
      assert.equal(second.body.next_cursor, null);
      // The whole list in one page by default.
      assert.deepEqual(
        (await get('')).body.data.map((s: { id: string }) => s.id),
        [...created].reverse(),
      );
    });

    it('refuses a bad limit or a cursor it never gave, naming them', async () => {
      for (const limit of ['0', '101', 'abc', '-1', '1e2']) {
        const answer = await get(`?limit=${limit}`);
        assert.equal(answer.status, 400, limit);
        assert.match(answer.body.error.message, /limit must be an integer from 1 to 100/);
      }
      const answer = await get('?cursor=cse_nope');
      assert.equal(answer.status, 400);
      assert.match(answer.body.error.message, /cursor must be a next_cursor/);
    });

    it('takes the token and the request guard like every route', async () => {
      const noToken = await get('', {});
      assert.equal(noToken.status, 401);
      const wrong = await get('', { authorization: 'Bearer not-the-token' });
      assert.equal(wrong.status, 401);
      // A browser page on another origin is refused before anything is listed.
      const fromPage = await get('', server.headers({ origin: 'http://evil.example' }));
      assert.equal(fromPage.status, 403, JSON.stringify(fromPage.body));
      assert.equal(fromPage.body.data, undefined);
    });
  });

  describe('SessionsClient.listSessions', () => {
    it('reads every page from the real server, newest first, as session resources', async () => {
      const client = new SessionsClient({ baseUrl: server.url, getToken: async () => server.token! });
      const sessions = await client.listSessions({ limit: 1 });
      assert.deepEqual(
        sessions.map((s) => s.id),
        [...created].reverse(),
      );
      assert.equal(sessions[0]!.title, 'ultraplan: third');
      assert.ok(['running', 'idle', 'requires_action'].includes(sessions[0]!.session_status));
      // Bounded: pages and sessions.
      assert.equal((await client.listSessions({ limit: 1, maxPages: 2 })).length, 2);
      assert.equal((await client.listSessions({ maxSessions: 1 })).length, 1);
    });

    it('reads a server that runs without a token with no Authorization header; a server with one refuses that', async () => {
      const open = await startServer({ scenario: join(EXAMPLES_DIR, 'question.json'), token: null });
      try {
        const id = await createCodeSessionByHttp(open, 'open');
        const seen: Array<string | null> = [];
        const recording: typeof fetch = async (input, init) => {
          seen.push(new Headers(init?.headers).get('authorization'));
          return fetch(input, init);
        };
        const tokenless = new SessionsClient({ baseUrl: open.url, getToken: async () => null, fetch: recording });
        assert.deepEqual(
          (await tokenless.listSessions()).map((s) => s.id),
          [id],
        );
        assert.deepEqual(seen, [null]);
        const refused = new SessionsClient({ baseUrl: server.url, getToken: async () => null });
        await assert.rejects(refused.listSessions(), (err: unknown) => err instanceof SessionsError && err.kind === 'unauthorized');
      } finally {
        await open.stop();
      }
    });

    describe('against a server that answers what it likes', () => {
      let fake: Server;
      let url: string;
      let answer: unknown;
      before(async () => {
        fake = createServer((_req, res) => {
          const text = JSON.stringify(answer);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(text);
        });
        await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
        url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
      });
      after(() => new Promise<void>((resolve) => fake.close(() => resolve())));

      it('leaves out items that are not sessions or whose ids are outside the alphabet, and logs how many', async () => {
        const lines: string[] = [];
        const client = new SessionsClient({ baseUrl: url, getToken: async () => 't', log: (l) => lines.push(l) });
        answer = {
          data: [
            { id: 'cse_good1', title: 'one', status: 'active', worker_status: 'idle', created_at: '2026-11-30T10:00:00Z' },
            { id: 'cse_../../etc', title: 'hostile' },
            { title: 'no id' },
            'not an object',
            { id: 'cse_good1', title: 'repeat' },
            { id: 'session_good2', title: null, status: 'archived' },
          ],
          next_cursor: null,
        };
        const sessions = await client.listSessions();
        assert.deepEqual(
          sessions.map((s) => [s.id, s.title, s.session_status]),
          [
            ['cse_good1', 'one', 'idle'],
            ['session_good2', '', 'archived'],
          ],
        );
        assert.ok(
          lines.some((l) => /left out 3 item/.test(l)),
          lines.join('\n'),
        );
      });

      it('fails as bad_response on an answer that is not a list, and stops on a cursor that does not move', async () => {
        const client = new SessionsClient({ baseUrl: url, getToken: async () => 't' });
        answer = { sessions: [] };
        await assert.rejects(client.listSessions(), (err: unknown) => err instanceof SessionsError && err.kind === 'bad_response');
        answer = { data: [{ id: 'cse_a' }], next_cursor: 'same' };
        // The same cursor again ends the read instead of looping.
        assert.equal((await client.listSessions()).length, 1);
      });
    });
  });

  describe('Claude Code on the web', () => {
    let proxy: ClaudeCompatProxy;
    let home: ClaudeHome;
    let backend: ClaudeWebBackend;
    before(async () => {
      proxy = await startClaudeCompatProxy({
        upstreamUrl: server.url,
        upstreamToken: server.token,
        validTokens: ['token-valid'],
        organizationUuid: ORG,
      });
      home = await makeClaudeHome({ accessToken: 'token-valid' }, ORG);
      backend = await attachClaudeWebBackend({
        env: home.env,
        homeDir: home.homeDir,
        platform: 'linux',
        baseUrl: proxy.url,
        workspaceFolder: home.homeDir,
        log: () => {},
      });
    });
    after(async () => {
      await backend?.dispose();
      await proxy?.close();
      await home?.remove();
    });

    it('lists as Claude Code does: GET /v1/code/sessions?limit=100, the usual headers, no organization header', async () => {
      proxy.requests.length = 0;
      const sessions = await backend.listSessions();
      assert.deepEqual(
        sessions.map((s) => s.id),
        [...created].reverse(),
      );
      const calls = proxy.requests.filter((r) => r.path === '/v1/code/sessions');
      assert.equal(calls.length, 1);
      const call = calls[0]!;
      assert.equal(call.status, 200);
      assert.deepEqual(call.query, { limit: '100' });
      assert.equal(call.headers['x-organization-uuid'], undefined);
      assert.equal(call.headers['anthropic-beta'], undefined);
      assert.ok(call.headers['anthropic-client-platform']);
    });

    it('the stand-in is strict: a list without anthropic-client-platform, or with the organization, is refused naming it', async () => {
      const base = {
        authorization: 'Bearer token-valid',
        'anthropic-version': '2023-06-01',
        'user-agent': 'ultraplan-vscode/0.1.0',
      };
      const missing = await fetch(`${proxy.url}/v1/code/sessions?limit=100`, { headers: base });
      assert.equal(missing.status, 400);
      assert.match(await missing.text(), /missing header anthropic-client-platform/);
      const withOrg = await fetch(`${proxy.url}/v1/code/sessions?limit=100`, {
        headers: { ...base, 'anthropic-client-platform': 'x', 'x-organization-uuid': ORG },
      });
      assert.equal(withOrg.status, 400);
      assert.match(await withOrg.text(), /unexpected header x-organization-uuid/);
      const badQuery = await fetch(`${proxy.url}/v1/code/sessions?page=2`, { headers: { ...base, 'anthropic-client-platform': 'x' } });
      assert.equal(badQuery.status, 400);
      assert.match(await badQuery.text(), /unexpected query parameter page/);
    });

    it('an expired login is unauthorized with the fix, not an empty list', async () => {
      proxy.settings.validTokens = new Set(['another']);
      try {
        await assert.rejects(
          backend.listSessions(),
          (err: unknown) => err instanceof SessionsError && err.kind === 'unauthorized' && /claude/i.test(err.message),
        );
      } finally {
        proxy.settings.validTokens = new Set(['token-valid']);
      }
    });
  });

  describe('embedded', () => {
    it("lists the host's sessions newest first", async () => {
      const host = new SessionHost({ agentFactory: await scenarioFactory('question.json') });
      const backend = new InProcessBackend({ host });
      try {
        const ids: string[] = [];
        for (const title of ['a', 'b']) {
          ids.push((await host.createSession(createRequest('Plan', `ultraplan: ${title}`))).id);
          await new Promise((r) => setTimeout(r, 15));
        }
        const listed = await backend.listSessions();
        assert.deepEqual(
          listed.map((s) => s.id),
          [...ids].reverse(),
        );
        assert.deepEqual(
          listed.map((s) => s.title),
          ['ultraplan: b', 'ultraplan: a'],
        );
        // The view made for one agent lists the same host.
        const forAgent = backend.forAgent(await scenarioFactory('question.json'));
        assert.deepEqual(
          (await forAgent.listSessions!()).map((s) => s.id),
          [...ids].reverse(),
        );
      } finally {
        await backend.dispose();
      }
    });
  });
});

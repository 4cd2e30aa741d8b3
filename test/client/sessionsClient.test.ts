// SessionsClient over real HTTP on 127.0.0.1: a minimal protocol server, with the fault proxy in
// front for the failure classes. The same classes against the real server: client.server.test.ts.
import { strict as assert } from 'node:assert';
import { SessionsError } from '../../src/core/errors';
import { CLIENT_PLATFORM, sortEventItems } from '../../src/core/codeSessions';
import { ANTHROPIC_VERSION, userMessageEvent } from '../../src/core/protocol';
import { DEFAULT_USER_AGENT, SessionsClient, parseRetryAfter } from '../../src/client/sessionsClient';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy';
import { startWireTestServer, type WireTestServer } from './wireTestServer';
import { assistantText } from '../support/sessionEvents';

async function rejects(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected the call to fail');
}

async function sessionsError(promise: Promise<unknown>, kind: SessionsError['kind']): Promise<SessionsError> {
  const err = await rejects(promise);
  assert.ok(err instanceof SessionsError, `expected a SessionsError, got ${String(err)}`);
  assert.equal(err.kind, kind, err.message);
  return err;
}

describe('SessionsClient', () => {
  let server: WireTestServer;
  let proxy: FaultProxy;
  let tokenReads: number;
  let client: SessionsClient;

  beforeEach(async () => {
    server = await startWireTestServer();
    proxy = await startFaultProxy({ target: server.url });
    tokenReads = 0;
    client = new SessionsClient({
      baseUrl: proxy.url,
      getToken: async () => {
        tokenReads++;
        return server.token;
      },
      archiveRetryMs: [10, 20],
      requestTimeoutMs: 1_000,
    });
  });

  afterEach(async () => {
    await proxy.close();
    await server.close();
  });

  it('sends the headers Claude Code sends and a freshly read token on every request (no organization, no beta)', async () => {
    server.addSession('s1');
    await client.getSession('s1');
    await client.readEvents('s1', null);
    await client.sendEvents('s1', [userMessageEvent('hi')]);
    assert.equal(server.requests.length, 3);
    assert.equal(tokenReads, 3);
    for (const r of server.requests) {
      assert.equal(r.headers.authorization, `Bearer ${server.token}`);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.headers['anthropic-version'], ANTHROPIC_VERSION);
      assert.equal(r.headers['anthropic-client-platform'], CLIENT_PLATFORM);
      assert.equal(r.headers['user-agent'], DEFAULT_USER_AGENT);
      assert.match(DEFAULT_USER_AGENT, /^ultraplan-vscode\/\d+\.\d+\.\d+/);
      assert.equal(r.headers['anthropic-beta'], undefined);
      assert.equal(r.headers['x-organization-uuid'], undefined);
    }
  });

  it('creates, gets, sends wrapped payloads with fresh uuids and archives (twice is fine)', async () => {
    const created = await client.createSession({
      title: 'ultraplan: t',
      events: [{ type: 'event', data: userMessageEvent('plan it') }],
    });
    assert.equal(created.title, 'ultraplan: t');
    assert.equal((await client.getSession(created.id)).id, created.id);
    await client.sendEvents(created.id, [userMessageEvent('more'), userMessageEvent('again')]);
    const posted = JSON.parse(server.requests.at(-1)?.body ?? '') as { events: Array<{ payload: { uuid: string } }> };
    assert.equal(posted.events.length, 2);
    const [a, b] = posted.events.map((e) => e.payload.uuid);
    assert.match(a ?? '', /^[0-9a-f-]{36}$/);
    assert.notEqual(a, b, 'every event gets its own uuid');
    assert.deepEqual({ ...posted.events[0]?.payload, uuid: 'x' }, { ...userMessageEvent('more'), uuid: 'x' });
    await client.archive(created.id);
    // A second archive answers 409 here: repeated after the waits, then a failure.
    const before = server.requests.length;
    await sessionsError(client.archive(created.id), 'conflict');
    assert.equal(server.requests.length - before, 3, 'the 409 was asked twice more');
    assert.equal(await client.getStatus(created.id), 'archived');
    const conflict = await sessionsError(client.sendEvents(created.id, [userMessageEvent('late')]), 'conflict');
    assert.equal(conflict.status, 409);
    assert.match(conflict.message, /archived/);
  });

  it('pages with sort_order=asc&cursor= until next_cursor is empty, skipping env_manager_log and control_response', async () => {
    server.addSession('s1');
    server.append('s1', assistantText('a'), { type: 'env_manager_log', line: 'x' }, assistantText('b'));
    server.append('s1', { type: 'control_response', response: { subtype: 'success', request_id: 'r' } }, assistantText('c'));
    const read = await client.readEventsPages('s1', null, { limit: 2 });
    // A control_response is kept (its request id closes that prompt in every window); env_manager_log is not.
    assert.deepEqual(
      read.events.map((e) =>
        (e as { type: string }).type === 'control_response'
          ? 'answer r'
          : (e as { message: { content: Array<{ text: string }> } }).message.content[0]?.text,
      ),
      ['a', 'b', 'answer r', 'c'],
    );
    assert.equal(read.pages, 3);
    assert.equal(read.skipped, 1);
    assert.equal(read.hasMore, false);
    assert.equal(read.lastId, server.sessions.get('s1')?.events.at(-1)?.id);
    const pageReads = server.requests.filter((r) => r.url.includes('/events?')).map((r) => new URL(r.url, 'http://x').searchParams);
    assert.ok(pageReads.every((q) => q.get('sort_order') === 'asc'));
    assert.equal(pageReads[0]?.get('cursor'), null, 'no cursor on the first read');
    const afterPages = pageReads.map((q) => q.get('cursor'));
    assert.deepEqual(afterPages.slice(1), [server.sessions.get('s1')?.events[1]?.id, server.sessions.get('s1')?.events[3]?.id]);
    // Nothing new: the cursor stays where it was.
    const again = await client.readEventsPages('s1', read.lastId, { limit: 2 });
    assert.deepEqual(again.events, []);
    assert.equal(again.lastId, read.lastId);
  });

  it('stops at 50 pages and continues from there on the next read', async () => {
    server.addSession('s1');
    for (let i = 0; i < 60; i++) server.append('s1', assistantText(`m${i}`));
    const first = await client.readEventsPages('s1', null, { limit: 1 });
    assert.equal(first.pages, 50);
    assert.equal(first.hasMore, true);
    assert.equal(first.events.length, 50);
    const second = await client.readEventsPages('s1', first.lastId, { limit: 1 });
    assert.equal(second.events.length, 10);
    assert.equal(second.hasMore, false);
  });

  it('keeps out and counts items that are not objects with a string type', () => {
    const sorted = sortEventItems([assistantText('ok'), 1, null, 'x', { type: 3 }, { type: 'env_manager_log' }, { type: 'unknown_kind' }]);
    assert.equal(sorted.events.length, 2);
    assert.equal(sorted.invalid, 4);
    assert.equal(sorted.skipped, 1);
  });

  it('a page holding garbage items still yields its real events and advances the cursor', async () => {
    server.addSession('s1');
    const [id] = server.append('s1', assistantText('real'));
    proxy.addFault({ path: '/events', fault: { kind: 'garbage_events' } });
    const read = await client.readEvents('s1', null);
    assert.equal(read.events.length, 1);
    assert.equal(read.invalid, 12);
    assert.equal(read.lastId, id);
  });

  it('classifies 401 and 403 as unauthorized without ever showing the token', async () => {
    server.addSession('s1');
    const wrong = new SessionsClient({ baseUrl: proxy.url, getToken: async () => 'sekrit-wrong-token', requestTimeoutMs: 1_000 });
    const err = await sessionsError(wrong.getSession('s1'), 'unauthorized');
    assert.equal(err.status, 401);
    assert.ok(!err.message.includes('sekrit-wrong-token'));
    assert.ok(!err.message.includes(server.token));
    proxy.addFault({
      fault: { kind: 'status', status: 403, body: { type: 'error', error: { type: 'permission_error', message: 'Bearer sekrit echoed' } } },
    });
    const forbidden = await sessionsError(client.getSession('s1'), 'unauthorized');
    assert.ok(!forbidden.message.includes('sekrit'), forbidden.message);
  });

  it('redacts the bare token when a server echoes it in an error message', async () => {
    server.addSession('s1');
    await client.getSession('s1');
    proxy.addFault({
      fault: {
        kind: 'status',
        status: 400,
        body: { type: 'error', error: { type: 'invalid_request_error', message: `token ${server.token} is not allowed here` } },
      },
    });
    const err = await sessionsError(client.getSession('s1'), 'bad_request');
    assert.ok(!err.message.includes(server.token), err.message);
    assert.match(err.message, /token \[redacted\] is not allowed here/);
  });

  it('a token that cannot be read is an unauthorized error that says so', async () => {
    const broken = new SessionsClient({ baseUrl: proxy.url, getToken: async () => Promise.reject(new Error('credentials file missing')) });
    const err = await sessionsError(broken.getSession('s1'), 'unauthorized');
    assert.match(err.message, /credentials file missing/);
    assert.equal(proxy.requests.length, 0);
  });

  it('classifies 404, 400, 413 and other 4xx', async () => {
    const notFound = await sessionsError(client.getSession('nope'), 'not_found');
    assert.match(notFound.message, /Session nope was not found/);
    server.addSession('s1');
    for (const status of [400, 413, 422]) {
      proxy.addFault({ fault: { kind: 'status', status } });
      const err = await sessionsError(client.sendEvents('s1', [userMessageEvent('x')]), 'bad_request');
      assert.equal(err.status, status);
    }
  });

  it('classifies 5xx and 429 as transient and honours Retry-After', async () => {
    server.addSession('s1');
    proxy.addFault({ fault: { kind: 'status', status: 503 } });
    const e503 = await sessionsError(client.getSession('s1'), 'transient');
    assert.equal(e503.status, 503);
    assert.equal(e503.retryAfterMs, undefined);
    proxy.addFault({ fault: { kind: 'status', status: 429, headers: { 'retry-after': '7' } } });
    const e429 = await sessionsError(client.getSession('s1'), 'transient');
    assert.equal(e429.retryAfterMs, 7000);
    assert.match(e429.message, /retry after 7 s/);
    assert.ok((parseRetryAfter(new Date(Date.now() + 5000).toUTCString()) ?? 0) > 3000);
    assert.equal(parseRetryAfter('soon'), undefined);
  });

  it('classifies a reset connection and a response slower than the timeout as transient', async () => {
    server.addSession('s1');
    proxy.addFault({ fault: { kind: 'reset' } });
    const reset = await sessionsError(client.getSession('s1'), 'transient');
    assert.match(reset.message, /Could not reach/);
    proxy.addFault({ fault: { kind: 'delay', ms: 1_500 } });
    const slow = await sessionsError(client.getSession('s1'), 'transient');
    assert.match(slow.message, /did not answer GET \/v1\/code\/sessions\/s1 within 1 s/);
    // The client recovers on the next call.
    assert.equal((await client.getSession('s1')).id, 's1');
  });

  it('classifies malformed JSON and off-protocol bodies as bad_response', async () => {
    server.addSession('s1');
    proxy.addFault({ path: '/events', fault: { kind: 'malformed_json' } });
    const malformed = await sessionsError(client.readEvents('s1', null), 'bad_response');
    assert.match(malformed.message, /malformed JSON/);
    proxy.addFault({ fault: { kind: 'status', status: 200, body: { type: 'session', id: 's1' } } });
    const notResource = await sessionsError(client.getSession('s1'), 'bad_response');
    assert.match(notResource.message, /not a valid session envelope/);
    proxy.addFault({ path: '/events', fault: { kind: 'status', status: 200, body: { data: [], next_cursor: '7' } } });
    proxy.addFault({ path: '/events', fault: { kind: 'status', status: 200, body: { data: [], next_cursor: '7' } } });
    const stuck = await sessionsError(client.readEvents('s1', null), 'bad_response');
    assert.match(stuck.message, /does not move past the cursor/);
  });

  it("hands back the caller's abort as an abort, not as a server failure", async () => {
    server.addSession('s1');
    proxy.addFault({ fault: { kind: 'delay', ms: 800 } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await rejects(client.getSession('s1', controller.signal));
    assert.ok(!(err instanceof SessionsError));
    assert.equal((err as Error).name, 'AbortError');
  });
});

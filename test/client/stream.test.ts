// StreamingTransport over real HTTP on 127.0.0.1 (minimal protocol server + fault proxy): reads and
// events served from the stream (status over HTTP), wake-ups on frames, resume after drops without duplicates or gaps,
// fallback to polling, and no connection left open.
import { strict as assert } from 'node:assert';
import { SessionsClient } from '../../src/client/sessionsClient';
import { StreamingTransport, type StreamingTransportOptions } from '../../src/client/eventStream';
import { HttpBackend } from '../../src/client/httpBackend';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy';
import { startWireTestServer, type WireTestServer, type WireTestServerOptions } from './wireTestServer';
import { waitFor } from '../support/wait';
import { assistantText } from '../support/sessionEvents';

const textOf = (e: unknown) => (e as { message: { content: Array<{ text: string }> } }).message.content[0]?.text;

/** Reads the way the poller does (status, events, wait) until `count` events have arrived. */
async function readUntil(
  transport: StreamingTransport,
  sessionId: string,
  count: number,
  signal?: AbortSignal,
  from: string | null = null,
) {
  const events: unknown[] = [];
  let cursor: string | null = from;
  for (let round = 0; round < 500 && events.length < count; round++) {
    await transport.getStatus(sessionId, signal);
    const read = await transport.readEvents(sessionId, cursor, signal);
    events.push(...read.events);
    cursor = read.lastId;
    if (events.length < count) await transport.waitForActivity(sessionId, 60_000, signal);
  }
  return { events, cursor };
}

describe('StreamingTransport', () => {
  let server: WireTestServer;
  let proxy: FaultProxy;
  let transport: StreamingTransport;

  async function setUp(serverOptions: WireTestServerOptions = {}, streamOptions: Partial<StreamingTransportOptions> = {}) {
    server = await startWireTestServer(serverOptions);
    proxy = await startFaultProxy({ target: server.url });
    const client = new SessionsClient({ baseUrl: proxy.url, getToken: async () => server.token, requestTimeoutMs: 2_000 });
    transport = new StreamingTransport({ client, initialBackoffMs: 20, maxBackoffMs: 100, ...streamOptions });
  }

  afterEach(async () => {
    await transport?.dispose();
    await proxy?.close();
    await server?.close();
  });

  it('after one HTTP read, serves events from the stream and wakes on each frame', async () => {
    await setUp();
    server.addSession('s1');
    server.append('s1', assistantText('before'));
    const first = await transport.readEvents('s1', null);
    assert.deepEqual(first.events.map(textOf), ['before']);
    await waitFor(() => transport.streamStats('s1')?.mode === 'open', 'stream open');
    await waitFor(() => server.openStreams === 1, 'server sees the stream');
    proxy.resetLog();

    const waiting = transport.waitForActivity('s1', 60_000);
    setTimeout(() => server.append('s1', assistantText('live')), 30);
    await waiting; // would only end after 60 s (past the test's timeout) without the wake-up
    const second = await transport.readEvents('s1', first.lastId);
    assert.deepEqual(second.events.map(textOf), ['live']);
    // The stream carries no status (as on the service): status reads stay on HTTP, event reads do not.
    server.setStatus('s1', 'idle');
    assert.equal(await transport.getStatus('s1'), 'idle');
    assert.deepEqual(
      proxy.requests.map((r) => r.path),
      ['/v1/code/sessions/s1'],
      'only the status went over HTTP while the stream is live',
    );
    const stats = transport.streamStats('s1');
    assert.equal(stats?.readsOverHttp, 1);
    assert.equal(stats?.readsFromStream, 1);
  });

  it('skips env_manager_log from the stream, keeps control_response (an answer closes a prompt everywhere), and moves the cursor past them', async () => {
    await setUp();
    server.addSession('s1');
    const read0 = await transport.readEvents('s1', null);
    await waitFor(() => transport.streamStats('s1')?.mode === 'open', 'stream open');
    const ids = server.append(
      's1',
      { type: 'control_response', response: { subtype: 'success', request_id: 'r' } },
      { type: 'env_manager_log' },
      assistantText('kept'),
    );
    await waitFor(() => transport.streamStats('s1') !== undefined && server.openStreams === 1, 'stream');
    const { events, cursor } = await (async () => {
      let got: { events: unknown[]; lastId: string | null } = { events: [], lastId: read0.lastId };
      for (let i = 0; i < 100 && got.lastId !== ids[2]; i++) {
        await transport.waitForActivity('s1', 60_000);
        const r = await transport.readEvents('s1', got.lastId);
        got = { events: [...got.events, ...r.events], lastId: r.lastId };
      }
      return { events: got.events, cursor: got.lastId };
    })();
    assert.deepEqual(
      events.map((e) => ((e as { type: string }).type === 'control_response' ? 'control_response' : textOf(e))),
      ['control_response', 'kept'],
    );
    assert.equal(cursor, ids[2]);
  });

  it('resumes after drops from the last id seen, without duplicates or gaps', async () => {
    await setUp();
    server.addSession('s1');
    await transport.readEvents('s1', null);
    proxy.addFault({ path: '/events/stream', times: 3, fault: { kind: 'drop_stream_after', events: 3 } });
    await waitFor(() => server.openStreams === 1, 'first stream');
    // Events arrive three at a time, each batch once the stream is open again, while the reader
    // follows (the stream carries no status frame to mark it open, so the test waits for it).
    const events: unknown[] = [];
    let cursor: string | null = null;
    for (let batch = 0; batch < 4; batch++) {
      await waitFor(() => transport.streamStats('s1')?.mode === 'open', `stream open for batch ${batch}`);
      for (let i = 0; i < 3; i++) server.append('s1', assistantText(`m${batch * 3 + i}`));
      const read = await readUntil(transport, 's1', 3, undefined, cursor);
      events.push(...read.events);
      cursor = read.cursor;
    }
    assert.deepEqual(
      events.map(textOf),
      Array.from({ length: 12 }, (_, i) => `m${i}`),
    );
    const streams = proxy.requests.filter((r) => r.path.endsWith('/events/stream'));
    assert.ok(streams.length >= 3, `reconnected (${streams.length} stream requests; ${JSON.stringify(transport.streamStats('s1'))})`);
    const ids = server.sessions.get('s1')?.events.map((e) => e.id) ?? [];
    // Each reconnect asked for what came after the last event the previous connection delivered.
    const resumedFrom = streams.slice(1, 4).map((r) => new URLSearchParams(r.query).get('from_sequence_num'));
    assert.deepEqual(resumedFrom, [ids[2], ids[5], ids[8]]);
    const stats = transport.streamStats('s1');
    assert.equal(stats?.consecutiveFailures, 0);
    assert.equal(stats?.mode, 'open');
  });

  for (const status of [404, 405]) {
    it(`falls back to polling when the server has no stream (HTTP ${status}), for every session`, async () => {
      await setUp({ stream: false, streamOffStatus: status });
      server.addSession('s1');
      server.addSession('s2');
      server.append('s1', assistantText('a'));
      const read = await transport.readEvents('s1', null);
      await waitFor(() => transport.streamStats('s1')?.mode === 'polling', 'fallback');
      assert.match(transport.streamStats('s1')?.fallbackReason ?? '', new RegExp(`HTTP ${status}`));
      server.append('s1', assistantText('b'));
      const next = await transport.readEvents('s1', read.lastId);
      assert.deepEqual(next.events.map(textOf), ['b']);
      await transport.readEvents('s2', null);
      assert.equal(transport.streamStats('s2'), undefined, 'no stream attempt for a second session');
      assert.equal(proxy.countRequests('/events/stream'), 1);
      // Without a stream, a wait is a plain sleep of the given length (bounded, short here).
      const before = proxy.requests.length;
      await transport.waitForActivity('s1', 30);
      assert.equal(proxy.requests.length, before);
    });
  }

  it('falls back to polling after N failed connections in a row, and keeps reading', async () => {
    await setUp({}, { maxConsecutiveFailures: 3 });
    server.addSession('s1');
    proxy.addFault({ path: '/events/stream', times: Infinity, fault: { kind: 'status', status: 502 } });
    await transport.readEvents('s1', null);
    await waitFor(() => transport.streamStats('s1')?.mode === 'polling', 'fallback after failures');
    assert.equal(proxy.countRequests('/events/stream'), 3);
    assert.match(transport.streamStats('s1')?.fallbackReason ?? '', /3 times in a row.*HTTP 502/);
    server.append('s1', assistantText('still read'));
    const read = await transport.readEvents('s1', null);
    assert.deepEqual(read.events.map(textOf), ['still read']);
  });

  it('treats a silent stream as dropped and reconnects', async () => {
    await setUp({}, { idleTimeoutMs: 150, stableAfterMs: 60_000, maxConsecutiveFailures: 100 });
    server.addSession('s1');
    await transport.readEvents('s1', null);
    await waitFor(() => (transport.streamStats('s1')?.drops ?? 0) >= 2, 'idle drops');
    assert.ok(proxy.countRequests('/events/stream') >= 2);
  });

  it("closes the stream when the reader's signal aborts, and reopens on the next read", async () => {
    await setUp();
    server.addSession('s1');
    const controller = new AbortController();
    await transport.readEvents('s1', null, controller.signal);
    await waitFor(() => server.openStreams === 1, 'stream open');
    controller.abort();
    await waitFor(() => server.openStreams === 0, 'stream closed on abort');
    assert.equal(transport.streamStats('s1')?.mode, 'idle');
    await transport.readEvents('s1', null);
    await waitFor(() => server.openStreams === 1, 'reopened lazily');
  });

  it('HttpBackend: streaming or polling transport, closes streams on archive and dispose', async () => {
    await setUp();
    const client = new SessionsClient({ baseUrl: proxy.url, getToken: async () => server.token });
    const streaming = new HttpBackend({ client, preferStream: true });
    const polling = new HttpBackend({ client, preferStream: false, kind: 'claude-web' });
    assert.equal(streaming.kind, 'server');
    assert.equal(streaming.label, `Server ${proxy.url}`);
    assert.equal(streaming.sessionLink('s1'), undefined);
    assert.equal(polling.label, 'Claude Code on the web');
    assert.equal(polling.sessionLink('abc'), 'https://claude.ai/code/abc');
    assert.equal(polling.transport.waitForActivity, undefined, 'plain polling sleeps in the poller');
    server.addSession('s1');
    server.addSession('s2');
    await streaming.transport.readEvents('s1', null);
    await streaming.transport.readEvents('s2', null);
    await waitFor(() => server.openStreams === 2, 'two streams');
    await streaming.archive('s1');
    await waitFor(() => server.openStreams === 1, 'archive closed one');
    await streaming.dispose();
    await waitFor(() => server.openStreams === 0, 'dispose closed all');
  });
});

// Slow and idle connections against the real SessionsServer on 127.0.0.1 (raw sockets, so the
// test controls every byte): a body trickled a byte at a time, with or without the token, and a
// connection that never speaks, are all closed within a bound, while a long event stream is not.
import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import { SessionHost } from '../../../src/service/host/sessionHost';
import { SessionsServer } from '../../../src/service/http/server';
import { JournalServerStore } from '../../../src/service/store/journalStore';
import { createRequest, scenarioFactory } from '../hostTestKit';

const TOKEN = 'timeouts-test-token';

interface Probe {
  received(): string;
  closedAfterMs: Promise<number>;
  stop(): void;
}

/** Opens a raw connection, writes `head`, then one more byte every `trickleMs` until closed. */
function rawConnection(port: number, head: string, trickleMs: number | null): Probe {
  const started = Date.now();
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('utf8')));
  socket.on('error', () => {});
  if (head) socket.write(head);
  const timer = trickleMs === null ? null : setInterval(() => socket.writable && socket.write('a'), trickleMs);
  const closedAfterMs = new Promise<number>((resolve) =>
    socket.on('close', () => {
      if (timer) clearInterval(timer);
      resolve(Date.now() - started);
    }),
  );
  return { received: () => received, closedAfterMs, stop: () => socket.destroy() };
}

function within(promise: Promise<number>, ms: number, what: string): Promise<number> {
  return Promise.race([
    promise,
    new Promise<number>((_, reject) => setTimeout(() => reject(new Error(`${what} still open after ${ms} ms`)), ms).unref()),
  ]);
}

describe('SessionsServer: slow and idle connections are bounded', function () {
  this.timeout(15_000);
  let host: SessionHost;
  let server: SessionsServer;
  let port: number;
  const probes: Probe[] = [];

  beforeEach(async () => {
    host = await SessionHost.open({ agentFactory: await scenarioFactory('approve.json') });
    server = new SessionsServer({ store: new JournalServerStore(host, 'memory'), token: TOKEN, keepAliveMs: 200, requestTimeoutMs: 800 });
    ({ port } = await server.listen(0, '127.0.0.1'));
  });
  afterEach(async () => {
    for (const probe of probes.splice(0)) probe.stop();
    await server.close(500);
    await host.close();
  });

  const slowPost = (auth: string) =>
    `POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`;

  it('a body trickled without the token gets its 401 and the connection is closed', async () => {
    const probe = rawConnection(port, slowPost(''), 100);
    probes.push(probe);
    const closedAfter = await within(probe.closedAfterMs, 5000, 'the unauthenticated trickling connection');
    assert.match(probe.received(), /^HTTP\/1\.1 401 /);
    assert.match(probe.received(), /connection: close/i);
    assert.ok(closedAfter < 5000);
  });

  it('a body trickled with the token is cut off with 408 after the request timeout', async () => {
    const probe = rawConnection(port, slowPost(`Authorization: Bearer ${TOKEN}\r\n`), 100);
    probes.push(probe);
    const closedAfter = await within(probe.closedAfterMs, 5000, 'the authenticated trickling connection');
    assert.match(probe.received(), /^HTTP\/1\.1 408 /);
    assert.ok(closedAfter >= 700, `closed after ${closedAfter} ms, before the 800 ms request timeout`);
    assert.equal(host.listSessions().length, 0, 'nothing was created from the partial body');
  });

  it('a connection that never sends a byte is closed after the header timeout', async () => {
    const probe = rawConnection(port, '', null);
    probes.push(probe);
    const closedAfter = await within(probe.closedAfterMs, 5000, 'the silent connection');
    assert.ok(closedAfter >= 700, `closed after ${closedAfter} ms, before the 800 ms header timeout`);
  });

  it('an event stream outlives both timeouts ', async () => {
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const created = (await (
      await fetch(`http://127.0.0.1:${port}/v1/sessions`, { method: 'POST', headers, body: JSON.stringify(createRequest('p')) })
    ).json()) as { id: string };
    const abort = new AbortController();
    const response = await fetch(`http://127.0.0.1:${port}/v1/sessions/${created.id}/events/stream`, { headers, signal: abort.signal });
    assert.equal(response.status, 200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const started = Date.now();
    let keepAlivesAfterTimeouts = 0;
    try {
      while (Date.now() - started < 2500) {
        const { done, value } = await reader.read();
        assert.equal(done, false, `the stream ended after ${Date.now() - started} ms`);
        if (Date.now() - started > 1200 && Buffer.from(value).toString('utf8').includes(': keep-alive')) keepAlivesAfterTimeouts++;
      }
    } finally {
      abort.abort();
    }
    assert.ok(keepAlivesAfterTimeouts >= 2, `only ${keepAlivesAfterTimeouts} keep-alives after both timeouts passed`);
  });
});

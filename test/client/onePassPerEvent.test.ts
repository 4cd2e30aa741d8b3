// One schema pass per event on the client: events read over real HTTP on 127.0.0.1, by pages and
// from the live stream, then parsed where the poller reads them. Every schema the wire's modules
// export is counted; the only per-event pass is parseEventBatch's, and only for the events whose
// decisive parts it checks with a schema (assistant and user events are routed by hand).
import * as assert from 'node:assert/strict';
import * as codeSessions from '../../src/core/codeSessions';
import { parseEventBatch } from '../../src/core/eventBatch';
import * as protocol from '../../src/core/protocol';
import { SessionsClient } from '../../src/client/sessionsClient';
import { StreamingTransport } from '../../src/client/eventStream';
import { assistantText, exitPlan, result, toolResult, toolUse, toolRequest } from '../support/sessionEvents';
import { countSchemaPasses } from '../support/schemaPasses';
import { startWireTestServer, type WireTestServer } from './wireTestServer';
import { waitFor } from '../support/wait';

/** A session's worth of events: many routine tool calls and results, one plan, one request, one result. */
function sessionEvents(calls: number): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [assistantText('Looking around')];
  for (let i = 0; i < calls; i++) events.push(toolUse(`read-${i}`, 'Read', { file_path: `/w/${i}.ts` }), toolResult(`read-${i}`, 'ok'));
  events.push(exitPlan('toolu_1', '# Plan'), toolRequest('req_1', 'toolu_1'), result('success'));
  return events;
}

/** Events parseEventBatch checks with a schema: results and control requests (and ExitPlanMode calls). */
const SCHEMA_CHECKED = 3;

describe('one schema pass per event on the client (real HTTP on 127.0.0.1)', () => {
  let server: WireTestServer;
  let client: SessionsClient;

  beforeEach(async () => {
    server = await startWireTestServer();
    client = new SessionsClient({ baseUrl: server.url, getToken: async () => server.token, requestTimeoutMs: 5_000 });
  });
  afterEach(async () => {
    await server.close();
  });

  it('pages: each event is parsed once, where the poller reads it; the envelope and routing are checked by hand', async () => {
    server.addSession('s1');
    const events = sessionEvents(200);
    server.append('s1', ...events);
    const passes = countSchemaPasses([protocol, codeSessions]);
    let pages: number;
    let kept: number;
    try {
      const read = await client.readEventsPages('s1', null, { limit: 100 });
      pages = read.pages;
      const batch = parseEventBatch(read.events);
      kept = batch.events.length;
      assert.equal(batch.malformed, 0);
    } finally {
      passes.restore();
    }
    assert.equal(kept, events.length);
    assert.ok(pages >= 4, `read in ${pages} pages`);
    // One pass per page (the page's envelope), then one per event that has decisive parts.
    assert.equal(passes.n, pages + SCHEMA_CHECKED, `${passes.n} schema passes for ${events.length} events in ${pages} pages`);
    assert.ok(passes.n - pages <= events.length, 'never more than one pass per event');
  });

  it('the live stream: frames are buffered without a schema, and parsed once when read', async () => {
    server.addSession('s2');
    const transport = new StreamingTransport({ client, initialBackoffMs: 20, maxBackoffMs: 100 });
    try {
      // The first read goes over HTTP and opens the stream after it.
      await transport.readEvents('s2', null);
      await waitFor(() => transport.streamStats('s2')?.mode, { message: 'the stream to open', until: (mode) => mode === 'open' });
      const events = sessionEvents(50);
      const passes = countSchemaPasses([protocol, codeSessions]);
      let parsed = 0;
      let cursor: string | null = null;
      try {
        server.append('s2', ...events);
        for (let round = 0; round < 200 && parsed < events.length; round++) {
          await transport.waitForActivity('s2', 1_000);
          const read = await transport.readEvents('s2', cursor);
          cursor = read.lastId;
          parsed += parseEventBatch(read.events).events.length;
        }
      } finally {
        passes.restore();
      }
      assert.equal(parsed, events.length);
      assert.ok((transport.streamStats('s2')?.readsFromStream ?? 0) > 0, 'served from the stream');
      assert.equal(passes.n, SCHEMA_CHECKED, `${passes.n} schema passes for ${events.length} streamed events`);
    } finally {
      await transport.dispose();
    }
  });
});

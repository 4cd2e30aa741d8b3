import { strict as assert } from 'node:assert';
import { controlResponseEvent } from '../../../src/core/protocol';
import { serverForSuite, startServer } from '../../support/serverProcess';
import { example, pendingPlanRequest } from '../hostTestKit';
import { allEvents, call, createSession, readStream, waitForStatus, type StreamFrame } from './serverTestKit';

const eventIds = (frames: StreamFrame[]) => frames.filter((f) => f.kind === 'event').map((f) => f.id);

describe('ultraplan-server event stream (SSE)', function () {
  this.timeout(30_000);
  const server = serverForSuite({ scenario: example('approve.json'), keepAliveMs: 150 });

  it('sends the backlog as id/data frames, then the status, then keep-alive comments', async () => {
    const id = await createSession(server);
    await waitForStatus(server, id, 'requires_action');
    const stored = await allEvents(server, id);
    const { frames, status, contentType } = await readStream(server, id, {
      until: (f) => f.some((x) => x.kind === 'comment'),
    });
    assert.equal(status, 200);
    assert.match(contentType ?? '', /^text\/event-stream/);
    assert.deepEqual(
      eventIds(frames),
      stored.map((e) => e.id),
    );
    assert.deepEqual(
      frames.filter((f) => f.kind === 'event').map((f) => f.data),
      stored,
      'each data line is the stored event',
    );
    const statusIndex = frames.findIndex((f) => f.kind === 'status');
    assert.equal(statusIndex, stored.length, 'the status frame follows the backlog');
    assert.deepEqual(frames[statusIndex]!.data, { session_status: 'requires_action' });
    assert.equal(frames.find((f) => f.kind === 'comment')?.comment?.trim(), 'keep-alive');
  });

  it('streams live events and every status change; resumes by after_id and by Last-Event-ID', async () => {
    const id = await createSession(server);
    await waitForStatus(server, id, 'requires_action');
    const stored = await allEvents(server, id);
    const cursor = stored[3].id as string;

    const byQuery = await readStream(server, id, { afterId: cursor, until: (f) => f.some((x) => x.kind === 'status') });
    assert.deepEqual(
      eventIds(byQuery.frames),
      stored.slice(4).map((e) => e.id),
    );
    const byHeader = await readStream(server, id, { lastEventId: cursor, until: (f) => f.some((x) => x.kind === 'status') });
    assert.deepEqual(
      eventIds(byHeader.frames),
      stored.slice(4).map((e) => e.id),
    );

    // Live: open at the end of the log, then decide; the stream carries the rest and the statuses.
    const pending = pendingPlanRequest(stored);
    const live = readStream(server, id, {
      afterId: stored.at(-1).id,
      until: (f) => f.some((x) => x.kind === 'status' && x.data.session_status === 'idle'),
    });
    await new Promise((r) => setTimeout(r, 200));
    const sent = await call(server, 'POST', `/v1/sessions/${id}/events`, {
      events: [controlResponseEvent(pending.requestId, { behavior: 'allow', updatedInput: { plan: pending.plan } })],
    });
    assert.equal(sent.status, 200);
    const { frames } = await live;
    const after = await allEvents(server, id);
    assert.deepEqual(
      eventIds(frames),
      after.slice(stored.length).map((e) => e.id),
      'every new event once, in order',
    );
    assert.deepEqual(
      frames.filter((f) => f.kind === 'status').map((f) => f.data.session_status),
      ['requires_action', 'running', 'idle'],
    );
  });

  it('ends the stream once the session is archived; an unknown session is a 404 JSON error', async () => {
    const id = await createSession(server);
    await waitForStatus(server, id, 'requires_action');
    const stream = readStream(server, id, { timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await call(server, 'POST', `/v1/sessions/${id}/archive`, {})).status, 200);
    const { frames, ended } = await stream;
    assert.ok(ended, 'the server ended the stream');
    assert.deepEqual(frames.filter((f) => f.kind === 'status').at(-1)?.data, { session_status: 'archived' });

    const missing = await call(server, 'GET', '/v1/sessions/session_none/events/stream');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.type, 'not_found_error');
    const unauthorized = await call(server, 'GET', `/v1/sessions/${id}/events/stream`, undefined, { headers: {} });
    assert.equal(unauthorized.status, 401);
  });

  it('ends open streams on SIGTERM and exits 0', async () => {
    const own = await startServer({ scenario: example('approve.json') });
    const id = await createSession(own);
    await waitForStatus(own, id, 'requires_action');
    const stream = readStream(own, id, { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 200));
    const code = await own.stop();
    const { ended, frames } = await stream;
    assert.equal(code, 0);
    assert.ok(ended, 'the stream was closed by the server, not by the timeout');
    assert.ok(frames.some((f) => f.kind === 'status'));
  });
});

// ultraplan-server's current wire, `/v1/code/sessions`, over real HTTP against the real server
// process (scripted agent): the envelope, cursor paging, wrapped payloads, the archive, the live
// stream's client_event frames, and the older routes still answering for the same session.
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { setPlanModeEvent, userMessageEvent } from '../../../src/core/protocol';
import { EXAMPLES_DIR, serverForSuite } from '../../support/serverProcess';
import { waitFor } from '../../support/wait';

interface Item {
  sequence_num: number;
  payload: { type: string; uuid: string };
}

describe('ultraplan-server: the /v1/code/sessions wire', function () {
  this.timeout(30_000);
  const server = serverForSuite({ scenario: join(EXAMPLES_DIR, 'question.json') });

  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    const response = await fetch(server.url + path, {
      method,
      headers: server.headers({ 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  async function create(): Promise<string> {
    const created = await call('POST', '/v1/code/sessions', {
      title: 'ultraplan: wire',
      events: [
        { payload: { ...setPlanModeEvent('set-mode-w'), uuid: 'c-1' } },
        { payload: { ...userMessageEvent('Change the build target'), uuid: 'c-2' } },
      ],
      config: { sources: [], outcomes: [], model: 'scripted' },
    });
    assert.equal(created.status, 200, JSON.stringify(created.json));
    const session = created.json.session as { id: string; status: string; worker_status: string; config: { model: string } };
    assert.match(session.id, /^cse_/);
    assert.equal(session.status, 'active');
    assert.equal(session.config.model, 'scripted');
    return session.id;
  }

  async function readAll(id: string, limit: number): Promise<{ items: Item[]; pages: number; cursors: Array<string | null> }> {
    const items: Item[] = [];
    const cursors: Array<string | null> = [];
    let cursor: string | null = null;
    let pages = 0;
    for (;;) {
      const query: string = `?sort_order=asc&limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`;
      const page = await call('GET', `/v1/code/sessions/${id}/events${query}`);
      assert.equal(page.status, 200);
      pages++;
      items.push(...(page.json.data as Item[]));
      cursors.push(page.json.next_cursor as string | null);
      if (!page.json.next_cursor) return { items, pages, cursors };
      cursor = page.json.next_cursor as string;
    }
  }

  it('creates, reads with sort_order=asc&cursor=, sends wrapped payloads, archives (twice is done)', async () => {
    const id = await create();
    // The agent asks its question and waits: worker_status idle.
    await waitFor(async () => ((await call('GET', `/v1/code/sessions/${id}`)).json.session as { worker_status: string }).worker_status, {
      message: 'worker_status idle (the question asked)',
      until: (status) => status === 'idle',
    });
    const { items, pages, cursors } = await readAll(id, 2);
    assert.ok(items.length >= 3 && pages >= 2, `${items.length} items in ${pages} pages`);
    assert.deepEqual(
      items.map((i) => i.sequence_num),
      items.map((_, n) => n + 1),
      'sequence numbers from 1, in order',
    );
    assert.deepEqual(
      items.slice(0, 2).map((i) => i.payload.uuid),
      ['c-1', 'c-2'],
      'the uuids sent are kept',
    );
    assert.equal(cursors.at(-1), null);
    assert.equal('id' in items[0]!.payload, false, 'the payload is the event as sent, without our internal id');

    const sent = await call('POST', `/v1/code/sessions/${id}/events`, {
      events: [{ payload: { ...userMessageEvent('Node 20'), uuid: 'r-1' } }],
    });
    assert.equal(sent.status, 200);
    const results = sent.json.results as Array<{ sequence_num: number; duplicate: boolean }>;
    assert.equal(results.length, 1);
    assert.equal(results[0]!.sequence_num, items.length + 1);
    assert.equal(results[0]!.duplicate, false);

    // The older routes answer for the same session under either id form.
    const older = await call('GET', `/v1/sessions/${id}`);
    assert.equal(older.status, 200);
    assert.equal(older.json.id, `session_${id.slice('cse_'.length)}`);

    assert.equal((await call('POST', `/v1/code/sessions/${id}/archive`, {})).status, 200);
    const again = await call('POST', `/v1/code/sessions/${id}/archive`, {});
    assert.equal(again.status, 200);
    assert.equal((again.json.session as { status: string }).status, 'archived');
    assert.equal((await call('POST', `/v1/code/sessions/${id}/events`, { events: [{ payload: userMessageEvent('late') }] })).status, 409);
  });

  it('refuses what the wire does not have: another sort order, a bad cursor, unwrapped events, wrong methods', async () => {
    const id = await create();
    assert.equal((await call('GET', `/v1/code/sessions/${id}/events?sort_order=desc`)).status, 400);
    assert.equal((await call('GET', `/v1/code/sessions/${id}/events?cursor=abc`)).status, 400);
    const unwrapped = await call('POST', `/v1/code/sessions/${id}/events`, { events: [userMessageEvent('x')] });
    assert.equal(unwrapped.status, 400);
    assert.match(JSON.stringify(unwrapped.json), /payload/);
    assert.equal((await call('DELETE', `/v1/code/sessions/${id}`)).status, 405);
    assert.equal((await call('GET', '/v1/code/sessions/cse_nosuch')).status, 404);
  });

  it('streams client_event frames whose id is the sequence number, resuming after from_sequence_num', async () => {
    const id = await create();
    const { items } = await readAll(id, 100);
    const controller = new AbortController();
    const response = await fetch(`${server.url}/v1/code/sessions/${id}/events/stream?from_sequence_num=1`, {
      headers: server.headers({ accept: 'text/event-stream' }),
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while ((text.match(/event: client_event/g) ?? []).length < items.length - 1) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    controller.abort();
    const frames = text.split('\n\n').filter((f) => f.includes('event: client_event'));
    const ids = frames.map((f) => Number(/^id: (\d+)$/m.exec(f)?.[1]));
    assert.ok(ids.length >= items.length - 1, `${ids.length} frames`);
    assert.deepEqual(
      ids,
      ids.map((_, n) => n + 2),
      'everything after sequence number 1, in order',
    );
    const first = frames[0]!;
    assert.match(first, /^event: client_event\nid: 2\ndata: /m);
    const data = JSON.parse(first.slice(first.indexOf('data: ') + 6)) as Item;
    assert.equal(data.sequence_num, 2);
    assert.equal(data.payload.uuid, 'c-2');
  });
});

// Listing a Jules key's sessions (sessions.list) for Attach, against the stand-in that follows the
// reference strictly: every page read with pageToken, newest first whatever order the API pages
// in, each session once, with its status; a page that is not a ListSessionsResponse is a clear
// error naming the page and changes nothing (the next listing has everything); a session entry the
// reference does not describe is skipped and counted, the rest listed.
import assert from 'node:assert/strict';
import { SessionsError } from '../../../src/core/errors';
import { setPlanModeEvent, userMessageEvent } from '../../../src/core/protocol';
import { JulesBackend } from '../../../src/client/jules/backend';
import { JulesStandIn } from '../../support/jules/standIn';

const KEY = 'AIzaSy-stand-in-key-0123456789';
const LIST = /^GET \/v1alpha\/sessions$/;

describe('Jules: listing the sessions of a key (sessions.list)', () => {
  let standIn: JulesStandIn;
  let logs: string[];

  /** Sessions started elsewhere (the Jules web app, another window), oldest first. */
  async function startedElsewhere(count: number): Promise<string[]> {
    const elsewhere = new JulesBackend({
      baseUrl: standIn.baseUrl,
      getKey: async () => KEY,
      repository: { owner: 'octo', name: 'hello', branch: 'main' },
    });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = await elsewhere.createSession({
        title: `task ${i}`,
        events: [
          { type: 'event', data: setPlanModeEvent(`m${i}`) },
          { type: 'event', data: userMessageEvent(`Task number ${i}`) },
        ],
      });
      ids.push(created.id);
    }
    return ids;
  }

  /** The backend a window has for Jules before it starts anything: no repository, the key only. */
  const here = () => new JulesBackend({ baseUrl: standIn.baseUrl, getKey: async () => KEY, log: (line) => logs.push(line) });
  const listRequests = () => standIn.requests.filter((r) => r.method === 'GET' && r.path === '/v1alpha/sessions');

  beforeEach(async () => {
    logs = [];
    standIn = await new JulesStandIn({ key: KEY, maxPageSize: 2 }).start();
  });
  afterEach(async () => {
    await standIn?.close();
  });

  it('reads every page with pageToken and lists each session once, newest first, with its status', async () => {
    const ids = await startedElsewhere(5);
    standIn.setState(ids[1]!, 'AWAITING_PLAN_APPROVAL');
    standIn.setState(ids[3]!, 'COMPLETED');
    const listed = await here().listSessions();
    assert.deepEqual(
      listed.map((s) => s.id),
      [...ids].reverse(),
    );
    assert.deepEqual(
      listed.map((s) => s.title),
      ['task 4', 'task 3', 'task 2', 'task 1', 'task 0'],
    );
    assert.equal(listed.find((s) => s.id === ids[1])?.session_status, 'requires_action');
    assert.equal(listed.find((s) => s.id === ids[3])?.session_status, 'idle');
    assert.equal(listed.find((s) => s.id === ids[0])?.session_status, 'running');
    assert.deepEqual(
      listRequests().map((r) => r.query),
      ['?pageSize=100', '?pageSize=100&pageToken=s2', '?pageSize=100&pageToken=s4'],
    );
    assert.ok(standIn.requests.every((r) => r.keyOk));
  });

  it('no sessions: an empty list (the reference omits the empty field)', async () => {
    assert.deepEqual(await here().listSessions(), []);
    assert.equal(listRequests().length, 1);
  });

  it('a page that is not a ListSessionsResponse: a clear error naming it; nothing changed, the next listing has every session', async () => {
    const ids = await startedElsewhere(5);
    const backend = here();
    standIn.failNext(LIST, { body: { sessions: 'not a list', nextPageToken: 's4' } }, /pageToken=s2/);
    await assert.rejects(backend.listSessions(), (err: unknown) => {
      assert.ok(err instanceof SessionsError, String(err));
      assert.match(err.message, /^Listing the Jules sessions failed at page 2 after 2 sessions on the pages before it: /);
      assert.match(err.message, /the answer is not what the Jules API reference describes/);
      assert.match(err.message, /Nothing was changed; listing again reads every page again\.$/);
      assert.equal(err.kind, 'transient', 'a garbled read is worth another try');
      return true;
    });
    standIn.failNext(LIST, { malformed: true });
    await assert.rejects(backend.listSessions(), /failed at page 1: .*not JSON/);
    const listed = await backend.listSessions();
    assert.deepEqual(
      listed.map((s) => s.id),
      [...ids].reverse(),
      'every session, once',
    );
  });

  it('an error answer keeps its kind (a wrong key is unauthorized) and names the page', async () => {
    await startedElsewhere(1);
    const wrong = new JulesBackend({ baseUrl: standIn.baseUrl, getKey: async () => 'AIzaSy-wrong' });
    await assert.rejects(wrong.listSessions(), (err: unknown) => {
      assert.ok(err instanceof SessionsError);
      assert.equal(err.kind, 'unauthorized');
      assert.match(err.message, /failed at page 1: Jules GET \/sessions: 400 INVALID_ARGUMENT: API key not valid/);
      assert.ok(!err.message.includes('AIzaSy-wrong'), 'the key is never in a message');
      return true;
    });
  });

  it('a session the reference does not describe is skipped and logged; the rest of its page and the others are listed', async () => {
    const ids = await startedElsewhere(3);
    const good = { name: 'sessions/77', id: '77', title: 'kept', state: 'PLANNING', createTime: '2026-12-01T00:00:00Z' };
    standIn.failNext(LIST, { body: { sessions: [{ name: 'not-a-session-name', id: 5 }, good], nextPageToken: 's0' } });
    const listed = await here().listSessions();
    assert.deepEqual(
      listed.map((s) => s.id),
      [...[...ids].reverse(), '77'],
    );
    assert.ok(logs.some((line) => /jules: 1 listed sessions are not what the reference describes; skipped/.test(line)));
  });

  it('the stand-in holds to the reference: pageSize from 1, unknown parameters, and bad tokens are refused', async () => {
    await startedElsewhere(3);
    const get = async (query: string) => {
      const response = await fetch(`${standIn.baseUrl}/sessions${query}`, { headers: { 'x-goog-api-key': KEY } });
      return { status: response.status, json: (await response.json()) as { error?: { status?: string; message?: string } } };
    };
    for (const query of ['?pageSize=0', '?pageSize=1.5', '?filter=x', '?pageToken=zz']) {
      const answer = await get(query);
      assert.equal(answer.status, 400, query);
      assert.equal(answer.json.error?.status, 'INVALID_ARGUMENT', query);
    }
    const paged = await get('?pageSize=1');
    assert.equal(paged.status, 200);
    assert.deepEqual(Object.keys(paged.json).sort(), ['nextPageToken', 'sessions']);
  });
});

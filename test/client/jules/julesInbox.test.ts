// The inbox's Jules group against the stand-in that follows the reference strictly: the key's
// sessions listed across pages, newest first, each row with its state in words (a plan awaiting
// approval reads as waiting for the person's decision) and a click that attaches to it or opens
// the review a window already follows; listed again on its interval; a failure is a row above the
// sessions last listed, retried with backoff (doubling, never sooner than Retry-After) until a
// listing works (by the listing's clock, not the timer's); a refused key is not tried again until the key changes; no listing while paused
// or after dispose. The rows' words and limits (julesInboxView) without a server at the end.
import assert from 'node:assert/strict';
import { JulesApi } from '../../../src/client/jules/api';
import { JulesInboxListing, type JulesInboxState } from '../../../src/client/jules/julesInboxListing';
import { julesInboxView } from '../../../src/client/jules/julesInboxRows';
import { readJulesSessions } from '../../../src/client/jules/sessionList';
import type { JulesSession } from '../../../src/client/jules/schemas';
import { JulesStandIn } from '../../support/jules/standIn';
import { waitFor } from '../../support/wait';

const KEY = 'AIzaSy-stand-in-key-0123456789';
const LIST = /^GET \/v1alpha\/sessions$/;
const NOBODY_FOLLOWS = () => undefined;

describe("Jules: the inbox's group of the key's sessions", () => {
  let standIn: JulesStandIn;
  let key: string;
  let api: JulesApi;
  const listings: JulesInboxListing[] = [];

  /** Sessions started elsewhere (the Jules web app, another window), oldest first, in these states. */
  async function started(states: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const [i, state] of states.entries()) {
      const session = await api.createSession({
        prompt: `Task number ${i}`,
        title: `task ${i}`,
        sourceContext: { source: 'sources/github/octo/hello', githubRepoContext: { startingBranch: 'main' } },
        requirePlanApproval: true,
      });
      standIn.setState(session.id, state);
      ids.push(session.id);
    }
    return ids;
  }

  function listing(options: Partial<ConstructorParameters<typeof JulesInboxListing>[0]> = {}): JulesInboxListing {
    const made = new JulesInboxListing({ read: (signal) => readJulesSessions(api, signal), ...options });
    listings.push(made);
    return made;
  }

  const listRequests = () => standIn.requests.filter((r) => r.method === 'GET' && r.path === '/v1alpha/sessions');

  /** Each state the listing moved to, with when. */
  function states(of: JulesInboxListing): Array<{ at: number; state: JulesInboxState }> {
    const seen: Array<{ at: number; state: JulesInboxState }> = [];
    of.onDidChange(() => seen.push({ at: Date.now(), state: of.state }));
    return seen;
  }

  beforeEach(async () => {
    key = KEY;
    standIn = await new JulesStandIn({ key: KEY, maxPageSize: 2 }).start();
    api = new JulesApi({ baseUrl: standIn.baseUrl, getKey: async () => key });
  });
  afterEach(async () => {
    for (const made of listings.splice(0)) made.dispose();
    await standIn?.close();
  });

  it('lists every page, newest first, each row with its state in words; a plan awaiting approval waits for the decision', async () => {
    const ids = await started(['IN_PROGRESS', 'AWAITING_PLAN_APPROVAL', 'COMPLETED']);
    const inbox = listing();
    assert.equal(inbox.state.kind, 'listing');
    assert.deepEqual(
      julesInboxView(inbox.state, NOBODY_FOLLOWS, Date.now()).rows.map((r) => r.label),
      ['Listing the Jules sessions…'],
    );
    await inbox.refresh();
    assert.equal(inbox.state.kind, 'listed');
    assert.deepEqual(
      listRequests().map((r) => r.query),
      ['?pageSize=100', '?pageSize=100&pageToken=s2'],
      'every page read',
    );
    assert.ok(standIn.requests.every((r) => r.keyOk));

    const view = julesInboxView(inbox.state, NOBODY_FOLLOWS, Date.now());
    assert.equal(view.label, 'Jules');
    assert.equal(view.description, '3 · 1 waiting for you');
    assert.deepEqual(
      view.rows.map((r) => [r.label, r.description.split(' · ')[0], r.icon, r.tone]),
      [
        ['task 2', 'completed', 'pass', undefined],
        ['task 1', 'plan ready: waiting for your decision', 'checklist', 'attention'],
        ['task 0', 'working', 'loading~spin', undefined],
      ],
    );
    // Not followed here: a click attaches to it through its link (which Attach parses).
    assert.deepEqual(view.rows[1]!.action, { kind: 'attach', link: `https://jules.google.com/session/${ids[1]}` });
    assert.match(view.rows[1]!.tooltip, /Click to follow it here and open its review\./);

    // Followed here: a click opens its review, and the row says so.
    const followed = julesInboxView(
      inbox.state,
      (id) => (id === ids[1] ? { key: 'jules:key-1', phase: 'plan_ready' } : undefined),
      Date.now(),
    );
    assert.deepEqual(followed.rows[1]!.action, { kind: 'open', key: 'jules:key-1' });
    assert.match(followed.rows[1]!.description, /· followed here: plan ready$/);
    assert.deepEqual(followed.rows[0]!.action, { kind: 'attach', link: `https://jules.google.com/session/${ids[2]}` });
  });

  it('lists again on its interval: a session that moved on shows its new state', async () => {
    const ids = await started(['PLANNING']);
    const inbox = listing({ intervalMs: 150 });
    await inbox.refresh();
    assert.match(julesInboxView(inbox.state, NOBODY_FOLLOWS, Date.now()).rows[0]!.description, /^planning/);
    standIn.setState(ids[0]!, 'AWAITING_PLAN_APPROVAL');
    await waitFor(() => julesInboxView(inbox.state, NOBODY_FOLLOWS, Date.now()).rows[0]!.description, {
      message: 'the row to show the new state',
      until: (description) => description.startsWith('plan ready: waiting for your decision'),
    });
    assert.ok(listRequests().length >= 2);
  });

  it('a failure is a row above the sessions last listed, tried again with backoff until a listing works', async () => {
    await started(['COMPLETED', 'AWAITING_USER_FEEDBACK']);
    const inbox = listing({ firstRetryMs: 150, intervalMs: 60_000 });
    await inbox.refresh();
    const seen = states(inbox);
    standIn.failNext(LIST, { status: 503 });
    standIn.failNext(LIST, { status: 503 });
    const failedAt = Date.now();
    await inbox.refresh();

    const failed = inbox.state;
    assert.equal(failed.kind, 'failed');
    assert.equal(failed.refused, false);
    assert.ok(failed.retryAt !== undefined && failed.retryAt >= failedAt + 150, 'the first retry waits firstRetryMs');
    const view = julesInboxView(failed, NOBODY_FOLLOWS, Date.now());
    assert.equal(view.description, '2 · 1 waiting for you · not up to date');
    assert.deepEqual(
      view.rows.map((r) => r.label),
      ['Could not list the Jules sessions', 'task 1', 'task 0'],
      'the error row, then the sessions last listed',
    );
    assert.equal(view.rows[0]!.tone, 'error');
    assert.equal(view.rows[0]!.action, undefined, 'it is tried again by itself');
    assert.match(view.rows[0]!.description, /^trying again in \d+ s$/);
    assert.match(view.rows[0]!.tooltip, /Listing the Jules sessions failed at page 1: Jules GET \/sessions: 503/);
    assert.equal(view.rows[1]!.description.split(' · ')[0], 'waiting for your reply');

    const listed = await waitFor(() => (inbox.state.kind === 'listed' ? inbox.state : undefined), {
      message: 'a listing that works after two failures',
      timeoutMs: 10_000,
    });
    assert.equal(listed.sessions.length, 2);
    const kinds = seen.map((s) => s.state.kind);
    assert.deepEqual(kinds, ['failed', 'failed', 'listed']);
    const [first, second, third] = seen.map((s) => s.at);
    assert.ok(second! - first! >= 140, `the second try waited ${second! - first!} ms (150 asked)`);
    assert.ok(third! - second! >= 290, `the third try waited ${third! - second!} ms (doubled: 300)`);
    assert.equal(listRequests().length, 1 + 3);
  });

  it("waits at least the API's Retry-After", async () => {
    await started(['COMPLETED']);
    const inbox = listing({ firstRetryMs: 100 });
    standIn.failNext(LIST, { status: 429, statusText: 'RESOURCE_EXHAUSTED', retryAfter: '3' });
    const before = Date.now();
    await inbox.refresh();
    const failed = inbox.state;
    assert.equal(failed.kind, 'failed');
    assert.ok(failed.retryAt !== undefined && failed.retryAt >= before + 3_000, 'Retry-After (3 s) is longer than the backoff');
    assert.match(julesInboxView(failed, NOBODY_FOLLOWS, Date.now()).rows[0]!.description, /^trying again in [23] s$/);
    assert.deepEqual(julesInboxView(failed, NOBODY_FOLLOWS, Date.now()).rows.length, 1, 'nothing listed yet: the error row only');
  });

  it('never asks before the retry is due by its clock, even when the timer fires early', async () => {
    await started(['COMPLETED']);
    // A clock that stands still until the test moves it: the retry timer fires on the event loop's
    // time, but the listing's own clock has not reached the due time yet.
    let clock = 1_000_000;
    const inbox = listing({ firstRetryMs: 40, now: () => clock });
    standIn.failNext(LIST, { status: 503 });
    await inbox.refresh();
    assert.equal(inbox.state.kind, 'failed');
    assert.equal(inbox.state.kind === 'failed' ? inbox.state.retryAt : 0, 1_000_040);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(listRequests().length, 1, 'the timer fired, but the clock says the retry is not due: nothing asked');
    clock += 40;
    await waitFor(() => inbox.state.kind === 'listed', { message: 'the retry once its time came', timeoutMs: 10_000 });
    assert.equal(listRequests().length, 2);
  });

  it('a refused key is a row that sets the key, and is not tried again until the key changes', async () => {
    await started(['PLANNING']);
    key = 'AIzaSy-not-the-key-00000000';
    const inbox = listing({ firstRetryMs: 50 });
    await inbox.refresh();
    const refused = inbox.state;
    assert.equal(refused.kind, 'failed');
    assert.equal(refused.refused, true);
    const row = julesInboxView(refused, NOBODY_FOLLOWS, Date.now()).rows[0]!;
    assert.equal(row.description, 'the key was refused: click to set it');
    assert.deepEqual(row.action, { kind: 'setKey' });
    assert.match(row.tooltip, /API key not valid/);
    assert.ok(!row.tooltip.includes(key), 'never the key itself');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(listRequests().length, 1, 'the refused key is not tried again by itself');

    key = KEY;
    await inbox.refresh();
    assert.equal(inbox.state.kind, 'listed');
    assert.equal(listRequests().length, 2);
  });

  it('lists nothing while paused; on resume, at once when a listing fell due; nothing after dispose', async () => {
    await started(['PLANNING']);
    const inbox = listing({ intervalMs: 100 });
    await inbox.refresh();
    inbox.pause();
    await new Promise((resolve) => setTimeout(resolve, 350));
    assert.equal(listRequests().length, 1, 'no listing while the window is not in use');
    inbox.resume();
    await waitFor(() => listRequests().length >= 2 || undefined, { message: 'a listing on resume', timeoutMs: 10_000 });
    inbox.dispose();
    const after = listRequests().length;
    await new Promise((resolve) => setTimeout(resolve, 350));
    assert.ok(listRequests().length <= after + 1, 'at most the listing in flight at dispose');
    await inbox.refresh();
    assert.ok(listRequests().length <= after + 1, 'refresh after dispose lists nothing');
  });
});

describe("Jules: the inbox group's words", () => {
  const session = (id: string, fields: Partial<JulesSession> = {}): JulesSession => ({
    name: `sessions/${id}`,
    id,
    createTime: '2026-12-01T10:00:00Z',
    updateTime: '2026-12-01T10:30:00Z',
    ...fields,
  });
  const now = Date.parse('2026-12-01T12:30:00Z');

  it('no sessions: one row that says so', () => {
    const view = julesInboxView({ kind: 'listed', sessions: [], skipped: 0 }, NOBODY_FOLLOWS, now);
    assert.equal(view.description, '0');
    assert.deepEqual(
      view.rows.map((r) => [r.label, r.action]),
      [['No Jules sessions for this key', undefined]],
    );
  });

  it('at most `max` rows, the group counting the rest; the age from the last update; a title from the prompt when none is given', () => {
    const sessions = [
      session('3', { title: 'ultraplan: newest', state: 'QUEUED' }),
      session('2', { prompt: 'Fix the login\nwith details', state: 'STATE_UNSPECIFIED' }),
      session('1', { state: 'SOMETHING_NEW' }),
    ];
    const view = julesInboxView({ kind: 'listed', sessions, skipped: 0 }, NOBODY_FOLLOWS, now, 2);
    assert.equal(view.description, '2 of 3');
    assert.deepEqual(
      view.rows.map((r) => [r.label, r.description]),
      [
        ['newest', 'queued · 2 h ago'],
        ['Fix the login', 'state not given · 2 h ago'],
      ],
    );
    const all = julesInboxView({ kind: 'listed', sessions, skipped: 0 }, NOBODY_FOLLOWS, now);
    assert.deepEqual(
      [all.rows[2]!.label, all.rows[2]!.description, all.rows[2]!.icon],
      ['Jules session 1', 'state something new · 2 h ago', 'circle-outline'],
    );
    const failed = julesInboxView({ kind: 'listed', sessions: [session('9', { state: 'FAILED' })], skipped: 0 }, NOBODY_FOLLOWS, now);
    assert.deepEqual([failed.rows[0]!.icon, failed.rows[0]!.tone], ['error', 'error']);
  });
});

// Jules as a backend against the stand-in (a real HTTP server on 127.0.0.1 that follows the
// reference strictly): the plan → reject as a message → revised plan → approve → completed loop,
// read by the same scanner every backend's events go through, and every failure the API can give.
import assert from 'node:assert/strict';
import { SessionsError } from '../../../src/core/errors';
import { decisionEvent, planHash } from '../../../src/core/decision';
import { ExitPlanModeScanner, type ScanVerdict } from '../../../src/core/scanner';
import { parseEventBatch } from '../../../src/core/eventBatch';
import { setPlanModeEvent, userMessageEvent, type AnyEvent } from '../../../src/core/protocol';
import {
  EDITED_PLAN_REFUSAL,
  JulesBackend,
  PLAN_FILE_REFUSAL,
  TELEPORT_REFUSAL,
  type JulesBackendOptions,
} from '../../../src/client/jules/backend';
import { planFileOf, planFileSessionRequest } from '../../../src/core/planFileSession';
import { NO_KEY_MESSAGE } from '../../../src/client/jules/api';
import { JulesStandIn, type StandInOptions } from '../../support/jules/standIn';

const KEY = 'AIzaSy-stand-in-key-0123456789';

describe('Jules backend against the reference stand-in', () => {
  let standIn: JulesStandIn;
  let logs: string[];

  async function start(options: Partial<StandInOptions> = {}): Promise<void> {
    standIn = await new JulesStandIn({ key: KEY, ...options }).start();
  }

  function backend(options: Partial<JulesBackendOptions> = {}): JulesBackend {
    return new JulesBackend({
      baseUrl: standIn.baseUrl,
      getKey: async () => KEY,
      repository: { owner: 'octo', name: 'hello', branch: 'main' },
      minPollMs: 0,
      maxPollMs: 0,
      log: (line) => logs.push(line),
      ...options,
    });
  }

  const request = (prompt: string) => ({
    title: 'ultraplan: add a greeting',
    events: [
      { type: 'event' as const, data: setPlanModeEvent('set-mode-1') },
      { type: 'event' as const, data: userMessageEvent(prompt) },
    ],
  });

  /** Reads until the scanner's verdict is `kind` (bounded), returning every event read. */
  async function readUntil(
    b: JulesBackend,
    id: string,
    scanner: ExitPlanModeScanner,
    cursor: { at: string | null },
    kind: ScanVerdict['kind'],
  ) {
    const seen: unknown[] = [];
    for (let i = 0; i < 20; i++) {
      const read = await b.readEvents(id, cursor.at);
      cursor.at = read.lastId;
      seen.push(...read.events);
      const verdict = scanner.ingestParsed(parseEventBatch(read.events));
      if (verdict.kind === kind) return { verdict, seen };
    }
    assert.fail(`no "${kind}" verdict after 20 reads; events: ${JSON.stringify(seen).slice(0, 2000)}`);
  }

  beforeEach(() => {
    logs = [];
  });
  afterEach(async () => {
    await standIn?.close();
  });

  it('plan, reject as a message, revised plan, approve, completed', async () => {
    await start();
    const b = backend();
    const created = await b.createSession(request('Add a greeting file'));
    const create = standIn.requests.find((r) => r.method === 'POST' && r.path === '/v1alpha/sessions')!;
    assert.deepEqual(JSON.parse(create.body), {
      prompt: 'Add a greeting file',
      title: 'ultraplan: add a greeting',
      sourceContext: { source: 'sources/github/octo/hello', githubRepoContext: { startingBranch: 'main' } },
      requirePlanApproval: true,
    });
    assert.equal(b.sessionLink(created.id), `https://jules.google.com/session/${created.id}`);

    const scanner = new ExitPlanModeScanner();
    const cursor = { at: null as string | null };
    await readUntil(b, created.id, scanner, cursor, 'pending');
    const first = scanner.pendingPlan!;
    assert.match(
      first.plan!,
      /^# Jules's plan\n\n1\. Read the code the task touches: Add a greeting file\n2\. Create hello\.txt\n\n {3}With a greeting\.\n$/,
    );
    assert.equal(await b.getStatus(created.id), 'requires_action');

    // Reject with line comments: sent as a message, which Jules answers with a revised plan.
    const feedback = 'Line 2: name it greeting.md, not hello.txt.';
    await b.sendEvents(created.id, [decisionEvent(first.requestId!, first.plan!, { kind: 'reject', feedback })]);
    const message = standIn.requests.find((r) => r.path.endsWith(':sendMessage'))!;
    assert.deepEqual(JSON.parse(message.body), { prompt: feedback });
    await readUntil(b, created.id, scanner, cursor, 'pending');
    const revisions = scanner.revisions;
    assert.equal(revisions.length, 2);
    assert.deepEqual(revisions[0]!.outcome, { kind: 'rejected', feedback });
    const second = scanner.pendingPlan!;
    assert.notEqual(second.toolUseId, first.toolUseId);
    assert.match(second.plan!, /3\. Address the review: Line 2: name it greeting\.md, not hello\.txt\./);

    // Approve: sessions.approvePlan with an empty body, then Jules carries the plan out.
    await b.sendEvents(created.id, [decisionEvent(second.requestId!, second.plan!, { kind: 'approve' })]);
    const approve = standIn.requests.find((r) => r.path.endsWith(':approvePlan'))!;
    assert.equal(approve.body, '');
    const approved = await readUntil(b, created.id, scanner, cursor, 'approved');
    assert.deepEqual(approved.verdict, { kind: 'approved', plan: second.plan!.trimEnd() });
    const done: unknown[] = [...approved.seen];
    for (let i = 0; i < 10 && !done.some((e) => (e as AnyEvent).type === 'result'); i++) {
      const read = await b.readEvents(created.id, cursor.at);
      cursor.at = read.lastId;
      done.push(...read.events);
    }
    const batch = parseEventBatch(done);
    assert.deepEqual(
      batch.progress?.map((p) => [p.plan_hash, p.progress.kind === 'file_touched' ? p.progress.path : '']),
      [[planHash(second.plan!), 'hello.txt']],
    );
    const result = done.find((e) => (e as AnyEvent).type === 'result') as { subtype: string; is_error: boolean };
    assert.deepEqual([result.subtype, result.is_error], ['success', false]);
    assert.equal(await b.getStatus(created.id), 'idle');
    assert.ok(standIn.requests.every((r) => r.keyOk));
  });

  it('reads the same events with the same ids after a reload (a fresh backend), and decides there', async () => {
    await start();
    const b = backend();
    const { id } = await b.createSession(request('Add a greeting file'));
    const scanner = new ExitPlanModeScanner();
    const cursor = { at: null as string | null };
    const { seen } = await readUntil(b, id, scanner, cursor, 'pending');
    const again = await backend().readEvents(id, null);
    assert.deepEqual(again.events, seen);
    assert.deepEqual((await backend().readEvents(id, cursor.at)).events, []);
    // A decision on a fresh backend (restored after a reload) reads the activities before it is checked.
    const pending = scanner.pendingPlan!;
    await backend().sendEvents(id, [decisionEvent(pending.requestId!, pending.plan!, { kind: 'approve' })]);
    assert.equal(standIn.requests.filter((r) => r.path.endsWith(':approvePlan')).length, 1);
  });

  it('refuses a session from a plan file (Review Plan File) before sending anything: its API takes no plan to review', async () => {
    await start();
    const planFile = planFileOf('# Plan\n\n1. Do it.\n', '.cursor/plans/x.plan.md');
    await assert.rejects(
      backend().createSession(planFileSessionRequest(planFile, 'ultraplan: x', () => 'id1')),
      (err: unknown) => err instanceof SessionsError && err.kind === 'bad_request' && err.message === PLAN_FILE_REFUSAL,
    );
    assert.deepEqual(standIn.requests, [], 'nothing reached Jules');
  });

  it('refuses an edited plan and a teleport before sending anything', async () => {
    await start();
    const b = backend();
    const { id } = await b.createSession(request('Add a greeting file'));
    const scanner = new ExitPlanModeScanner();
    await readUntil(b, id, scanner, { at: null }, 'pending');
    const pending = scanner.pendingPlan!;
    const sent = standIn.requests.length;
    await assert.rejects(
      b.sendEvents(id, [decisionEvent(pending.requestId!, pending.plan!, { kind: 'approve_edited', editedPlan: 'my plan' })]),
      (err: unknown) => err instanceof SessionsError && err.kind === 'bad_request' && err.message === EDITED_PLAN_REFUSAL,
    );
    await assert.rejects(
      b.sendEvents(id, [decisionEvent(pending.requestId!, pending.plan!, { kind: 'teleport' })]),
      (err: unknown) => err instanceof SessionsError && err.message === TELEPORT_REFUSAL,
    );
    assert.equal(standIn.requests.length, sent);
    // A decision on a plan that is not waiting (a stale request id) is refused as already answered.
    await b.sendEvents(id, [decisionEvent(pending.requestId!, pending.plan!, { kind: 'approve' })]);
    await assert.rejects(
      b.sendEvents(id, [decisionEvent(pending.requestId!, pending.plan!, { kind: 'approve' })]),
      (err: unknown) => err instanceof SessionsError && err.kind === 'conflict',
    );
  });

  describe('failures give a clear error and lose nothing', () => {
    async function pendingSession(b: JulesBackend) {
      const { id } = await b.createSession(request('Add a greeting file'));
      const scanner = new ExitPlanModeScanner();
      const cursor = { at: null as string | null };
      const { seen } = await readUntil(b, id, scanner, cursor, 'pending');
      return { id, scanner, cursor, seen };
    }

    it('no key: nothing is sent and the error says how to set one', async () => {
      await start();
      const b = backend({ getKey: async () => undefined });
      await assert.rejects(
        b.createSession(request('x')),
        (err: unknown) => err instanceof SessionsError && err.kind === 'unauthorized' && err.message === NO_KEY_MESSAGE,
      );
      assert.equal(standIn.requests.length, 0);
    });

    it('a wrong key (400 API_KEY_INVALID) and a 401 are unauthorized, and neither names the key', async () => {
      await start();
      const wrongKey = 'AIzaSy-wrong-key-9876543210';
      const b = backend({ getKey: async () => wrongKey });
      await assert.rejects(b.createSession(request('x')), (err: unknown) => {
        assert.ok(err instanceof SessionsError && err.kind === 'unauthorized', String(err));
        assert.match(err.message, /400 INVALID_ARGUMENT: API key not valid.*Set Jules API Key/);
        assert.ok(!err.message.includes(wrongKey));
        return true;
      });
      const good = backend();
      const { id } = await pendingSession(good);
      standIn.failNext(/GET \/v1alpha\/sessions\//, {
        status: 401,
        statusText: 'UNAUTHENTICATED',
        message: 'Request had invalid authentication credentials.',
      });
      await assert.rejects(
        good.readEvents(id, null),
        (err: unknown) => err instanceof SessionsError && err.kind === 'unauthorized' && err.status === 401,
      );
      for (const line of logs) assert.ok(!line.includes(KEY) && !line.includes(wrongKey), line);
    });

    it('429 with Retry-After: transient with the wait; the next read carries on where it was', async () => {
      await start();
      const b = backend();
      const { id, cursor, seen } = await pendingSession(b);
      standIn.failNext(/GET .*\/activities$/, {
        status: 429,
        statusText: 'RESOURCE_EXHAUSTED',
        message: 'Quota exceeded.',
        retryAfter: '7',
      });
      await assert.rejects(b.readEvents(id, cursor.at), (err: unknown) => {
        assert.ok(err instanceof SessionsError && err.kind === 'transient', String(err));
        assert.equal(err.retryAfterMs, 7_000);
        assert.match(err.message, /429 RESOURCE_EXHAUSTED: Quota exceeded\. It will be tried again\./);
        return true;
      });
      assert.deepEqual((await b.readEvents(id, cursor.at)).events, []);
      assert.deepEqual((await b.readEvents(id, null)).events, seen);
    });

    it('500 on approve: transient, the plan still waits, and the retry approves it', async () => {
      await start();
      const b = backend();
      const { id, scanner, cursor } = await pendingSession(b);
      const pending = scanner.pendingPlan!;
      const approve = decisionEvent(pending.requestId!, pending.plan!, { kind: 'approve' });
      standIn.failNext(/:approvePlan$/, { status: 500, statusText: 'INTERNAL', message: 'Internal error encountered.' });
      await assert.rejects(
        b.sendEvents(id, [approve]),
        (err: unknown) => err instanceof SessionsError && err.kind === 'transient' && err.status === 500,
      );
      assert.equal(await b.getStatus(id), 'requires_action');
      await b.sendEvents(id, [approve]);
      await readUntil(b, id, scanner, cursor, 'approved');
    });

    it('approve with notes whose message fails: the approval stands and the error says to send the notes again', async () => {
      await start();
      const b = backend();
      const { id, scanner, cursor } = await pendingSession(b);
      const pending = scanner.pendingPlan!;
      standIn.failNext(/:sendMessage$/, { status: 503, message: 'Backend unavailable.' });
      await assert.rejects(
        b.sendEvents(id, [decisionEvent(pending.requestId!, pending.plan!, { kind: 'approve' }), userMessageEvent('Keep it small.')]),
        (err: unknown) =>
          err instanceof SessionsError &&
          err.kind === 'conflict' &&
          /took the decision, but .*503.*Send it again as a reply/.test(err.message),
      );
      await readUntil(b, id, scanner, cursor, 'approved');
    });

    it('a dropped connection and a cut-off JSON answer are transient; no event is lost or repeated', async () => {
      await start();
      const b = backend();
      const { id, scanner, cursor, seen } = await pendingSession(b);
      const pending = scanner.pendingPlan!;
      await b.sendEvents(id, [decisionEvent(pending.requestId!, pending.plan!, { kind: 'reject', feedback: 'Smaller steps.' })]);
      standIn.failNext(/GET .*\/activities$/, { drop: true });
      await assert.rejects(
        b.readEvents(id, cursor.at),
        (err: unknown) => err instanceof SessionsError && err.kind === 'transient' && /connection failed/.test(err.message),
      );
      standIn.failNext(/GET \/v1alpha\/sessions\/\d+$/, { malformed: true });
      await assert.rejects(
        b.readEvents(id, cursor.at),
        (err: unknown) =>
          err instanceof SessionsError &&
          err.kind === 'transient' &&
          /not what the Jules API reference describes \(not JSON\)/.test(err.message),
      );
      const after = await readUntil(b, id, scanner, cursor, 'pending');
      const all = [...seen, ...after.seen] as AnyEvent[];
      assert.equal(new Set(all.map((e) => e.id)).size, all.length);
      assert.deepEqual(all, (await b.readEvents(id, null)).events);
      assert.equal(scanner.revisions.length, 2);
    });

    it('an activity that is not what the reference describes is skipped and logged, the rest read', async () => {
      await start();
      const b = backend();
      const { id, cursor } = await pendingSession(b);
      standIn.pushActivity(id, { name: 'not-a-name', planGenerated: 'nonsense' });
      standIn.pushActivity(id, { name: `sessions/${id}/activities/zz`, id: 'zz', agentMessaged: { agentMessage: 'Still here.' } });
      const read = await b.readEvents(id, cursor.at);
      assert.deepEqual(
        read.events.map((e) => (e as AnyEvent).type),
        ['assistant'],
      );
      assert.ok(logs.some((l) => /1 activities of session \d+ are not what the reference describes/.test(l)));
    });
  });

  it('pages through activities with pageToken and backs off while nothing changes', async () => {
    await start({ maxPageSize: 1 });
    let now = 1_000_000;
    const b = backend({ minPollMs: 2_000, maxPollMs: 8_000, now: () => now });
    const { id } = await b.createSession(request('Add a greeting file'));
    const scanner = new ExitPlanModeScanner();
    const cursor = { at: null as string | null };
    await readUntil(b, id, scanner, cursor, 'pending');
    const pending = scanner.pendingPlan!;
    await b.sendEvents(id, [decisionEvent(pending.requestId!, pending.plan!, { kind: 'reject', feedback: 'More tests.' })]);
    const read = await b.readEvents(id, cursor.at);
    cursor.at = read.lastId;
    assert.ok(
      standIn.requests.some((r) => r.query.includes('pageToken=p')),
      'a later page was asked for by its token',
    );
    assert.equal(scanner.ingestParsed(parseEventBatch(read.events)).kind, 'pending');

    const reads = () => standIn.requests.filter((r) => r.method === 'GET').length;
    const gaps: number[] = [];
    let last = reads();
    for (let t = 0; t < 40; t++) {
      now += 1_000;
      await b.readEvents(id, cursor.at);
      if (reads() > last) {
        gaps.push(t);
        last = reads();
      }
    }
    const intervals = gaps.slice(1).map((g, i) => g - gaps[i]!);
    // Waits of 2 s then doubling to the 8 s ceiling while the session stays the same.
    assert.deepEqual(intervals.slice(0, 4), [4, 8, 8, 8]);
  });

  it('sends If-None-Match when the server offers ETags, and takes a 304 as unchanged', async () => {
    await start({ etags: true });
    const b = backend();
    const { id } = await b.createSession(request('Add a greeting file'));
    const scanner = new ExitPlanModeScanner();
    await readUntil(b, id, scanner, { at: null }, 'pending');
    await b.getStatus(id);
    const gets = standIn.requests.filter((r) => r.method === 'GET' && /sessions\/\d+$/.test(r.path));
    assert.ok(gets.length >= 2);
    assert.equal(gets[0]!.ifNoneMatch, undefined);
    assert.match(gets.at(-1)!.ifNoneMatch ?? '', /^".+"$/);
    assert.equal(await b.getStatus(id), 'requires_action');
  });
});

describe('the Jules stand-in refuses what the reference does not define', () => {
  let standIn: JulesStandIn;
  before(async () => {
    standIn = await new JulesStandIn({ key: KEY }).start();
  });
  after(async () => standIn.close());

  const call = (method: string, path: string, body?: unknown, key: string | null = KEY) =>
    fetch(`${standIn.baseUrl}${path}`, {
      method,
      headers: { ...(key === null ? {} : { 'x-goog-api-key': key }), 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: { status?: string; message?: string } } }));

  const session = { prompt: 'p', sourceContext: { source: 'sources/github/o/r', githubRepoContext: { startingBranch: 'main' } } };

  it('no key is 401, a wrong key 400 API_KEY_INVALID', async () => {
    assert.equal((await call('GET', '/sessions/1', undefined, null)).status, 401);
    const wrong = await call('GET', '/sessions/1', undefined, 'nope');
    assert.deepEqual([wrong.status, wrong.body.error?.status], [400, 'INVALID_ARGUMENT']);
  });

  it('unknown fields, methods and query parameters', async () => {
    const extra = await call('POST', '/sessions', { ...session, planMode: true });
    assert.deepEqual(
      [extra.status, extra.body.error?.message],
      [400, `Invalid JSON payload received. Unknown name "planMode" at 'session': Cannot find field.`],
    );
    const nested = await call('POST', '/sessions', { ...session, sourceContext: { ...session.sourceContext, branch: 'x' } });
    assert.equal(nested.status, 400);
    const created = await call('POST', '/sessions', session);
    assert.equal(created.status, 200);
    const id = (created.body as unknown as { id: string }).id;
    assert.equal((await call('POST', `/sessions/${id}:rejectPlan`, {})).status, 404);
    assert.equal((await call('DELETE', `/sessions/${id}`)).status, 404);
    assert.equal((await call('GET', `/sessions/${id}/activities?filter=x`)).status, 400);
    assert.equal((await call('POST', `/sessions/${id}:sendMessage`, { prompt: 'hi', message: 'hi' })).status, 400);
  });

  it('approvePlan takes an empty body, and only while a plan awaits approval', async () => {
    const created = await call('POST', '/sessions', { ...session, requirePlanApproval: true });
    const id = (created.body as unknown as { id: string }).id;
    assert.equal((await call('POST', `/sessions/${id}:approvePlan`)).body.error?.status, 'FAILED_PRECONDITION');
    await call('GET', `/sessions/${id}/activities`);
    assert.equal((await call('POST', `/sessions/${id}:approvePlan`, { planId: 'plan1' })).status, 400);
    assert.equal((await call('POST', `/sessions/${id}:approvePlan`)).status, 200);
  });
});

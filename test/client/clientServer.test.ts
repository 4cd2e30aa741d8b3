// Every failure class the client meets, against the real server process through the fault proxy,
// seen where it matters: in the poller's outcome. Plus paging, a client restarted from its saved
// cursor, and a server restarted mid-session.
import { strict as assert } from 'node:assert';
import { SessionsError, UltraplanPollError } from '../../src/core/errors';
import { pollForApprovedPlan, type ApprovedPlan } from '../../src/core/poller';
import { userMessageEvent } from '../../src/core/protocol';
import { ExitPlanModeScanner } from '../../src/core/scanner';
import type { SessionsClient } from '../../src/client/sessionsClient';
import { serverForSuite, startServer, tempDir, type ServerProcess } from '../support/serverProcess';
import {
  MODES,
  clientRig,
  createPlanSession,
  pollInterval,
  rawEvents,
  scenario,
  scriptedReviewer,
  startRig,
  type Rig,
} from './clientHarness';
import { recordReads, watchPhases } from '../support/pollPhases';
import { waitFor } from '../support/wait';

const allow = (plan: string) => ({ behavior: 'allow' as const, updatedInput: { plan } });
/** The poller's own reads: the session (status) and its events; not the stream, not POSTs. */
const POLL_READS = /^\/v1\/code\/sessions\/[^/]+(\/events)?$/;

/** Polls with a short interval in both modes: retries wait one interval each. */
async function pollOutcome(
  rig: Pick<Rig, 'client' | 'backend'>,
  sessionId: string,
  extra: { maxConsecutiveFailures?: number; signal?: AbortSignal; reviewer?: SessionsClient } = {},
) {
  // The person answering is another party: a fault or short bound on the poller's reads is not theirs.
  const { reviewer: reviewerClient = rig.client, ...pollExtra } = extra;
  const reviewer = scriptedReviewer(reviewerClient, sessionId, [{ on: 'plan_ready', decide: (plan) => allow(plan) }]);
  try {
    const plan = await pollForApprovedPlan({
      sessionId,
      transport: rig.backend.transport,
      pollIntervalMs: 100,
      timeoutMs: 20_000,
      ...watchPhases(reviewer.onPhase),
      ...pollExtra,
    });
    await reviewer.settled();
    assert.deepEqual(reviewer.failures, []);
    return plan;
  } catch (err) {
    await reviewer.settled();
    if (err instanceof UltraplanPollError) return err;
    throw err;
  }
}

function assertApproved(result: ApprovedPlan | UltraplanPollError): asserts result is ApprovedPlan {
  assert.ok(
    !(result instanceof UltraplanPollError),
    `expected an approval, got ${result instanceof Error ? `${result.reason}: ${result.message}` : ''}`,
  );
  assert.equal(result.executionTarget, 'remote');
  assert.match(result.plan, /Add a CHANGELOG/);
}

function assertFailure(result: ApprovedPlan | UltraplanPollError, reason: string): UltraplanPollError {
  assert.ok(result instanceof UltraplanPollError, `expected a failure ${reason}, got an approval`);
  assert.equal(result.reason, reason, result.message);
  return result;
}

describe('SessionsClient against the real server: failure classes', function () {
  this.timeout(60_000);
  const server = serverForSuite({ scenario: scenario('approve'), keepAliveMs: 1_000 });

  it('401: a wrong token fails the poll as unauthorized, never showing the token', async () => {
    const rig = await startRig({ mode: 'polling', reuse: server, token: async () => 'wrong-token-xyz' });
    try {
      const result = assertFailure(await pollOutcome(rig, 'sess_anything'), 'unauthorized');
      assert.ok(!result.message.includes('wrong-token-xyz'));
      assert.ok(!result.message.includes(server.token ?? '<none>'));
    } finally {
      await rig.close();
    }
  });

  it('404: an unknown session fails the poll as not_found', async () => {
    const rig = await startRig({ mode: 'stream', reuse: server });
    try {
      assertFailure(await pollOutcome(rig, 'sess_does_not_exist'), 'not_found');
    } finally {
      await rig.close();
    }
  });

  it('409 after archive: sending is refused, archiving again is done, polling ends as terminated', async () => {
    const rig = await startRig({ mode: 'polling', reuse: server });
    try {
      const sessionId = await createPlanSession(rig);
      await rig.backend.archive(sessionId);
      const err = await rig.backend.sendEvents(sessionId, [userMessageEvent('too late')]).then(
        () => assert.fail('sending to an archived session must fail'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof SessionsError);
      assert.equal(err.kind, 'conflict');
      assert.equal(err.status, 409);
      await rig.backend.archive(sessionId); // already archived: done
      assert.equal((await rig.backend.getSession(sessionId)).session_status, 'archived');
      assertFailure(await pollOutcome(rig, sessionId), 'terminated');
    } finally {
      await rig.close();
    }
  });

  for (const mode of MODES) {
    describe(`over ${mode}`, () => {
      let rig: Rig;
      // Sessions are made with the default bound: only the reads under test have the short one.
      let setup: ReturnType<typeof clientRig>;
      beforeEach(async () => {
        rig = await startRig({ mode, reuse: server, requestTimeoutMs: 500 });
        setup = clientRig(server, rig.proxy, { mode });
      });
      afterEach(async () => {
        await setup.backend.dispose();
        await rig.close();
      });

      it('4 consecutive 5xx are retried and the poll succeeds', async () => {
        const sessionId = await createPlanSession(setup);
        rig.proxy.addFault({ method: 'GET', path: POLL_READS, times: 4, fault: { kind: 'status', status: 503 } });
        assertApproved(await pollOutcome(rig, sessionId, { reviewer: setup.client }));
        assert.equal(rig.proxy.requests.filter((r) => r.status === 503).length, 4);
      });

      it('5 consecutive 5xx fail the poll as network_or_unknown', async () => {
        const sessionId = await createPlanSession(setup);
        rig.proxy.addFault({ method: 'GET', path: POLL_READS, times: 5, fault: { kind: 'status', status: 500 } });
        const failed = assertFailure(await pollOutcome(rig, sessionId, { reviewer: setup.client }), 'network_or_unknown');
        assert.match(failed.message, /5 attempts in a row/);
      });

      it('a reset connection is retried', async () => {
        const sessionId = await createPlanSession(setup);
        rig.proxy.addFault({ method: 'GET', path: POLL_READS, times: 2, fault: { kind: 'reset' } });
        assertApproved(await pollOutcome(rig, sessionId, { reviewer: setup.client }));
        assert.equal(rig.proxy.requests.filter((r) => r.fault === 'reset').length, 2);
      });

      it('a response slower than the request timeout is abandoned and retried', async () => {
        const sessionId = await createPlanSession(setup);
        rig.proxy.addFault({ method: 'GET', path: '/events', times: 1, fault: { kind: 'delay', ms: 1_500 } });
        assertApproved(await pollOutcome(rig, sessionId, { reviewer: setup.client }));
        const delayed = rig.proxy.requests.find((r) => r.fault === 'delay');
        assert.equal(delayed?.status, 0, 'the client gave up before the proxy answered');
      });

      it('malformed JSON fails the poll at once, saying so', async () => {
        const sessionId = await createPlanSession(setup);
        rig.proxy.addFault({ method: 'GET', path: '/events', fault: { kind: 'malformed_json' } });
        const failed = assertFailure(await pollOutcome(rig, sessionId, { reviewer: setup.client }), 'network_or_unknown');
        assert.match(failed.message, /malformed JSON/);
      });

      it('a page holding garbage events still gives the approval', async () => {
        const sessionId = await createPlanSession(setup);
        rig.proxy.addFault({ method: 'GET', path: '/events', times: Infinity, fault: { kind: 'garbage_events' } });
        assertApproved(await pollOutcome(rig, sessionId, { reviewer: setup.client }));
        // Every HTTP page was garbled (the stream, once live, serves the rest itself).
        const reads = rig.proxy.requests.filter((r) => r.path.endsWith('/events') && r.method === 'GET');
        assert.ok(reads.length >= 1 && reads.every((r) => r.fault === 'garbage_events'));
      });
    });
  }

  it('pages across several pages, capped per read, with the same events as one big page', async () => {
    const rig = await startRig({ mode: 'polling', reuse: server });
    try {
      const sessionId = await createPlanSession(rig);
      assertApproved(await pollOutcome(rig, sessionId));
      const whole = await rig.client.readEventsPages(sessionId, null, { limit: 1000 });
      assert.ok(whole.events.length >= 6, `events: ${whole.events.length}`);
      const paged = await rig.client.readEventsPages(sessionId, null, { limit: 2 });
      assert.deepEqual(paged.events, whole.events);
      assert.ok(paged.pages >= 4, `pages: ${paged.pages}`);
      assert.equal(paged.lastId, whole.lastId);
      // A cap of 2 pages stops early and the next read continues exactly there.
      const first = await rig.client.readEventsPages(sessionId, null, { limit: 2, maxPages: 2 });
      assert.equal(first.hasMore, true);
      const rest = await rig.client.readEventsPages(sessionId, first.lastId, { limit: 2 });
      assert.deepEqual([...first.events, ...rest.events], whole.events);
      assert.ok(
        whole.events.some((e) => (e as { type?: unknown }).type === 'control_response'),
        'the control_response in the log is read (its request id closes the prompt in other windows)',
      );
    } finally {
      await rig.close();
    }
  });
});

describe('restarts', function () {
  this.timeout(60_000);

  for (const mode of MODES) {
    it(`a client restarted mid-session resumes from its saved cursor (${mode})`, async () => {
      const rig = await startRig({ mode, server: { scenario: scenario('slow') } });
      try {
        const sessionId = await createPlanSession(rig);
        const stop = new AbortController();
        let saved: string | null = null;
        const firstRun = await pollForApprovedPlan({
          sessionId,
          transport: rig.backend.transport,
          pollIntervalMs: pollInterval(mode),
          timeoutMs: 20_000,
          signal: stop.signal,
          onPoll: ({ batch, cursor }) => {
            if (batch.size === 0) return;
            saved = cursor;
            stop.abort(); // the window closes right after saving
          },
        }).catch((e: unknown) => e);
        assert.ok(firstRun instanceof UltraplanPollError && firstRun.reason === 'stopped');
        assert.ok(saved !== null, 'a cursor was saved');
        await rig.backend.dispose();
        await waitFor(() => rig.proxy.openStreams === 0, 'the old client to leave no stream open');

        const restarted = clientRig(rig.server, rig.proxy, { mode });
        rig.proxy.resetLog();
        const seen: string[] = [];
        const reviewer = scriptedReviewer(restarted.client, sessionId, [{ on: 'plan_ready', decide: (plan) => allow(plan) }]);
        const plan = await pollForApprovedPlan({
          sessionId,
          transport: recordReads(restarted.backend.transport, (events) => seen.push(...events.map((e) => (e as { uuid: string }).uuid))),
          pollIntervalMs: pollInterval(mode),
          timeoutMs: 20_000,
          initialCursor: saved,
          ...watchPhases(reviewer.onPhase, { scanner: new ExitPlanModeScanner() }),
        });
        await reviewer.settled();
        await restarted.backend.dispose();
        assert.match(plan.plan, /Do the slow thing/);
        const firstRead = rig.proxy.requests.find((r) => r.path.endsWith('/events'));
        assert.equal(new URLSearchParams(firstRead?.query).get('cursor'), saved);
        // Sequence numbers count the session's events from 1: the first `saved` were read before.
        const alreadyRead = new Set((await rawEvents(rig.client, sessionId)).slice(0, Number(saved)).map((e) => e.uuid));
        assert.ok(seen.length > 0 && seen.every((uuid) => !alreadyRead.has(uuid)), 'only events after the cursor');
        assert.equal(new Set(seen).size, seen.length, 'no duplicates');
      } finally {
        await rig.close();
      }
    });

    it(`a server restarted mid-session loses nothing (${mode})`, async () => {
      const dataDir = tempDir();
      const first = await startServer({ scenario: scenario('slow'), dataDir });
      const rig = await startRig({ mode, reuse: first });
      let second: ServerProcess | undefined;
      try {
        const sessionId = await createPlanSession(rig);
        let restarting: Promise<void> | undefined;
        let before: Array<Record<string, unknown>> = [];
        // The decision waits for the restart, so the poll is still following when the server goes away
        // (a loaded machine can otherwise read the whole plan in the first batch and finish first).
        const reviewer = scriptedReviewer(rig.client, sessionId, [
          { on: 'plan_ready', decide: (plan) => allow(plan), after: async () => restarting },
        ]);
        const plan = await pollForApprovedPlan({
          sessionId,
          transport: rig.backend.transport,
          pollIntervalMs: pollInterval(mode),
          timeoutMs: 30_000,
          // The restart takes a moment; the poll must ride it out as transient failures.
          maxConsecutiveFailures: 100,
          ...watchPhases(reviewer.onPhase, {
            also: ({ batch }) => {
              if (batch.size === 0) return;
              restarting ??= (async () => {
                before = await rawEvents(rig.client, sessionId);
                assert.equal(await first.stop(), 0, 'clean shutdown');
                // The server stays gone until the poll has met it so (else a quick restart can fall
                // between two polls, and nothing would show the poll riding out the gap).
                await waitFor(() => rig.proxy.requests.some((r) => r.status === 502), {
                  message: 'a poll to reach the stopped server',
                  timeoutMs: 20_000,
                  intervalMs: 20,
                });
                second = await startServer({ scenario: scenario('slow'), dataDir, token: first.token });
                rig.proxy.setTarget(second.url);
              })();
            },
          }),
        });
        await restarting;
        await reviewer.settled();
        assert.deepEqual(reviewer.failures, []);
        assert.match(plan.plan, /Do the slow thing/);
        const after = await rawEvents(rig.client, sessionId);
        assert.ok(before.length > 0);
        assert.deepEqual(after.slice(0, before.length), before, 'every event from before the restart, unchanged');
        assert.ok(
          rig.proxy.requests.some((r) => r.status === 502),
          'the poll did see the server gone',
        );
      } finally {
        await rig.close();
        await second?.stop();
        await first.stop();
      }
    });
  }
});

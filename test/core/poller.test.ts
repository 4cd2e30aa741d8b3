import assert from 'node:assert/strict';
import {
  followUntilResult,
  pollForApprovedPlan,
  systemClock,
  type PollClock,
  type PollOptions,
  type PollPhase,
  type PollRetry,
} from '../../src/core/poller';
import { ExitPlanModeScanner } from '../../src/core/scanner';
import { SessionsError, UltraplanPollError, type PollFailureReason } from '../../src/core/errors';
import type { EventRead, SessionTransport } from '../../src/core/transport';
import { approve, assistantText, exitPlan, reject, result, teleport, toolResult, toolUse, userText } from '../support/sessionEvents';
import { watchPhases, type PollPhaseDetail } from '../support/pollPhases';

/** A time that only moves when the poller sleeps. */
class FakeClock implements PollClock {
  t = 1_000_000;
  sleeps: number[] = [];
  now(): number {
    return this.t;
  }
  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.t += ms;
    await Promise.resolve();
  }
}

/** The session at one poll: its status and the events new since the last, or a failure. */
type Poll = { status?: string; events?: unknown[] } | { error: unknown };

/**
 * A session transport answering a script, one entry per poll: the world moves to the next entry
 * when the poller waits (its clock moves, or `advance` is called). Within a poll the entry's
 * events are delivered once, whatever the order and number of reads; a failing entry fails the
 * poll's first request. Past the end of the script: running, nothing new. Events get ids like a
 * real store, so cursors can be checked.
 */
class ScriptedTransport implements SessionTransport {
  private step = 0;
  private nextId = 0;
  private delivered = false;
  private touched = -1;
  private at: number | undefined;
  readonly cursors: Array<string | null> = [];
  getStatusCalls = 0;
  /** Every request, status and events. */
  requests = 0;
  /** Polls that made a request. */
  polls = 0;
  constructor(
    private readonly script: Poll[],
    private readonly clock?: FakeClock,
  ) {}

  advance(): void {
    this.step++;
    this.delivered = false;
  }

  private current(): Poll {
    if (this.clock) {
      if (this.at !== undefined && this.clock.t !== this.at) this.advance();
      this.at = this.clock.t;
    }
    this.requests++;
    if (this.touched !== this.step) {
      this.touched = this.step;
      this.polls++;
      const poll = this.script[this.step] ?? { status: 'running' };
      if ('error' in poll) throw poll.error;
    }
    return this.script[this.step] ?? { status: 'running' };
  }

  async getStatus(): Promise<string> {
    this.getStatusCalls++;
    const poll = this.current();
    return 'error' in poll ? 'running' : (poll.status ?? 'running');
  }

  async readEvents(_sessionId: string, afterId: string | null): Promise<EventRead> {
    this.cursors.push(afterId);
    const poll = this.current();
    const events = !('error' in poll) && !this.delivered ? (poll.events ?? []) : [];
    this.delivered = true;
    const stored = events.map((e) => ({ ...(e as object), id: `e_${String(++this.nextId).padStart(6, '0')}` }));
    return { events: stored, lastId: stored.length > 0 ? stored[stored.length - 1]!.id : afterId };
  }
}

function run(script: Poll[], extra: Partial<PollOptions> = {}) {
  const clock = new FakeClock();
  const transport = new ScriptedTransport(script, clock);
  const phases: Array<[PollPhase, PollPhaseDetail]> = [];
  const { scanner, ...rest } = extra;
  const promise = pollForApprovedPlan({
    sessionId: 'sess-1',
    transport,
    clock,
    ...watchPhases((phase, detail) => phases.push([phase, detail]), scanner ? { scanner } : {}),
    ...rest,
  });
  return { clock, transport, phases, promise };
}

async function rejectsWith(promise: Promise<unknown>, reason: PollFailureReason, check?: (e: UltraplanPollError) => void) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof UltraplanPollError, `expected UltraplanPollError, got ${String(err)}`);
    assert.equal(err.reason, reason, err.message);
    assert.ok(err.message.length > 20, 'a message a person can read');
    check?.(err);
    return true;
  });
}

const transient = (message = 'HTTP 503', retryAfterMs?: number) => new SessionsError('transient', message, 503, retryAfterMs);

describe('pollForApprovedPlan (docs/protocol.md section 5)', () => {
  describe('phases and outcomes', () => {
    it('running, then plan_ready, then approved on the remote', async () => {
      const { promise, phases, transport, clock } = run([
        { status: 'running', events: [assistantText('Exploring the repo')] },
        { status: 'requires_action', events: [exitPlan('A', '# Plan A')] },
        { status: 'requires_action', events: [] },
        { status: 'running', events: [approve('A', '# Plan A')] },
      ]);
      const outcome = await promise;
      assert.equal(outcome.executionTarget, 'remote');
      assert.equal(outcome.plan, '# Plan A');
      assert.equal(outcome.rejectCount, 0);
      assert.equal(outcome.toolUseId, 'A');
      assert.equal(outcome.cursor, 'e_000003');
      assert.deepEqual(
        phases.map(([p]) => p),
        ['running', 'plan_ready'],
      );
      assert.deepEqual(phases[1]![1].pendingPlan, { toolUseId: 'A', plan: '# Plan A' });
      // Events first while they flow; an empty read asks the status (quiet: read again after it);
      // after a quiet poll the status comes first.
      assert.deepEqual(transport.cursors, [null, 'e_000001', 'e_000002', 'e_000002', 'e_000002']);
      assert.equal(transport.getStatusCalls, 2, 'only the polls that could come back empty read the status');
      assert.deepEqual(clock.sleeps, [3000, 3000, 3000], 'the default interval');
    });

    it('a teleport ends with executionTarget local', async () => {
      const { promise } = run([{ status: 'running', events: [exitPlan('A', 'p'), teleport('A', 'run here')] }]);
      const outcome = await promise;
      assert.equal(outcome.executionTarget, 'local');
      assert.equal(outcome.plan, 'run here');
    });

    it('needs_input only when idle AND the poll brought nothing new', async () => {
      const { promise, phases } = run([
        // Idle while events still flow: a pause between tool turns, not a question.
        { status: 'idle', events: [assistantText('Should I keep the v1 API?'), result('success')] },
        { status: 'idle', events: [] },
        { status: 'running', events: [userText('Keep it.')] },
        { status: 'running', events: [exitPlan('A', 'p'), approve('A', 'p')] },
      ]);
      await promise;
      assert.deepEqual(
        phases.map(([p]) => p),
        ['running', 'needs_input', 'running'],
      );
      assert.equal(phases[1]![1].question, 'Should I keep the v1 API?');
      assert.equal(phases[1]![1].status, 'idle');
    });

    it('requires_action with nothing new is needs_input too', async () => {
      const { promise, phases } = run([{ status: 'requires_action', events: [] }, { events: [exitPlan('A'), approve('A', 'p')] }]);
      await promise;
      assert.equal(phases[0]![0], 'needs_input');
    });

    it('a rejection followed by a new plan in one poll reports the new plan', async () => {
      const { promise, phases } = run([
        { status: 'requires_action', events: [exitPlan('A', 'v1')] },
        { status: 'requires_action', events: [reject('A', 'add tests'), exitPlan('B', 'v2')] },
        { status: 'running', events: [approve('B', 'v2')] },
      ]);
      const outcome = await promise;
      assert.deepEqual(
        phases.map(([p, d]) => [p, d.pendingPlan?.toolUseId, d.rejectCount]),
        [
          ['plan_ready', 'A', 0],
          ['plan_ready', 'B', 1],
        ],
      );
      assert.equal(outcome.rejectCount, 1);
    });

    it('onPoll hears every poll: its parsed batch, the status only when the batch could be empty, the cursor', async () => {
      const seen: Array<[number, string | undefined, string | null]> = [];
      const { promise } = run(
        [
          { events: [assistantText('a'), exitPlan('A')] },
          { events: [] },
          { events: [reject('A', 'no')] },
          { events: [exitPlan('B'), approve('B', 'p')] },
        ],
        { onPoll: ({ batch, status, cursor }) => seen.push([batch.size, status, cursor]) },
      );
      await promise;
      assert.deepEqual(seen, [
        [2, undefined, 'e_000002'],
        [0, 'running', 'e_000002'],
        [1, 'running', 'e_000003'],
        [2, undefined, 'e_000005'],
      ]);
    });

    it('reads no status while events flow, and reads it once the session goes quiet', async () => {
      const busy = Array.from({ length: 5 }, (_, i) => ({ status: 'running', events: [assistantText(`step ${i}`)] }));
      const { promise, transport, phases } = run([...busy, { status: 'idle', events: [] }, { events: [exitPlan('A'), approve('A', 'p')] }]);
      await promise;
      assert.equal(transport.getStatusCalls, 2, 'the quiet poll, then the one after it');
      assert.deepEqual(
        phases.map(([p]) => p),
        ['running', 'needs_input'],
      );
    });

    it("waits with the transport's waitForActivity when it has one, not the clock", async () => {
      const clock = new FakeClock();
      const transport = new ScriptedTransport([{ events: [exitPlan('A')] }, { events: [] }, { events: [approve('A', 'p')] }]);
      const waits: number[] = [];
      const streaming: SessionTransport = {
        getStatus: () => transport.getStatus(),
        readEvents: (id, after) => transport.readEvents(id, after),
        waitForActivity: async (_id, timeoutMs) => {
          waits.push(timeoutMs);
          transport.advance();
        },
      };
      await pollForApprovedPlan({ sessionId: 's', transport: streaming, clock, pollIntervalMs: 5000 });
      assert.deepEqual(waits, [5000, 5000]);
      assert.deepEqual(clock.sleeps, []);
      // Woken early each time: the events are read first, and the status only for the empty batch.
      assert.equal(transport.getStatusCalls, 1);
    });
  });

  describe('failures', () => {
    it('terminated: the session ended with an error, carrying the reject count', async () => {
      const { promise } = run([{ events: [exitPlan('A'), reject('A', 'no'), result('error_max_turns')] }]);
      await rejectsWith(promise, 'terminated', (e) => {
        assert.equal(e.rejectCount, 1);
        assert.match(e.message, /error_max_turns/);
      });
    });

    it("terminated: the message carries the agent's own explanation from the result's errors", async () => {
      const crash = { ...result('error_during_execution'), errors: ['The agent exited with code 1. stderr: login required'] };
      await rejectsWith(run([{ events: [crash] }]).promise, 'terminated', (e) => {
        assert.match(e.message, /error_during_execution/);
        assert.match(e.message, /The agent said: The agent exited with code 1\. stderr: login required/);
      });
    });

    it('terminated: without errors the result text is the explanation', async () => {
      await rejectsWith(run([{ events: [result('error_max_turns')] }]).promise, 'terminated', (e) =>
        assert.match(e.message, /The agent said: ended: error_max_turns/),
      );
    });

    it('terminated: the session was archived under us', async () => {
      await rejectsWith(run([{ status: 'archived', events: [] }]).promise, 'terminated', (e) => assert.match(e.message, /archived/));
    });

    it('timeout_no_plan when no plan ever arrived', async () => {
      const { promise, clock } = run([], { timeoutMs: 10_000 });
      const start = clock.now();
      await rejectsWith(promise, 'timeout_no_plan');
      assert.equal(clock.now() - start, 10_000);
      assert.deepEqual(clock.sleeps, [3000, 3000, 3000, 1000], 'the last wait stops at the deadline');
    });

    it('timeout_pending when a plan waited and was never decided', async () => {
      await rejectsWith(run([{ events: [exitPlan('A', 'p')] }], { timeoutMs: 60_000 }).promise, 'timeout_pending', (e) =>
        assert.match(e.message, /1 minute/),
      );
    });

    it('timeout_pending also when the pending plan was later rejected', async () => {
      await rejectsWith(
        run([{ events: [exitPlan('A')] }, { events: [reject('A', 'no')] }], { timeoutMs: 20_000 }).promise,
        'timeout_pending',
        (e) => assert.equal(e.rejectCount, 1),
      );
    });

    it('extract_marker_missing when an approval has no marker', async () => {
      await rejectsWith(run([{ events: [exitPlan('A'), toolResult('A', 'approved, somehow')] }]).promise, 'extract_marker_missing');
    });

    it('unauthorized at once on a 401', async () => {
      const { promise, transport } = run([{ error: new SessionsError('unauthorized', 'HTTP 401', 401) }]);
      await rejectsWith(promise, 'unauthorized', (e) => assert.ok(e.cause instanceof SessionsError));
      assert.equal(transport.requests, 1);
    });

    it('not_found at once on a 404', async () => {
      const { promise, transport } = run([{ error: new SessionsError('not_found', 'HTTP 404', 404) }]);
      await rejectsWith(promise, 'not_found', (e) => assert.match(e.message, /sess-1/));
      assert.equal(transport.requests, 1);
    });

    for (const [label, error] of [
      ['a bad response', new SessionsError('bad_response', 'not JSON', 200)],
      ['a refused request', new SessionsError('bad_request', 'HTTP 400', 400)],
      ['an unclassified error', new Error('boom')],
    ] as const) {
      it(`network_or_unknown at once on ${label} (not transient)`, async () => {
        const { promise, transport } = run([{ error }, { events: [exitPlan('A'), approve('A', 'p')] }]);
        await rejectsWith(promise, 'network_or_unknown', (e) => assert.match(e.message, new RegExp(error.message)));
        assert.equal(transport.requests, 1);
      });
    }

    it('4 transient failures in a row, then success: the poll goes on', async () => {
      const { promise, transport } = run([
        { error: transient() },
        { error: new TypeError('fetch failed') },
        { error: transient() },
        { error: transient() },
        { events: [exitPlan('A'), approve('A', 'p')] },
      ]);
      assert.equal((await promise).plan, 'p');
      assert.equal(transport.polls, 5);
    });

    it('each failed read that will be tried again is told (count, wait, cause) before the wait', async () => {
      const retries: PollRetry[] = [];
      const { promise } = run(
        [
          { error: transient('HTTP 429', 20_000) },
          { error: new TypeError('fetch failed') },
          { events: [exitPlan('A'), approve('A', 'p')] },
        ],
        { onRetry: (retry) => retries.push(retry) },
      );
      await promise;
      assert.deepEqual(retries, [
        { failures: 1, maxFailures: 5, retryInMs: 20_000, message: 'HTTP 429' },
        { failures: 2, maxFailures: 5, retryInMs: 3000, message: 'fetch failed' },
      ]);
    });

    it('the 5th transient failure in a row fails with network_or_unknown', async () => {
      const { promise, transport } = run([
        { error: transient() },
        { error: transient() },
        { error: new TypeError('fetch failed') },
        { error: transient() },
        { error: transient('HTTP 502') },
        { events: [exitPlan('A'), approve('A', 'p')] },
      ]);
      await rejectsWith(promise, 'network_or_unknown', (e) => assert.match(e.message, /5 attempts in a row.*HTTP 502/));
      assert.equal(transport.polls, 5);
    });

    it('a success resets the count of failures in a row', async () => {
      const four = Array.from({ length: 4 }, () => ({ error: transient() }));
      const { promise } = run([...four, { events: [] }, ...four, { events: [exitPlan('A'), approve('A', 'p')] }]);
      assert.equal((await promise).plan, 'p');
    });

    it('maxConsecutiveFailures is configurable', async () => {
      const { promise, transport } = run([{ error: transient() }, { error: transient() }], { maxConsecutiveFailures: 2 });
      await rejectsWith(promise, 'network_or_unknown');
      assert.equal(transport.polls, 2);
    });

    it('honours Retry-After from a 429/503, never waiting less than the interval', async () => {
      const { promise, clock } = run([
        { error: transient('HTTP 429', 20_000) },
        { error: transient('HTTP 503', 500) },
        { events: [exitPlan('A'), approve('A', 'p')] },
      ]);
      await promise;
      assert.deepEqual(clock.sleeps, [20_000, 3000]);
    });
  });

  describe('stop', () => {
    it('an abort from the caller stops the poll with reason stopped', async () => {
      const controller = new AbortController();
      const { promise } = run([{ events: [assistantText('working')] }], {
        signal: controller.signal,
        ...watchPhases(() => controller.abort()),
      });
      await rejectsWith(promise, 'stopped');
    });

    it('an already aborted signal stops before any request', async () => {
      const controller = new AbortController();
      controller.abort();
      const { promise, transport } = run([], { signal: controller.signal });
      await rejectsWith(promise, 'stopped');
      assert.equal(transport.requests, 0);
    });

    it('an abort during a real sleep ends the wait at once', async () => {
      const controller = new AbortController();
      const started = Date.now();
      const promise = pollForApprovedPlan({
        sessionId: 's',
        transport: new ScriptedTransport([]),
        clock: systemClock,
        pollIntervalMs: 60_000,
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(), 20);
      await rejectsWith(promise, 'stopped');
      assert.ok(Date.now() - started < 10_000, 'did not wait for the interval');
    });

    it('an abort while a request is in flight is stopped, not a network failure', async () => {
      const controller = new AbortController();
      const transport: SessionTransport = {
        getStatus: async (_id, signal) => {
          controller.abort();
          throw signal?.reason ?? new Error('aborted');
        },
        readEvents: async () => ({ events: [], lastId: null }),
      };
      await rejectsWith(pollForApprovedPlan({ sessionId: 's', transport, clock: new FakeClock(), signal: controller.signal }), 'stopped');
    });
  });

  describe('resume', () => {
    it('starts after initialCursor with a pre-fed scanner', async () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([exitPlan('A', 'v1'), reject('A', 'no')]);
      const { promise, transport } = run([{ events: [exitPlan('B', 'v2'), approve('B', 'v2')] }], { scanner, initialCursor: 'e_000100' });
      const outcome = await promise;
      assert.deepEqual(transport.cursors, ['e_000100']);
      assert.equal(outcome.rejectCount, 1);
      assert.equal(outcome.scanner, scanner);
    });

    it('a scanner that already saw the approval returns without reading', async () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([exitPlan('A'), approve('A', 'p')]);
      const { promise, transport } = run([], { scanner, initialCursor: 'e_000009' });
      assert.equal((await promise).plan, 'p');
      assert.equal(transport.requests, 0);
    });

    it('a scanner that already saw the termination fails without reading', async () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([result('error_during_execution')]);
      await rejectsWith(run([], { scanner }).promise, 'terminated');
    });
  });
});

describe('followUntilResult', () => {
  it('follows an approved session until the result that ends the execution', async () => {
    const first = run([{ events: [exitPlan('A'), approve('A', 'p')] }]);
    const approved = await first.promise;
    const clock = new FakeClock();
    const transport = new ScriptedTransport(
      [
        { status: 'running', events: [toolUse('t1', 'Edit'), toolResult('t1', 'ok')] },
        { status: 'running', events: [] },
        { status: 'idle', events: [assistantText('Done: opened a PR.'), result('success')] },
      ],
      clock,
    );
    const outcome = await followUntilResult({
      sessionId: 'sess-1',
      transport,
      clock,
      scanner: approved.scanner,
      initialCursor: approved.cursor,
    });
    assert.deepEqual(outcome, { subtype: 'success', isError: false, result: 'ended: success', cursor: 'e_000004' });
    assert.deepEqual(transport.cursors, ['e_000002', 'e_000002', 'e_000002']);
  });

  it('returns at once when the approval batch already held the result', async () => {
    const approved = await run([{ events: [exitPlan('A'), approve('A', 'p'), result('error_during_execution')] }]).promise;
    const transport = new ScriptedTransport([]);
    const outcome = await followUntilResult({ sessionId: 's', transport, clock: new FakeClock(), scanner: approved.scanner });
    assert.equal(outcome.subtype, 'error_during_execution');
    assert.equal(outcome.isError, true);
    assert.equal(transport.requests, 0);
  });

  it('gives up with timeout_result', async () => {
    const approved = await run([{ events: [exitPlan('A'), approve('A', 'p')] }]).promise;
    await rejectsWith(
      followUntilResult({
        sessionId: 's',
        transport: new ScriptedTransport([]),
        clock: new FakeClock(),
        scanner: approved.scanner,
        timeoutMs: 9000,
      }),
      'timeout_result',
    );
  });

  it('refuses a scanner that has not seen an approval', async () => {
    await assert.rejects(
      followUntilResult({
        sessionId: 's',
        transport: new ScriptedTransport([]),
        clock: new FakeClock(),
        scanner: new ExitPlanModeScanner(),
      }),
      /needs the scanner that saw the approval/,
    );
  });
});

import { strict as assert } from 'node:assert';
import { EventEmitter } from 'node:events';
import { waitFor } from '../support/wait';

describe('waitFor (test/support/wait.ts)', () => {
  it('returns the first value that is not undefined, null or false, counting 0 and the empty string as values', async () => {
    const given: unknown[] = [undefined, null, false, 0];
    assert.equal(await waitFor(() => given.shift() as number | undefined), 0);
    const texts: unknown[] = [false, ''];
    assert.equal(await waitFor(() => texts.shift() as string | false), '');
  });

  it('awaits an async check', async () => {
    let calls = 0;
    assert.equal(await waitFor(async () => (++calls === 3 ? 'ready' : undefined), 'the third call'), 'ready');
    assert.equal(calls, 3);
  });

  it('on timeout names what was awaited, the last value seen and the detail', async () => {
    const ready = { now: false };
    await assert.rejects(
      waitFor(() => ready.now, { message: 'the flag', timeoutMs: 60, detail: () => 'log: three lines' }),
      (error: Error) => {
        assert.match(error.message, /^timed out after 60 ms waiting for the flag; last seen: false\nlog: three lines$/);
        return true;
      },
    );
    let count = 0;
    await assert.rejects(
      waitFor(() => ({ state: 'closed', polls: ++count }), { message: 'an open stream', timeoutMs: 60, until: (s) => s.state === 'open' }),
      /waiting for an open stream; last seen: \{ state: 'closed', polls: \d+ \}$/,
    );
    assert.equal((await waitFor(() => ++count, { until: (n) => n % 3 === 0 })) % 3, 0);
  });

  it('names a check given no message by its source text', async () => {
    const ready = { now: false };
    await assert.rejects(
      waitFor(() => ready.now, { timeoutMs: 20 }),
      /waiting for \(\) ?=> ?ready\.now; last seen: false/,
    );
  });

  it('ends at once on an error from the check, unless told to retry, then quotes the last error', async () => {
    let calls = 0;
    const failing = (): boolean => {
      calls++;
      throw new Error('connection refused');
    };
    await assert.rejects(waitFor(failing, { timeoutMs: 5_000 }), /^Error: connection refused$/);
    assert.equal(calls, 1);
    await assert.rejects(
      waitFor(failing, { message: 'the server', timeoutMs: 50, retryErrors: true }),
      /waiting for the server; last seen: the error Error: connection refused/,
    );
    assert.ok(calls > 2, `retried ${calls - 1} times`);
    let tries = 0;
    assert.equal(
      await waitFor(
        () => {
          if (++tries < 3) throw new Error('not yet');
          return 'up';
        },
        { retryErrors: true },
      ),
      'up',
    );
  });

  it('checks again when woken, without waiting out the pause, and unsubscribes when done', async () => {
    const changes = new EventEmitter();
    const state: { value?: string } = {};
    let settled = false;
    const wait = waitFor(() => state.value, {
      message: 'the value',
      timeoutMs: 120_000,
      wakeOn: (wake) => {
        changes.on('change', wake);
        return () => changes.off('change', wake);
      },
    }).then((value) => {
      settled = true;
      return value;
    });
    // 200 ms in, the checks (at 0, 10, 30, 70 and 150 ms) are pausing until 310 ms: only the wake
    // can end the wait before the next turn of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 200));
    state.value = 'set';
    changes.emit('change');
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, true, 'the wake ended the wait');
    assert.equal(await wait, 'set');
    assert.equal(changes.listenerCount('change'), 0);
  });
});

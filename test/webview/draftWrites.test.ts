// The bounded draft write-out: the first change at once, then at most one write per interval per
// draft, the last change always written; flush writes what waits.
import * as assert from 'node:assert/strict';
import { DraftWrites } from '../../src/webview/draftWrites';

/** A clock and timers that run only when the test moves the clock. */
function fakeTimers() {
  let now = 0;
  let next = 0;
  const waiting = new Map<number, { at: number; run: () => void }>();
  return {
    timers: {
      now: () => now,
      setTimeout: (run: () => void, ms: number) => {
        waiting.set(++next, { at: now + ms, run });
        return next;
      },
      clearTimeout: (handle: unknown) => void waiting.delete(handle as number),
    },
    advance(ms: number) {
      const until = now + ms;
      for (;;) {
        const due = [...waiting].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        waiting.delete(due[0]);
        now = due[1].at;
        due[1].run();
      }
      now = until;
    },
  };
}

describe('draft writes', () => {
  it('writes the first keystroke at once, one write per interval while typing, and always the last', () => {
    const clock = fakeTimers();
    const written: Array<[string, number]> = [];
    const writes = new DraftWrites<string>((key) => written.push([key, clock.timers.now()]), 200, clock.timers);
    writes.changed('feedback');
    assert.deepEqual(written, [['feedback', 0]]);
    // Typing every 20 ms for a second.
    for (let t = 20; t <= 1_000; t += 20) {
      clock.advance(20);
      writes.changed('feedback');
    }
    clock.advance(1_000);
    const times = written.map(([, at]) => at);
    for (let i = 1; i < times.length; i++) assert.ok(times[i]! - times[i - 1]! >= 200, `writes ${times[i - 1]} and ${times[i]} too close`);
    assert.ok(written.length <= 7, `at most one write per 200 ms: ${written.length}`);
    assert.ok(times.at(-1)! >= 1_000, 'the last keystroke (at 1,000 ms) was written after it');
    assert.equal(writes.waiting, 0);
  });

  it('bounds each draft on its own, and flush writes what waits at once', () => {
    const clock = fakeTimers();
    const written: string[] = [];
    const writes = new DraftWrites<string>((key) => written.push(key), 200, clock.timers);
    writes.changed('notes');
    writes.changed('reply');
    assert.deepEqual(written, ['notes', 'reply'], 'another draft is not held back by the first');
    clock.advance(50);
    writes.changed('notes');
    writes.changed('reply');
    assert.equal(writes.waiting, 2);
    writes.flush();
    assert.deepEqual(written, ['notes', 'reply', 'notes', 'reply']);
    clock.advance(1_000);
    assert.equal(written.length, 4, 'nothing written twice');
  });
});

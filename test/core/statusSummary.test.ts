import assert from 'node:assert/strict';
import { formatElapsed, orderForStatus, summarizeStatus, type StatusEntry } from '../../src/core/statusSummary';

describe('status bar summary', () => {
  const e = (sessionId: string, phase: StatusEntry['phase'], changedAt: number): StatusEntry => ({ sessionId, phase, changedAt });

  it('shows the one session with its phase text', () => {
    assert.equal(summarizeStatus([e('a', 'planning', 1)])?.text, '$(sync~spin) Ultraplan: planning');
    assert.equal(summarizeStatus([e('a', 'needs_input', 1)])?.text, '$(question) Ultraplan: needs input');
    assert.equal(summarizeStatus([e('a', 'plan_ready', 1)])?.text, '$(checklist) Ultraplan: plan ready');
    assert.equal(summarizeStatus([]), undefined);
  });

  it('puts the session needing attention first, with a count', () => {
    const s = summarizeStatus([e('a', 'planning', 5), e('b', 'plan_ready', 1), e('c', 'needs_input', 9)]);
    assert.equal(s?.primary.sessionId, 'b');
    assert.equal(s?.count, 3);
    assert.equal(s?.text, '$(checklist) Ultraplan: plan ready (+2)');
  });

  it('orders plan ready > needs input > failed > planning > executing > approved > teleported, newest first among equals', () => {
    const order = orderForStatus([
      e('teleported', 'teleported', 9),
      e('approved', 'approved', 9),
      e('exec', 'executing', 9),
      e('plan-old', 'planning', 1),
      e('plan-new', 'planning', 2),
      e('failed', 'failed', 9),
      e('q', 'needs_input', 9),
      e('ready', 'plan_ready', 0),
    ]).map((x) => x.sessionId);
    assert.deepEqual(order, ['ready', 'q', 'failed', 'plan-new', 'plan-old', 'exec', 'approved', 'teleported']);
  });

  it('an open permission request says "needs permission" and ranks with plan ready, before a question, newest first', () => {
    assert.equal(summarizeStatus([e('a', 'needs_permission', 1)])?.text, '$(shield) Ultraplan: needs permission');
    const order = orderForStatus([
      e('exec', 'executing', 9),
      e('q', 'needs_input', 9),
      e('ready', 'plan_ready', 1),
      e('perm', 'needs_permission', 2),
    ]).map((x) => x.sessionId);
    assert.deepEqual(order, ['perm', 'ready', 'q', 'exec']);
  });

  it('formats elapsed time', () => {
    assert.equal(formatElapsed(4_000), '4s');
    assert.equal(formatElapsed(245_000), '4m 05s');
    assert.equal(formatElapsed(3_720_000), '1h 02m');
    assert.equal(formatElapsed(-5), '0s');
  });
});

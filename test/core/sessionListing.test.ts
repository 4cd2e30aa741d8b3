import assert from 'node:assert/strict';
import type { SessionResource } from '../../src/core/protocol';
import { describeListedSession, displayTitle, formatAge } from '../../src/core/sessionListing';

function listed(over: Partial<SessionResource> = {}): SessionResource {
  return {
    type: 'session',
    id: 'cse_abc',
    title: 'ultraplan: add a changelog',
    session_status: 'requires_action',
    environment_id: null,
    created_at: '2026-11-30T10:00:00.000Z',
    updated_at: '2026-11-30T10:05:00.000Z',
    session_context: null,
    ...over,
  };
}

describe('session listing (Attach to Session… rows)', () => {
  it('titles drop the ultraplan: prefix, and an empty title falls back', () => {
    assert.equal(displayTitle('ultraplan: add a changelog', 'x'), 'add a changelog');
    assert.equal(displayTitle('UltraPlan:   tidy up', 'x'), 'tidy up');
    assert.equal(displayTitle('a title: with a colon', 'x'), 'a title: with a colon');
    assert.equal(displayTitle('ultraplan: ', 'session_1'), 'session_1');
    assert.equal(displayTitle('', 'session_1'), 'session_1');
  });

  it('ages in words, from the last change', () => {
    assert.equal(formatAge(59_999), 'just now');
    assert.equal(formatAge(-5_000), 'just now', 'a clock behind the server is not "in the future"');
    assert.equal(formatAge(Number.NaN), 'just now');
    assert.equal(formatAge(5 * 60_000), '5 min ago');
    assert.equal(formatAge(3 * 3_600_000 + 59_000), '3 h ago');
    assert.equal(formatAge(50 * 3_600_000), '2 days ago');
  });

  it('a row: title; status in words, age, followed; the id as detail', () => {
    const now = Date.parse('2026-11-30T10:15:00.000Z');
    assert.deepEqual(describeListedSession(listed(), now, undefined), {
      title: 'add a changelog',
      description: 'needs action · 10 min ago',
      detail: 'cse_abc',
    });
    assert.deepEqual(describeListedSession(listed({ session_status: 'archived', title: '' }), now, 'stopped'), {
      title: '(untitled)',
      description: 'stopped · 10 min ago · followed',
      detail: 'cse_abc',
    });
    assert.equal(describeListedSession(listed({ session_status: 'paused' }), now, undefined).description, 'paused · 10 min ago');
    assert.equal(describeListedSession(listed({ updated_at: '' }), now, undefined).description, 'needs action · 15 min ago');
  });

  it('a finished session is never "waiting for a message": idle alone says idle, and a followed one says its phase', () => {
    const now = Date.parse('2026-11-30T10:15:00.000Z');
    assert.equal(describeListedSession(listed({ session_status: 'idle' }), now, undefined).description, 'idle · 10 min ago');
    assert.equal(
      describeListedSession(listed({ session_status: 'idle' }), now, 'completed').description,
      'completed · 10 min ago · followed',
    );
  });
});

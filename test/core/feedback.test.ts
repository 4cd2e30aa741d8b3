import assert from 'node:assert/strict';
import { EMPTY_REJECT_FEEDBACK, formatRejectFeedback, quotePlanLines } from '../../src/core/feedback';

const PLAN = ['# Plan', '', '1. Delete the database', '2. Rebuild it', '', 'Done.'].join('\n');

describe('reject feedback formatting', () => {
  it('quotes the commented line above the comment', () => {
    const text = formatRejectFeedback(PLAN, 'Too risky.', [{ startLine: 3, endLine: 3, text: 'Back it up first' }]);
    assert.equal(text, 'Too risky.\n\nComments on specific plan lines:\n\nOn plan line 3:\n> 1. Delete the database\n\nBack it up first');
  });

  it('quotes a range, blank lines as ">", and orders comments by line', () => {
    const text = formatRejectFeedback(PLAN, '', [
      { startLine: 6, endLine: 6, text: 'say what is done' },
      { startLine: 3, endLine: 5, text: 'two steps are one' },
    ]);
    const first = text.indexOf('two steps are one');
    const second = text.indexOf('say what is done');
    assert.ok(first > 0 && second > first, text);
    assert.match(text, /On plan lines 3-5:\n> 1\. Delete the database\n> 2\. Rebuild it\n>\n\ntwo steps are one/);
    assert.ok(!text.startsWith('\n'));
  });

  it('clamps out-of-range lines instead of inventing text', () => {
    assert.equal(quotePlanLines(PLAN, 6, 99), '> Done.');
    assert.equal(quotePlanLines(PLAN, 50, 60), '');
    const text = formatRejectFeedback(PLAN, 'x', [{ startLine: 50, endLine: 50, text: 'gone' }]);
    assert.match(text, /On plan line 50:\ngone/);
  });

  it('drops blank comments and still says something when everything is empty', () => {
    assert.equal(formatRejectFeedback(PLAN, '  ', [{ startLine: 1, endLine: 1, text: '  ' }]), EMPTY_REJECT_FEEDBACK);
    assert.equal(formatRejectFeedback(PLAN, 'only text', []), 'only text');
  });

  it('handles CRLF plans', () => {
    assert.equal(quotePlanLines('a\r\nb\r\n', 2, 2), '> b');
  });
});

import * as assert from 'node:assert/strict';
import {
  REVIEWER_NOTES_HEADING,
  approvalWithNotesEvents,
  checkNotes,
  notesDeliveryFor,
  notesPrompt,
  planWithNotes,
} from '../../src/core/approvalNotes';
import { PANEL_LIMITS } from '../../src/core/panelMessages';

describe('approval notes', () => {
  const plan = '# Plan\n\n1. Flip the flag.\n\n';

  it('agents behind the session host get the notes as the next message; Claude Code on the web as an edit of the plan', () => {
    assert.equal(notesDeliveryFor('embedded'), 'next_message');
    assert.equal(notesDeliveryFor('server'), 'next_message');
    assert.equal(notesDeliveryFor('claude-web'), 'plan_edit');
  });

  it('next_message: the approval first (with the plan as shown), then the wrapped notes as a user message', () => {
    const events = approvalWithNotesEvents('next_message', 'req_1', plan, '  Keep the public API.  ');
    assert.deepEqual(events, [
      {
        type: 'control_response',
        response: { subtype: 'success', request_id: 'req_1', response: { behavior: 'allow', updatedInput: { plan } } },
      },
      {
        type: 'user',
        parent_tool_use_id: null,
        message: { role: 'user', content: notesPrompt('Keep the public API.') },
      },
    ]);
    assert.match(notesPrompt('Keep the public API.'), /^Notes from the reviewer on the approved plan .*:\n\nKeep the public API\.$/);
  });

  it('plan_edit: one edited approval whose plan is the plan plus a "## Reviewer notes" section', () => {
    const events = approvalWithNotesEvents('plan_edit', 'req_1', plan, 'Keep the public API.');
    assert.equal(events.length, 1);
    const response = (events[0] as unknown as { response: { response: { behavior: string; updatedInput: { plan: string } } } }).response
      .response;
    assert.equal(response.behavior, 'allow');
    assert.equal(response.updatedInput.plan, '# Plan\n\n1. Flip the flag.\n\n## Reviewer notes\n\nKeep the public API.\n');
    assert.equal(planWithNotes(plan, 'x').indexOf(REVIEWER_NOTES_HEADING), '# Plan\n\n1. Flip the flag.\n\n'.length);
  });

  it('checks the notes: blank or over the bound is refused with a reason; otherwise trimmed', () => {
    assert.deepEqual(checkNotes('  a note \n'), { ok: true, notes: 'a note' });
    const blank = checkNotes(' \n ');
    assert.ok(!blank.ok && /empty/.test(blank.message));
    assert.ok(checkNotes('n'.repeat(PANEL_LIMITS.notesChars)).ok);
    const long = checkNotes('n'.repeat(PANEL_LIMITS.notesChars + 1));
    assert.ok(!long.ok && /2001 characters; at most 2000/.test(long.message));
  });
});

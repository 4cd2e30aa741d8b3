import { strict as assert } from 'node:assert';
import { approvalEvent } from '../../../src/core/planApprovals';
import { controlResponseEvent } from '../../../src/core/protocol';
import { noticeOf, type NoticeContext } from '../../../src/service/notifications/sessionNotices';

const context: NoticeContext = {
  session: { id: 'session_1', title: 'Add a changelog' },
  link: 'https://plans.example.com/v1/code/sessions/cse_1',
  at: '2026-12-03T20:00:00.000Z',
  needed: ['2 approvals from platform-reviewers'],
  executing: false,
  answersPlan: false,
  decidedBy: null,
};
const planRequest = {
  type: 'control_request',
  request_id: 'req-1',
  request: { subtype: 'can_use_tool', tool_name: 'ExitPlanMode', tool_use_id: 'tu-1', input: { plan: '# Plan' } },
};

describe('session notices: which events a team hears of', () => {
  it('a plan request is plan_ready, naming who must approve, with the plan kept for --notify-include-plan', () => {
    const notice = noticeOf(planRequest, context);
    assert.equal(notice?.kind, 'plan_ready');
    assert.deepEqual(notice?.needed, ['2 approvals from platform-reviewers']);
    assert.equal(notice?.plan, '# Plan');
    const permission = { ...planRequest, request: { ...planRequest.request, tool_name: 'Bash' } };
    assert.equal(noticeOf(permission, context), null, 'a tool permission is no plan');
  });

  it('an approval short of the quorum is approval_needed, with who is still needed; the releasing one is not', () => {
    const state = {
      request_id: 'req-1',
      plan_hash: 'a'.repeat(64),
      approvers: [{ id: 'user-bob', name: 'bob' }],
      required: 2,
      group: 'platform-reviewers',
      released: false,
    };
    const notice = noticeOf(approvalEvent(state), context);
    assert.equal(notice?.kind, 'approval_needed');
    assert.deepEqual(notice?.needed, ['1 more from platform-reviewers']);
    assert.equal(notice?.decidedBy, 'bob');
    assert.equal(noticeOf(approvalEvent({ ...state, released: true }), context), null);
  });

  it('a decision on a plan is decided (by whom); an answer to a tool permission is not', () => {
    const allow = controlResponseEvent('req-1', { behavior: 'allow', updatedInput: { plan: '# Plan' } });
    const deny = controlResponseEvent('req-1', { behavior: 'deny', message: 'No.' });
    assert.deepEqual(
      [noticeOf(allow, { ...context, answersPlan: true, decidedBy: 'carol' }), noticeOf(deny, { ...context, answersPlan: true })].map(
        (n) => [n?.kind, n?.decision, n?.decidedBy],
      ),
      [
        ['decided', 'approved', 'carol'],
        ['decided', 'rejected', undefined],
      ],
    );
    assert.equal(noticeOf(allow, context), null);
  });

  it('a result is a question while planning, and the execution’s end after an approval', () => {
    const success = { type: 'result', subtype: 'success', is_error: false };
    const failure = { type: 'result', subtype: 'error_during_execution', is_error: true };
    assert.equal(noticeOf(success, context)?.kind, 'question_asked');
    assert.equal(noticeOf(success, { ...context, executing: true })?.kind, 'execution_finished');
    assert.equal(noticeOf(failure, { ...context, executing: true })?.kind, 'execution_failed');
    assert.equal(noticeOf({ type: 'assistant', message: { content: [] } }, context), null);
  });
});

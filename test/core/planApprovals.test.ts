import { strict as assert } from 'node:assert';
import {
  approvalEvent,
  approvalOf,
  approvalSummary,
  approvalsFor,
  approvalsNeeded,
  latestApprovalFor,
  type ApprovalState,
} from '../../src/core/planApprovals';
import { planHash } from '../../src/core/decision';

const HASH = planHash('# Plan\n');
const OTHER = planHash('# Plan, edited\n');

function state(approvers: string[], over: Partial<ApprovalState> = {}): ApprovalState {
  return {
    request_id: 'req-1',
    plan_hash: HASH,
    approvers: approvers.map((name) => ({ id: `user-${name}`, name })),
    required: 2,
    group: 'platform-reviewers',
    released: approvers.length >= (over.required ?? 2),
    ...over,
  };
}

describe('plan approvals (core)', () => {
  it('words the state as every client shows it', () => {
    assert.equal(approvalSummary(state(['alice'])), '1 of 2 approvals: alice; waiting for one more from platform-reviewers');
    assert.equal(approvalSummary(state([], { required: 3 })), '0 of 3 approvals; waiting for three more from platform-reviewers');
    assert.equal(approvalSummary(state(['alice'], { required: 3, group: null })), '1 of 3 approvals: alice; waiting for two more');
    assert.equal(approvalSummary(state(['alice', 'bob'])), '2 of 2 approvals: alice, bob; approved');
    assert.equal(
      approvalSummary(state([], { approvers: [{ id: 'user-x', name: null }], required: 1 })),
      '1 of 1 approval: user-x; approved',
    );
  });

  it('says who is still needed, for a notification', () => {
    assert.deepEqual(approvalsNeeded(state(['alice'])), ['1 more from platform-reviewers']);
    assert.deepEqual(approvalsNeeded(state([], { group: null })), ['2 more approvals']);
    assert.deepEqual(approvalsNeeded(state(['alice', 'bob'])), []);
  });

  it('reads the state from the log: per request and per exact text, the newest wins', () => {
    const log = [
      { type: 'assistant', message: { content: [] } },
      approvalEvent(state(['alice'])),
      approvalEvent(state(['carol'], { plan_hash: OTHER })),
      approvalEvent(state(['alice', 'bob'])),
      approvalEvent(state(['dave'], { request_id: 'req-2' })),
    ];
    assert.deepEqual(
      approvalsFor(log, 'req-1', HASH)?.approvers.map((a) => a.name),
      ['alice', 'bob'],
    );
    assert.deepEqual(
      approvalsFor(log, 'req-1', OTHER)?.approvers.map((a) => a.name),
      ['carol'],
    );
    assert.equal(approvalsFor(log, 'req-3', HASH), null);
    assert.deepEqual(
      latestApprovalFor(log, 'req-2')?.approvers.map((a) => a.name),
      ['dave'],
    );
  });

  it('ignores what is not a well-formed approval event', () => {
    assert.equal(approvalOf({ type: 'system', subtype: 'plan_approval', approval: { ...state(['a']), plan_hash: 'nope' } }), null);
    assert.equal(approvalOf({ type: 'system', subtype: 'init' }), null);
    assert.equal(approvalOf(null), null);
    assert.deepEqual(approvalOf({ ...approvalEvent(state(['a'])), id: 'e_000000000003' }), state(['a']));
  });
});

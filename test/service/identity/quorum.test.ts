import { strict as assert } from 'node:assert';
import { approvalRefusal, quorumIsTrivial, ruleFor, type QuorumPolicy } from '../../../src/service/identity/quorum';
import { QuorumOptionsError, quorumPolicyFrom } from '../../../src/service/identity/quorumOptions';

const owner = { sub: 'user-alice', name: 'alice', groups: ['platform-reviewers', 'web'] };

describe('quorum policy', () => {
  const policy: QuorumPolicy = {
    required: 2,
    groups: new Map([
      ['web', 2],
      ['platform-reviewers', 3],
      ['data', 5],
    ]),
    creatorCounts: false,
  };

  it('a session takes the strictest rule of its creator’s groups, else the server’s number', () => {
    assert.deepEqual(ruleFor(policy, owner), { required: 3, group: 'platform-reviewers' });
    assert.deepEqual(ruleFor(policy, { ...owner, groups: ['elsewhere'] }), { required: 2, group: null });
    assert.deepEqual(ruleFor(policy, null), { required: 2, group: null });
  });

  it('refuses, with the reason, an approver already counted, the creator when it does not count, one outside the group', () => {
    const rule = ruleFor(policy, owner);
    assert.match(
      approvalRefusal(policy, rule, owner, { sub: 'user-bob', groups: ['platform-reviewers'] }, ['user-bob']) ?? '',
      /already approved/,
    );
    assert.match(approvalRefusal(policy, rule, owner, { sub: 'user-alice', groups: ['platform-reviewers'] }, []) ?? '', /creator/);
    assert.match(approvalRefusal(policy, rule, owner, { sub: 'user-dave', groups: ['web'] }, []) ?? '', /members of platform-reviewers/);
    assert.equal(approvalRefusal(policy, rule, owner, { sub: 'user-bob', groups: ['platform-reviewers'] }, ['user-carol']), null);
    const counts = { ...policy, creatorCounts: true };
    assert.equal(approvalRefusal(counts, rule, owner, { sub: 'user-alice', groups: ['platform-reviewers'] }, []), null);
  });

  it('reads the flags; refuses a quorum without per-user tokens or PostgreSQL, and a group that is no review group', () => {
    const team = { reviewGroups: ['platform-reviewers'], postgres: true };
    assert.ok(quorumIsTrivial(quorumPolicyFrom({}, { reviewGroups: null, postgres: false })));
    const parsed = quorumPolicyFrom({ 'require-approvals': ['2', 'platform-reviewers=3'], 'creator-approval-counts': 'false' }, team);
    assert.equal(parsed.required, 2);
    assert.deepEqual([...parsed.groups], [['platform-reviewers', 3]]);
    assert.equal(parsed.creatorCounts, false);
    for (const [values, context, message] of [
      [{ 'require-approvals': ['0'] }, team, /N or GROUP=N with N from 1 to 20/],
      [{ 'require-approvals': ['two'] }, team, /N or GROUP=N/],
      [{ 'require-approvals': ['web=2'] }, team, /web is not one of --oidc-review-groups/],
      [{ 'creator-approval-counts': 'no' }, team, /true or false/],
      [{ 'require-approvals': ['2'] }, { reviewGroups: null, postgres: true }, /per-user tokens/],
      [{ 'require-approvals': ['2'] }, { reviewGroups: [], postgres: false }, /--store postgres/],
    ] as const) {
      assert.throws(
        () => quorumPolicyFrom(values, context),
        (err: unknown) => err instanceof QuorumOptionsError && message.test(err.message),
      );
    }
  });
});

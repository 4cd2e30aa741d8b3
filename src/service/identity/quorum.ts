// The approval policy of a team server (--require-approvals, --creator-approval-counts): how
// many distinct people must approve one exact plan text before the agent gets it, from which
// review group, and whether the session's creator counts. Decided here for the store that
// enforces it under the session's row lock (store/postgres/planApprovals.ts).
import type { SessionOwner } from './sessionOwner';

export interface QuorumPolicy {
  /** Approvals a plan needs where no review group sets its own (default 1). */
  required: number;
  /** Per review group: sessions whose creator is in that group need this many, from its members. */
  groups: ReadonlyMap<string, number>;
  /** Whether the session's creator's approval counts (default yes). */
  creatorCounts: boolean;
}

export const DEFAULT_QUORUM_POLICY: QuorumPolicy = { required: 1, groups: new Map(), creatorCounts: true };

/** One approval lets the agent go, from anyone who may decide: no quorum to keep. */
export function quorumIsTrivial(policy: QuorumPolicy): boolean {
  return policy.required === 1 && policy.groups.size === 0 && policy.creatorCounts;
}

/** What one session's plans need: a number, and the group whose members give them (null: anyone). */
export interface QuorumRule {
  required: number;
  group: string | null;
}

/**
 * The rule for a session created by `owner`: the strictest of the groups its creator was in
 * that set a number (the first configured on a tie), else the server's number from anyone.
 */
export function ruleFor(policy: QuorumPolicy, owner: SessionOwner | null): QuorumRule {
  let rule: QuorumRule = { required: policy.required, group: null };
  for (const [group, required] of policy.groups) {
    if (owner?.groups.includes(group) && (rule.group === null || required > rule.required)) rule = { required, group };
  }
  return rule;
}

/** Whoever approves: their stable id and the groups their token names now. */
export interface Approving {
  sub: string;
  groups: readonly string[] | undefined;
}

/**
 * Why this person's approval cannot count (answered 403), or null when it counts. `approvedBy`:
 * the ids that already approved this exact text.
 */
export function approvalRefusal(
  policy: QuorumPolicy,
  rule: QuorumRule,
  owner: SessionOwner | null,
  who: Approving,
  approvedBy: readonly string[],
): string | null {
  if (approvedBy.includes(who.sub)) {
    return 'you already approved this exact plan text; the quorum needs other people (an edited text is a new approval)';
  }
  if (!policy.creatorCounts && owner !== null && owner.sub === who.sub) {
    return "this server does not count the session's creator's approval (--creator-approval-counts false); another person must approve";
  }
  if (rule.group !== null && !(who.groups ?? []).includes(rule.group)) {
    return `this session's plans are approved by members of ${rule.group}, and your token does not name that group`;
  }
  return null;
}

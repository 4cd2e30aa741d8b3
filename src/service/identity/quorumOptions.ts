// The approval policy from the command line: --require-approvals N (the server's number) and
// --require-approvals GROUP=N (a review group's own, repeatable), --creator-approval-counts.
import { DEFAULT_QUORUM_POLICY, quorumIsTrivial, type QuorumPolicy } from './quorum';

export const QUORUM_ARG_OPTIONS = {
  'require-approvals': { type: 'string', multiple: true },
  'creator-approval-counts': { type: 'string' },
} as const;

export const QUORUM_HELP = `  --require-approvals N
                      a plan goes to its agent only when N distinct people approved that exact
                      text (default 1); an edit or a new revision starts the count again
  --require-approvals GROUP=N
                      sessions created by a member of review group GROUP need N approvals from
                      its members; repeatable (the strictest of a creator's groups applies)
  --creator-approval-counts true|false
                      whether the session's creator's own approval counts (default true)
`;

export class QuorumOptionsError extends Error {}

const MAX_APPROVALS = 20;

/**
 * The policy the flags give. A quorum above one needs per-user tokens (distinct people) and the
 * PostgreSQL store (where approvals are counted under the session's row lock); a group must be
 * one of the review groups, whose members see each other's sessions.
 */
export function quorumPolicyFrom(
  values: { 'require-approvals'?: readonly string[] | undefined; 'creator-approval-counts'?: string | undefined },
  context: { reviewGroups: readonly string[] | null; postgres: boolean },
): QuorumPolicy {
  let required = DEFAULT_QUORUM_POLICY.required;
  const groups = new Map<string, number>();
  for (const value of values['require-approvals'] ?? []) {
    const match = /^(?:([^=\s]+)=)?(\d{1,3})$/.exec(value);
    const count = Number(match?.[2]);
    if (!match || count < 1 || count > MAX_APPROVALS) {
      throw new QuorumOptionsError(
        `--require-approvals takes N or GROUP=N with N from 1 to ${MAX_APPROVALS}, got ${JSON.stringify(value)}`,
      );
    }
    const group = match[1];
    if (group === undefined) {
      required = count;
      continue;
    }
    if (!context.reviewGroups?.includes(group)) {
      throw new QuorumOptionsError(`--require-approvals ${group}=${count}: ${group} is not one of --oidc-review-groups`);
    }
    groups.set(group, count);
  }
  const creator = values['creator-approval-counts'];
  if (creator !== undefined && creator !== 'true' && creator !== 'false') {
    throw new QuorumOptionsError(`--creator-approval-counts is true or false, got ${JSON.stringify(creator)}`);
  }
  const policy: QuorumPolicy = { required, groups, creatorCounts: creator !== 'false' };
  if (quorumIsTrivial(policy)) return policy;
  if (context.reviewGroups === null) {
    throw new QuorumOptionsError('approvals by a quorum count distinct people: they need per-user tokens (--oidc-issuer)');
  }
  if (!context.postgres) {
    throw new QuorumOptionsError('approvals by a quorum are counted on the team server: use --store postgres://… (or --database-url-file)');
  }
  return policy;
}

// What "Verify Against Plan" takes from a followed session, and what its Continue sends back:
// which session (the one named, else the only one with an approved plan, else the person picks),
// the approved plan's text, what the agent itself reported done, and the message asking the same
// session to carry out a step verification found missing. Pure.
import type { PlanRevision } from '../panelMessages';
import type { Phase } from '../phase';
import type { Checklist } from './checklist';
import { planLines } from './panelVerification';
import type { PlanStep } from './steps';
import type { ReportedProgress, VerificationOutcome } from './verificationOutcome';

/** Phases of a session whose plan was approved. */
export const APPROVED_PHASES: readonly Phase[] = ['approved', 'executing', 'completed'];

export type SessionChoice<T> = { kind: 'chosen'; session: T } | { kind: 'none' } | { kind: 'pick'; sessions: readonly T[] };

/** Among sessions whose plan was approved: the one `key` names, else the only one, else a pick among them. */
export function chooseApprovedSession<T extends { key: string; phase: Phase }>(
  sessions: readonly T[],
  key: string | undefined,
): SessionChoice<T> {
  const approved = sessions.filter((s) => APPROVED_PHASES.includes(s.phase));
  const named = approved.find((s) => s.key === key);
  if (named) return { kind: 'chosen', session: named };
  if (approved.length === 1) return { kind: 'chosen', session: approved[0]! };
  return approved.length === 0 ? { kind: 'none' } : { kind: 'pick', sessions: approved };
}

/** The last approved revision, if any. */
export function approvedRevision(revisions: readonly PlanRevision[]): PlanRevision | undefined {
  const approved = revisions.filter((r) => r.status === 'approved' || r.status === 'approved_edited');
  return approved[approved.length - 1];
}

/** The text of the last approved revision (as approved: an edited approval's edit), if any. */
export function approvedPlanText(revisions: readonly PlanRevision[]): string | undefined {
  return approvedRevision(revisions)?.plan;
}

/** What the agent reported done, of all steps; none when it reported nothing on any step. */
export function reportedProgress(checklist: Pick<Checklist, 'counts'> | undefined): ReportedProgress | undefined {
  if (!checklist) return undefined;
  const { counts } = checklist;
  if (counts.total === 0 || counts.not_reported === counts.total) return undefined;
  return { done: counts.done, total: counts.total };
}

/** The plan's steps verification confirmed missing, in plan order. */
export function missingSteps(steps: readonly PlanStep[], outcome: VerificationOutcome): PlanStep[] {
  if (outcome.kind !== 'verified') return [];
  const missing = new Set(outcome.steps.filter((s) => s.verdict === 'missing').map((s) => s.id));
  return steps.filter((step) => missing.has(step.id));
}

/** What Continue sends to the session that executed the plan: do this one step, as the plan says. */
export function continueStepMessage(step: Pick<PlanStep, 'id' | 'text' | 'startLine' | 'endLine'>, explanation?: string): string {
  const quoted = step.text
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
  const lines = planLines(step);
  return [
    `Verification against the approved plan found step ${step.id} missing (plan ${lines}):`,
    '',
    quoted,
    '',
    ...(explanation ? [`The verifier's reason: ${explanation}`, ''] : []),
    `Carry out step ${step.id} now, as the approved plan describes it. Leave the other steps as they are.`,
  ].join('\n');
}

/** The server's own reason in a 409 from GET …/changes ("not a git repository: no record of changes"), else the whole message. */
export function noRecordReason(message: string): string {
  return /\(HTTP 409: (.+)\); an archived session/s.exec(message)?.[1] ?? message;
}

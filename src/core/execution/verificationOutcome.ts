// How a finished verification is told and what the command line exits with. A verification that
// failed says so and never "verified"; "Completed" always carries how many steps held.
import { type ReviewerReport } from '../review/outcome';
import type { OutOfPlanChange, StepVerification } from './verification';

export interface ReportedProgress {
  /** Steps the agent reported done (checklist.ts), of all steps. */
  done: number;
  total: number;
}

/** `reported` is absent when no agent's claims are known (the command line verifies any change). */
export type VerificationOutcome =
  | { kind: 'verified'; steps: StepVerification[]; outOfPlan: OutOfPlanChange[]; reported?: ReportedProgress; reviewers: ReviewerReport[] }
  | { kind: 'failed'; reason: string; reported?: ReportedProgress; reviewers: ReviewerReport[] }
  | { kind: 'cancelled'; reported?: ReportedProgress; reviewers: ReviewerReport[] };

/** Failed when every finder failed: a verification nobody could do is never "all done". */
export function decideVerification(
  steps: StepVerification[],
  outOfPlan: OutOfPlanChange[],
  reported: ReportedProgress | undefined,
  reviewers: ReviewerReport[],
): VerificationOutcome {
  const told = reported ? { reported } : {};
  const finders = reviewers.filter((r) => r.role !== 'verifier');
  if (finders.length === 0 || finders.every((r) => !r.ok)) {
    const reason =
      finders.length === 0
        ? 'no finder ran'
        : finders.length === 1
          ? `${finders[0]!.label} failed: ${finders[0]!.error ?? 'no reason given'}`
          : `all ${finders.length} finders failed`;
    return { kind: 'failed', reason, ...told, reviewers };
  }
  return { kind: 'verified', steps, outOfPlan, ...told, reviewers };
}

export function verdictCounts(steps: readonly StepVerification[]): Record<StepVerification['verdict'], number> {
  const counts = { done: 0, done_differently: 0, missing: 0, unverified: 0 };
  for (const step of steps) counts[step.verdict]++;
  return counts;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** "Completed, verified: 6 of 7 steps", or "Verification failed: …" */
export function verificationHeadline(outcome: VerificationOutcome): string {
  switch (outcome.kind) {
    case 'failed':
      return `Verification failed: ${outcome.reason}`;
    case 'cancelled':
      return 'Verification was cancelled';
    case 'verified': {
      const counts = verdictCounts(outcome.steps);
      return `Completed, verified: ${counts.done} of ${plural(outcome.steps.length, 'step')}`;
    }
  }
}

/** "the agent reported 7 of 7 done; verified: 5 done, 1 done differently, 1 missing; 2 changes not in the plan" */
export function verificationDetail(outcome: VerificationOutcome): string {
  const reported = outcome.reported ? `the agent reported ${outcome.reported.done} of ${outcome.reported.total} done; ` : '';
  // A failure's words never include "verified", so no reader can take it for a pass.
  if (outcome.kind !== 'verified') return `${reported}no step was checked`;
  const c = verdictCounts(outcome.steps);
  const parts = [`${c.done} done`, `${c.done_differently} done differently`, `${c.missing} missing`];
  if (c.unverified) parts.push(`${c.unverified} not verified`);
  const extra = outcome.outOfPlan.length ? `; ${plural(outcome.outOfPlan.length, 'change')} not in the plan` : '';
  return `${reported}verified: ${parts.join(', ')}${extra}`;
}

/** True when a step is missing or done differently: "Completed" must not read as plain success. */
export function hasGaps(outcome: VerificationOutcome): boolean {
  if (outcome.kind !== 'verified') return true;
  return outcome.steps.some((s) => s.verdict === 'missing' || s.verdict === 'done_differently');
}

/**
 * The command line's exit code: 2 when verification failed or was cancelled, 1 when a step is
 * missing or done differently (or, with failOnOutOfPlan, a change is not in the plan), else 0.
 * A step left unverified because its verifier failed is reported, not failed on.
 */
export function verificationExitCode(outcome: VerificationOutcome, options: { failOnOutOfPlan?: boolean } = {}): 0 | 1 | 2 {
  if (outcome.kind !== 'verified') return 2;
  if (hasGaps(outcome)) return 1;
  if (options.failOnOutOfPlan && outcome.outOfPlan.length > 0) return 1;
  return 0;
}

// Verification of a change against the approved plan (docs/execution.md "Verification"): the
// review fleet's finders read the plan as the specification and the change, and judge each step
// done / done differently / missing and name the changes no step asked for; every claimed gap and
// every out-of-plan change then goes to a verifier of another run (another agent kind where one is
// configured), as the review's findings do. The runs are the fleet's (fleetRunner.ts): read-only
// sessions, archived when their turn ends, with the same timeouts and cancel.
import { diffText } from '../../core/review/changes';
import { countVerdicts, type Verdict } from '../../core/review/merge';
import type { ReviewProgress } from '../../core/review/progress';
import { readPlanSteps, type PlanOutline, type PlanStep } from '../../core/execution/steps';
import {
  mergeOutOfPlan,
  mergeStepVerdicts,
  parseStepFinderReply,
  type OutOfPlanClaim,
  type StepClaim,
} from '../../core/execution/verification';
import { decideVerification, type ReportedProgress, type VerificationOutcome } from '../../core/execution/verificationOutcome';
import { outOfPlanVerifierPrompt, stepFinderPrompt, stepGapVerifierPrompt } from '../../core/execution/verificationPrompts';
import type { ReviewerReport } from '../../core/review/outcome';
import { orderReviewers, runFinders, verifyClaims, type FleetSettings } from './fleetRunner';
import type { CollectedChange } from './gitChange';

export interface VerifyRequest extends FleetSettings {
  /** The approved plan, exactly as approved (its steps and their ids are read from this text). */
  plan: string;
  change: Pick<CollectedChange, 'files' | 'scopeText'>;
  /** What the executing agent itself reported done, when known; the outcome tells both. */
  reported?: ReportedProgress;
}

export interface VerifyResult {
  outcome: VerificationOutcome;
  outline: PlanOutline;
}

/** One claim a verifier checks: a step's gap, or a change no step asked for. */
type Check = { kind: 'gap'; claim: StepClaim; step: PlanStep } | { kind: 'outOfPlan'; claim: OutOfPlanClaim };

export async function verifyAgainstPlan(request: VerifyRequest): Promise<VerifyResult> {
  const { signal, plan } = request;
  const outline = readPlanSteps(plan);
  const told = request.reported ? { reported: request.reported } : {};
  const failed = (reason: string): VerifyResult => ({ outcome: { kind: 'failed', reason, ...told, reviewers: [] }, outline });
  if (!outline.steps.length) return failed('the plan has no steps to verify');
  if (!request.sources.length) return failed('no agent to verify with');

  const stepsById = new Map(outline.steps.map((step) => [step.id, step]));
  const stepIds = [...stepsById.keys()];
  const claims: StepClaim[] = [];
  const outOfPlan: OutOfPlanClaim[] = [];
  const checks: Check[] = [];
  const reviewers: ReviewerReport[] = [];
  const total = Math.max(1, request.finders);
  const progress: ReviewProgress = { stage: 'finding', counts: countVerdicts([]), finders: { done: 0, total } };
  const tell = (patch: Partial<ReviewProgress> = {}): void => {
    Object.assign(progress, patch, { counts: countVerdicts(checks.map((c) => ({ verdict: c.claim.check }))) });
    request.onProgress?.({ ...progress, finders: { ...progress.finders } });
  };
  tell();

  const finders = await runFinders({
    sources: request.sources,
    total,
    title: (n) => `Ultraplan verification: finder ${n}`,
    prompt: stepFinderPrompt(plan, outline, diffText(request.change.files)),
    parse: (text) => parseStepFinderReply(text, stepIds),
    count: (reply) => reply.steps.filter((s) => s.verdict !== 'done').length + reply.outOfPlan.length,
    reviewers,
    signal,
    ...(request.turnTimeoutMs !== undefined ? { turnTimeoutMs: request.turnTimeoutMs } : {}),
    onReply: ({ label, reply }) => {
      if (reply.ok) {
        for (const verdict of reply.value.steps) {
          const claim: StepClaim = { ...verdict, foundBy: label };
          claims.push(claim);
          if (claim.verdict !== 'done') checks.push({ kind: 'gap', claim, step: stepsById.get(claim.stepId)! });
        }
        for (const change of reply.value.outOfPlan) {
          const claim: OutOfPlanClaim = { ...change, id: `o${outOfPlan.length + 1}`, foundBy: label };
          outOfPlan.push(claim);
          checks.push({ kind: 'outOfPlan', claim });
        }
      }
      tell({ finders: { done: progress.finders.done + 1, total } });
    },
  });
  const cancelled = (): VerifyResult => ({ outcome: { kind: 'cancelled', ...told, reviewers: orderReviewers(reviewers) }, outline });
  if (signal.aborted) return cancelled();

  tell({ stage: 'verifying' });
  await verifyClaims(checks, {
    verifiers: request.verifiers?.length ? request.verifiers : request.sources,
    finders,
    foundBy: (check) => check.claim.foundBy,
    title: (n) => `Ultraplan verification: verify ${n}`,
    prompt: (check) => (check.kind === 'gap' ? stepGapVerifierPrompt(check.step, check.claim) : outOfPlanVerifierPrompt(plan, check.claim)),
    name: (check) => (check.kind === 'gap' ? `step ${check.claim.stepId}` : `change in ${check.claim.file}`),
    reviewers,
    signal,
    ...(request.turnTimeoutMs !== undefined ? { turnTimeoutMs: request.turnTimeoutMs } : {}),
    ...(request.verifierConcurrency !== undefined ? { concurrency: request.verifierConcurrency } : {}),
    onVerdict: (check, verdict: Verdict) => {
      check.claim.check = verdict;
      tell();
    },
  });
  if (signal.aborted) return cancelled();

  tell({ stage: 'merging' });
  return {
    outcome: decideVerification(
      mergeStepVerdicts(outline.steps, claims),
      mergeOutOfPlan(outOfPlan),
      request.reported,
      orderReviewers(reviewers),
    ),
    outline,
  };
}

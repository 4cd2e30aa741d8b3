// A finished verification's outcome made into what the panel shows and the window keeps
// (panelVerification.ts), within its bounds.
import { VERIFICATION_LIMITS, type PanelVerification, type VerifiedStep } from './panelVerification';
import type { StepVerification } from './verification';
import { verificationDetail, verificationHeadline, type VerificationOutcome } from './verificationOutcome';

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const label = (text: string): string => cut(text, VERIFICATION_LIMITS.labelChars);
const text = (value: string): string => cut(value, VERIFICATION_LIMITS.textChars);

function step(s: StepVerification): VerifiedStep {
  return {
    id: s.id,
    title: label(s.title),
    startLine: s.startLine,
    endLine: s.endLine,
    verdict: s.verdict,
    explanation: text(s.explanation),
    ...(s.difference ? { difference: text(s.difference) } : {}),
    evidence: s.evidence.slice(0, VERIFICATION_LIMITS.evidence),
    verifiedBy: s.verifiedBy.slice(0, VERIFICATION_LIMITS.reviewers).map(label),
  };
}

export interface VerificationBinding {
  planHash: string;
  changes: string;
  scope: string;
  at: string;
}

/** The outcome within the panel's bounds; a failure or a cancel carries no step verdicts at all. */
export function toPanelVerification(outcome: VerificationOutcome, binding: VerificationBinding): PanelVerification {
  const verified = outcome.kind === 'verified';
  const reported = outcome.reported;
  return {
    planHash: binding.planHash,
    changes: label(binding.changes),
    scope: text(binding.scope),
    at: binding.at,
    kind: outcome.kind,
    headline: label(verificationHeadline(outcome)),
    detail: text(verificationDetail(outcome)),
    ...(reported ? { reported: { done: reported.done, total: reported.total } } : {}),
    steps: verified ? outcome.steps.slice(0, VERIFICATION_LIMITS.steps).map(step) : [],
    outOfPlan: verified
      ? outcome.outOfPlan.slice(0, VERIFICATION_LIMITS.outOfPlan).map((c) => ({
          file: c.file,
          startLine: c.startLine,
          endLine: c.endLine,
          explanation: text(c.explanation),
          status: c.status,
          foundBy: c.foundBy.slice(0, VERIFICATION_LIMITS.reviewers).map(label),
          confirmedBy: c.confirmedBy.slice(0, VERIFICATION_LIMITS.reviewers).map(label),
        }))
      : [],
    failures: outcome.reviewers
      .filter((r) => !r.ok)
      .slice(0, VERIFICATION_LIMITS.reviewers)
      .map((r) => ({ label: label(r.label), error: text(r.error ?? 'no reason given') })),
  };
}

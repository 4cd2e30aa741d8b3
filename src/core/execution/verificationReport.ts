// A finished verification as a person reads it: each step's verdict with its evidence and who
// verified it, then the changes no step asked for. The command line prints it, the editor shows it
// in its output channel; `--json` prints the same steps (stepReports).
import { evidencePlace } from './panelVerification';
import type { PlanOutline } from './steps';
import type { Evidence, StepVerification } from './verification';
import { verificationDetail, verificationHeadline, type VerificationOutcome } from './verificationOutcome';

export interface StepReport {
  id: string;
  text: string;
  lines: { start: number; end: number };
  verdict: StepVerification['verdict'];
  explanation: string;
  difference?: string;
  evidence: Evidence[];
  verifiedBy: string[];
  foundBy: string[];
}

/** Every step of the plan, in its order; a step no verification reached is unverified. */
export function stepReports(outline: PlanOutline, outcome: VerificationOutcome): StepReport[] {
  const verified = new Map(outcome.kind === 'verified' ? outcome.steps.map((s) => [s.id, s]) : []);
  return outline.steps.map((step) => {
    const v = verified.get(step.id);
    return {
      id: step.id,
      text: step.text,
      lines: { start: step.startLine, end: step.endLine },
      verdict: v?.verdict ?? 'unverified',
      explanation: v?.explanation ?? 'No step was checked.',
      ...(v?.difference ? { difference: v.difference } : {}),
      evidence: v?.evidence ?? [],
      verifiedBy: v?.verifiedBy ?? [],
      foundBy: v?.foundBy ?? [],
    };
  });
}

const VERDICT_WORDS: Record<StepVerification['verdict'], string> = {
  done: 'done',
  done_differently: 'DONE DIFFERENTLY',
  missing: 'MISSING',
  unverified: 'not checked',
};

/** The headline, the counts, what was checked, each step, the changes not in the plan and the reviewers that failed. */
export function verificationReportText(outcome: VerificationOutcome, steps: readonly StepReport[], scopeText: string | undefined): string {
  const lines = [verificationHeadline(outcome), verificationDetail(outcome)];
  if (scopeText) lines.push(`Checked: ${scopeText}`);
  if (outcome.kind === 'verified') {
    for (const step of steps) {
      lines.push('', `${step.id}  [${VERDICT_WORDS[step.verdict]}]  ${step.text}  (plan lines ${step.lines.start}-${step.lines.end})`);
      lines.push(...step.explanation.split('\n').map((line) => `    ${line}`));
      if (step.difference) lines.push(`    how it differs: ${step.difference}`);
      if (step.evidence.length) lines.push(`    evidence: ${step.evidence.map(evidencePlace).join(', ')}`);
      if (step.verifiedBy.length) lines.push(`    by ${step.verifiedBy.join(', ')}`);
    }
    if (outcome.outOfPlan.length) lines.push('', 'Not in the plan:');
    for (const change of outcome.outOfPlan) {
      lines.push(`  ${change.file}:${change.startLine}-${change.endLine}  ${change.explanation}`);
      lines.push(
        `    ${change.status === 'confirmed' ? `confirmed by ${change.confirmedBy.join(', ')}` : 'no verifier could check it'} · found by ${change.foundBy.join(', ')}`,
      );
    }
  }
  const failures = outcome.reviewers.filter((r) => !r.ok);
  if (failures.length) lines.push('', ...failures.map((r) => `${r.label} failed: ${r.error ?? 'no reason given'}`));
  return lines.join('\n') + '\n';
}

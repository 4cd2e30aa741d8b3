// A verification's claims on the code as the review's comment threads show them: each step done
// differently on its first evidence, each change no step asked for on its lines. They carry the
// session that executed the plan, so that their Fix asks that same session (the Continue of a
// step), and the words that message says. Pure.
import type { ReviewFinding } from '../review/merge';
import { planLines, type PanelVerification } from './panelVerification';
import type { PlanStep } from './steps';

export interface PlanClaim {
  sessionKey: string;
  kind: 'done_differently' | 'out_of_plan';
  stepId?: string;
}

export type VerificationFinding = ReviewFinding & { plan: PlanClaim };

/** The threads of a verification, in plan order then by file; a step with no file in its evidence has no line to sit on and gets none. */
export function verificationFindings(verification: PanelVerification, sessionKey: string): VerificationFinding[] {
  if (verification.kind !== 'verified') return [];
  const findings: VerificationFinding[] = [];
  for (const step of verification.steps) {
    if (step.verdict !== 'done_differently') continue;
    const where = step.evidence[0];
    if (!where) continue;
    const startLine = where.startLine ?? 1;
    findings.push({
      id: `plan-step-${step.id}`,
      file: where.file,
      startLine,
      endLine: Math.max(startLine, where.endLine ?? startLine),
      severity: 'major',
      title: `Step ${step.id} done differently: ${step.title}`,
      explanation: step.difference ? `${step.explanation}\n\nHow it differs from the plan: ${step.difference}` : step.explanation,
      foundBy: [],
      confirmedBy: step.verifiedBy,
      refutedBy: [],
      confirmations: step.verifiedBy.length,
      verdicts: step.verifiedBy.length,
      status: step.verifiedBy.length ? 'confirmed' : 'unverified',
      reasons: [],
      plan: { sessionKey, kind: 'done_differently', stepId: step.id },
    });
  }
  verification.outOfPlan.forEach((change, i) => {
    findings.push({
      id: `plan-extra-${i + 1}`,
      file: change.file,
      startLine: change.startLine,
      endLine: change.endLine,
      severity: 'minor',
      title: `Not in the plan: ${change.explanation.split(/(?<=[.!?])\s/)[0]!.slice(0, 200)}`,
      explanation: change.explanation,
      foundBy: change.foundBy,
      confirmedBy: change.confirmedBy,
      refutedBy: [],
      confirmations: change.confirmedBy.length,
      verdicts: change.confirmedBy.length,
      status: change.status,
      reasons: [],
      plan: { sessionKey, kind: 'out_of_plan' },
    });
  });
  return findings;
}

/** Fix on a step done differently: the same session is asked to do it as the plan says. */
export function redoStepMessage(
  step: Pick<PlanStep, 'id' | 'text' | 'startLine' | 'endLine'>,
  finding: Pick<ReviewFinding, 'explanation' | 'file'>,
): string {
  return [
    `Verification against the approved plan found step ${step.id} done differently from the plan (plan ${planLines(step)}):`,
    '',
    ...step.text.split('\n').map((line) => `> ${line}`),
    '',
    `What the verifier saw (in ${finding.file}): ${finding.explanation}`,
    '',
    `Change it so that step ${step.id} is carried out as the approved plan describes. Leave the other steps as they are.`,
  ].join('\n');
}

/** Fix on a change no step asked for: the same session is asked to take it back, unless a step needs it. */
export function outOfPlanMessage(finding: Pick<ReviewFinding, 'file' | 'startLine' | 'endLine' | 'explanation'>): string {
  return [
    `Verification against the approved plan found a change no step of the plan asked for, in ${finding.file} lines ${finding.startLine}-${finding.endLine}:`,
    '',
    finding.explanation,
    '',
    'Undo that change unless a step of the approved plan needs it; if one does, say which. Leave the rest as it is.',
  ].join('\n');
}

// What verification of an executed plan found: per step done / done differently / missing, and
// the changes no step asked for. Finders read the approved plan and the change since approval;
// each gap and each out-of-plan change they claim is checked by a verifier, as in the review
// fleet (src/core/review/), whose reply parsing and duplicate merge this reuses.
import * as z from 'zod';
import { parseWith, type ParsedReply } from '../review/finding';
import { mergeFindings, type RawFinding, type Verdict } from '../review/merge';
import type { PlanStep } from './steps';

export const STEP_VERDICTS = ['done', 'done_differently', 'missing'] as const;
export type StepVerdictKind = (typeof STEP_VERDICTS)[number];

const MAX_TEXT = 20_000;

export const EvidenceSchema = z.strictObject({
  file: z.string().min(1).max(1000),
  startLine: z.number().int().min(1).optional(),
  endLine: z.number().int().min(1).optional(),
});
export type Evidence = z.infer<typeof EvidenceSchema>;

/** A finder's verdict on one step (the agent's JSON: camelCase, strict). */
export const StepVerdictSchema = z.strictObject({
  stepId: z.string().min(1).max(500),
  verdict: z.enum(STEP_VERDICTS),
  explanation: z.string().min(1).max(MAX_TEXT),
  /** How the change differs from what the step asked: required for done_differently. */
  difference: z.string().min(1).max(MAX_TEXT).optional(),
  evidence: z.array(EvidenceSchema).max(50),
});
export type StepVerdict = z.infer<typeof StepVerdictSchema>;

/** A change no step of the plan asked for. */
export const OutOfPlanSchema = z.strictObject({
  file: z.string().min(1).max(1000),
  startLine: z.number().int().min(1),
  endLine: z.number().int().min(1),
  explanation: z.string().min(1).max(MAX_TEXT),
});
export type OutOfPlan = z.infer<typeof OutOfPlanSchema>;

export const StepFinderReplySchema = z.strictObject({
  steps: z.array(StepVerdictSchema).max(2000),
  outOfPlan: z.array(OutOfPlanSchema).max(200),
});
export type StepFinderReply = z.infer<typeof StepFinderReplySchema>;

/** A finder's reply; a verdict on a step the plan does not have, or twice on one step, fails it. */
export function parseStepFinderReply(text: string, stepIds: readonly string[]): ParsedReply<StepFinderReply> {
  const parsed = parseWith(StepFinderReplySchema, text, 'step verdicts');
  if (!parsed.ok) return parsed;
  const known = new Set(stepIds);
  const seen = new Set<string>();
  for (const step of parsed.value.steps) {
    if (!known.has(step.stepId)) return { ok: false, error: `it gave a verdict on "${step.stepId}", which is not a step of the plan` };
    if (seen.has(step.stepId)) return { ok: false, error: `it gave two verdicts on step "${step.stepId}"` };
    seen.add(step.stepId);
    if (step.verdict === 'done_differently' && !step.difference)
      return { ok: false, error: `its verdict on step "${step.stepId}" is done_differently without saying how (difference)` };
  }
  const backwards = parsed.value.outOfPlan.find((c) => c.endLine < c.startLine);
  if (backwards)
    return {
      ok: false,
      error: `a change in ${backwards.file} ends (line ${backwards.endLine}) before it starts (line ${backwards.startLine})`,
    };
  return parsed;
}

/** One finder's verdict on a step, with the verifier's answer when it claimed a gap. */
export interface StepClaim extends StepVerdict {
  foundBy: string;
  check?: Verdict;
}

export type VerifiedVerdict = StepVerdictKind | 'unverified';

export interface StepVerification {
  id: string;
  title: string;
  startLine: number;
  endLine: number;
  verdict: VerifiedVerdict;
  explanation: string;
  difference?: string;
  evidence: Evidence[];
  foundBy: string[];
  confirmedBy: string[];
  refutedBy: string[];
  /** Who stands behind the verdict: a gap's confirming verifiers; for done, the finders that judged it done and the verifiers that refuted a gap. */
  verifiedBy: string[];
}

const SERIOUSNESS: Record<StepVerdictKind, number> = { missing: 0, done_differently: 1, done: 2 };

function unique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
}

/**
 * Per step: a gap (missing, done differently) stands when a verifier confirmed it, the most serious
 * confirmed gap first; refuted gaps fall away; a gap no verifier could answer leaves the step
 * unverified, never done; a step no finder reported on is unverified.
 */
export function mergeStepVerdicts(steps: readonly PlanStep[], claims: readonly StepClaim[]): StepVerification[] {
  return steps.map((step): StepVerification => {
    const mine = claims.filter((c) => c.stepId === step.id);
    const gaps = mine.filter((c) => c.verdict !== 'done');
    const confirmed = gaps.filter((c) => c.check?.verdict === 'confirmed');
    const refuted = gaps.filter((c) => c.check?.verdict === 'refuted');
    const unanswered = gaps.filter((c) => c.check?.verdict !== 'confirmed' && c.check?.verdict !== 'refuted');
    const done = mine.filter((c) => c.verdict === 'done');
    const base = {
      id: step.id,
      title: step.title,
      startLine: step.startLine,
      endLine: step.endLine,
      foundBy: unique(mine.map((c) => c.foundBy)),
      confirmedBy: unique(confirmed.map((c) => c.check!.by)),
      refutedBy: unique(refuted.map((c) => c.check!.by)),
    };
    const doneBy = unique([...done.map((c) => c.foundBy), ...base.refutedBy]);
    if (confirmed.length) {
      const lead = [...confirmed].sort((a, b) => SERIOUSNESS[a.verdict] - SERIOUSNESS[b.verdict])[0]!;
      return {
        ...base,
        verifiedBy: base.confirmedBy,
        verdict: lead.verdict,
        explanation: lead.explanation,
        ...(lead.difference ? { difference: lead.difference } : {}),
        evidence: lead.evidence,
      };
    }
    if (unanswered.length) {
      const reason = unanswered[0]!.check?.reason;
      return {
        ...base,
        verifiedBy: [],
        verdict: 'unverified',
        explanation: `${unanswered[0]!.foundBy} reported it ${unanswered[0]!.verdict.replace('_', ' ')}, and no verifier could check that${reason ? ` (${reason})` : ''}.`,
        evidence: unanswered[0]!.evidence,
      };
    }
    if (done.length || refuted.length) {
      const lead = done[0];
      return {
        ...base,
        verifiedBy: doneBy,
        verdict: 'done',
        explanation: lead?.explanation ?? `The gaps reported were refuted: ${refuted.map((c) => c.check!.reason).join(' ')}`,
        evidence: lead?.evidence ?? [],
      };
    }
    return { ...base, verifiedBy: [], verdict: 'unverified', explanation: 'No finder reported on this step.', evidence: [] };
  });
}

/** One out-of-plan change as a finder reported it, with its verifier's answer. */
export interface OutOfPlanClaim extends OutOfPlan {
  id: string;
  foundBy: string;
  check?: Verdict;
}

export interface OutOfPlanChange extends OutOfPlan {
  foundBy: string[];
  confirmedBy: string[];
  status: 'confirmed' | 'unverified';
}

/** Duplicates (same file, overlapping lines, similar words) merge, and refuted ones drop, as review findings do. */
export function mergeOutOfPlan(claims: readonly OutOfPlanClaim[]): OutOfPlanChange[] {
  const raw = claims.map((c): RawFinding => ({
    file: c.file,
    startLine: c.startLine,
    endLine: c.endLine,
    // Out-of-plan changes have no severity of their own; one value keeps the merge from ranking them.
    severity: 'minor',
    explanation: c.explanation,
    title: c.explanation.split(/(?<=[.!?])\s/)[0]!.slice(0, 300),
    id: c.id,
    foundBy: c.foundBy,
    ...(c.check ? { verdict: c.check } : {}),
  }));
  return mergeFindings(raw).map((f) => ({
    file: f.file,
    startLine: f.startLine,
    endLine: f.endLine,
    explanation: f.explanation,
    foundBy: f.foundBy,
    confirmedBy: f.confirmedBy,
    status: f.status,
  }));
}

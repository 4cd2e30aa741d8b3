// A finished verification as the review panel shows it and as the window keeps it across a reload:
// per step its verdict, evidence and who verified it, the changes no step asked for, the reviewers
// that failed, bound to the hash of the plan it checked and to the changes it read. Built once on
// the host from the outcome (toPanelVerification.ts); the webview and the window's store parse it with
// the schema here. Pure: zod only, so the panel's message schemas (and the webview) load it alone.
import * as z from 'zod';
import type { VerifiedVerdict } from './verification';

export const VERIFICATION_LIMITS = {
  steps: 2_000,
  outOfPlan: 200,
  evidence: 50,
  reviewers: 50,
  labelChars: 500,
  textChars: 20_000,
  pathChars: 1_000,
} as const;

const Label = z.string().max(VERIFICATION_LIMITS.labelChars);
const Text = z.string().max(VERIFICATION_LIMITS.textChars);
const Line = z.number().int().min(1);
const Path = z.string().min(1).max(VERIFICATION_LIMITS.pathChars);
const Names = z.array(Label).max(VERIFICATION_LIMITS.reviewers);

// verification.ts's verdicts, repeated so that the panel's schemas load without the review's rules.
export const PANEL_VERDICTS = ['done', 'done_differently', 'missing', 'unverified'] as const satisfies readonly VerifiedVerdict[];
export type PanelVerdict = (typeof PANEL_VERDICTS)[number];

export const VerifiedStepSchema = z.strictObject({
  id: z.string().min(1).max(500),
  title: Label,
  startLine: Line,
  endLine: Line,
  verdict: z.enum(PANEL_VERDICTS),
  explanation: Text,
  difference: Text.optional(),
  evidence: z.array(z.strictObject({ file: Path, startLine: Line.optional(), endLine: Line.optional() })).max(VERIFICATION_LIMITS.evidence),
  verifiedBy: Names,
});
export type VerifiedStep = z.infer<typeof VerifiedStepSchema>;

export const VerifiedOutOfPlanSchema = z.strictObject({
  file: Path,
  startLine: Line,
  endLine: Line,
  explanation: Text,
  status: z.enum(['confirmed', 'unverified']),
  foundBy: Names,
  confirmedBy: Names,
});
export type VerifiedOutOfPlan = z.infer<typeof VerifiedOutOfPlanSchema>;

export const PanelVerificationSchema = z.strictObject({
  /** sha256 of the approved plan text the verification read its steps from. */
  planHash: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters (sha256)'),
  /** Names the changes it verified (the record at approval and a digest of the diff). */
  changes: z.string().min(1).max(VERIFICATION_LIMITS.labelChars),
  /** What was checked, in words ("the changes since the plan was approved (record …)"). */
  scope: Text,
  /** When it finished (ISO 8601). */
  at: z.iso.datetime(),
  kind: z.enum(['verified', 'failed', 'cancelled']),
  /** "Completed, verified: 6 of 7 steps" or "Verification failed: …" (verificationOutcome.ts). */
  headline: Label,
  /** "the agent reported 7 of 7 done; verified: 5 done, 1 done differently, 1 missing" */
  detail: Text,
  reported: z.strictObject({ done: z.number().int().min(0), total: z.number().int().min(0) }).optional(),
  steps: z.array(VerifiedStepSchema).max(VERIFICATION_LIMITS.steps),
  outOfPlan: z.array(VerifiedOutOfPlanSchema).max(VERIFICATION_LIMITS.outOfPlan),
  /** Reviewers that failed, with their reason. */
  failures: z.array(z.strictObject({ label: Label, error: Text })).max(VERIFICATION_LIMITS.reviewers),
});
export type PanelVerification = z.infer<typeof PanelVerificationSchema>;

/** A session's verification as the panel gets it: the last one (none yet), and whether one runs now. */
export const SessionVerificationSchema = z.strictObject({
  last: PanelVerificationSchema.optional(),
  running: z.boolean(),
});
export type SessionVerification = z.infer<typeof SessionVerificationSchema>;

/** "src/a.ts:4-9", "src/a.ts:4", or the file alone: where a verdict's evidence is. */
export function evidencePlace(evidence: { file: string; startLine?: number | undefined; endLine?: number | undefined }): string {
  if (!evidence.startLine) return evidence.file;
  return `${evidence.file}:${evidence.startLine}${evidence.endLine && evidence.endLine !== evidence.startLine ? `-${evidence.endLine}` : ''}`;
}

/** "line 4" or "lines 4-6" of the plan. */
export function planLines(step: { startLine: number; endLine: number }): string {
  return `line${step.startLine === step.endLine ? ` ${step.startLine}` : `s ${step.startLine}-${step.endLine}`}`;
}

// A running review as the inbox and the status bar show it: its stage and its counts.
import type { VerificationCounts } from './merge';

export const REVIEW_STAGES = ['collecting', 'finding', 'verifying', 'merging'] as const;
export type ReviewStage = (typeof REVIEW_STAGES)[number];

export interface ReviewProgress {
  stage: ReviewStage;
  counts: VerificationCounts;
  /** Finder runs done of all started. */
  finders: { done: number; total: number };
}

export const STAGE_LABELS: Readonly<Record<ReviewStage, string>> = {
  collecting: 'collecting the change',
  finding: 'finding',
  verifying: 'verifying',
  merging: 'merging',
};

/** "verifying — 5 found, 2 verified, 1 refuted". */
export function progressLine(progress: ReviewProgress): string {
  const { found, verified, refuted } = progress.counts;
  if (progress.stage === 'collecting') return STAGE_LABELS.collecting;
  if (progress.stage === 'finding') return `finding — ${progress.finders.done} of ${progress.finders.total} reviewers done, ${found} found`;
  return `${STAGE_LABELS[progress.stage]} — ${found} found, ${verified} verified, ${refuted} refuted`;
}

// One review from start to end, for the command line and the editor alike: collect the change,
// run the fleet and/or Claude Code's review side by side, merge what they found into one outcome.
import type { RawFinding } from '../../core/review/merge';
import type { ReviewerReport, ReviewOutcome } from '../../core/review/outcome';
import type { ReviewProgress } from '../../core/review/progress';
import { DEFAULT_REVIEW_LIMITS, type ReviewLimits, type ReviewScope } from '../../core/review/scope';
import { runClaudeReview, type ClaudeReviewOptions } from './claudeReviewRun';
import { reviewOutcome, runReviewFleet, type FleetOptions } from './fleet';
import { collectChange, ReviewChangeError, type CollectedChange } from './gitChange';

export interface ReviewRequest {
  folder: string;
  scope: ReviewScope;
  limits?: ReviewLimits;
  fleet?: Pick<FleetOptions, 'sources' | 'finders' | 'verifiers' | 'turnTimeoutMs'>;
  claude?: Pick<ClaudeReviewOptions, 'command' | 'trusted' | 'timeoutMinutes' | 'env' | 'onLine'>;
  signal: AbortSignal;
  onProgress?: (progress: ReviewProgress) => void;
}

export interface ReviewResult {
  outcome: ReviewOutcome;
  /** Absent when the change could not be collected (the outcome says why). */
  change?: CollectedChange;
}

export async function runReview(request: ReviewRequest): Promise<ReviewResult> {
  if (!request.fleet && !request.claude) throw new Error('A review needs reviewers: agents for the fleet, or Claude Code.');
  const { signal } = request;
  const none = { found: 0, verified: 0, refuted: 0, unverified: 0 };
  request.onProgress?.({ stage: 'collecting', counts: none, finders: { done: 0, total: request.fleet?.finders ?? 0 } });
  let change: CollectedChange;
  try {
    change = await collectChange(request.folder, request.scope, request.limits ?? DEFAULT_REVIEW_LIMITS, signal);
  } catch (error) {
    if (signal.aborted) return { outcome: { kind: 'cancelled', reviewers: [] } };
    if (error instanceof ReviewChangeError) return { outcome: { kind: 'failed', reason: error.message, reviewers: [] } };
    throw error;
  }
  const raw: RawFinding[] = [];
  const reviewers: ReviewerReport[] = [];
  let cancelled = false;
  await Promise.all([
    request.fleet &&
      runReviewFleet({ change, ...request.fleet, signal, ...(request.onProgress ? { onProgress: request.onProgress } : {}) }).then(
        (fleet) => {
          raw.push(...fleet.raw);
          reviewers.push(...fleet.reviewers);
          cancelled ||= fleet.cancelled;
        },
      ),
    request.claude &&
      runClaudeReview({ ...request.claude, cwd: change.root, scope: request.scope, signal }).then((claude) => {
        raw.push(...claude.findings.map((finding, i) => ({ ...finding, id: `c${i + 1}` })));
        reviewers.push(claude.reviewer);
        cancelled ||= claude.cancelled;
      }),
  ]);
  return { outcome: reviewOutcome(raw, reviewers, cancelled || signal.aborted), change };
}

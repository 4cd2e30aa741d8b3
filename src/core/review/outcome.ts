// How a finished review is told (docs/review.md "Outcomes"): findings, no findings, failed or
// cancelled are four different things, and a reviewer that failed is named even when the others
// reported.
import { atLeast, type Severity } from './finding';
import type { ReviewFinding, VerificationCounts } from './merge';

export interface ReviewerReport {
  /** "Claude (ACP) #1", "Gemini CLI (ACP) verifier", "Claude Code ultrareview". */
  label: string;
  role: 'finder' | 'verifier' | 'claude';
  ok: boolean;
  /** Why it failed, in its own words where it gave them. */
  error?: string;
  /** Findings it returned (finders). */
  findings?: number;
}

export type ReviewOutcome =
  | { kind: 'findings'; findings: ReviewFinding[]; counts: VerificationCounts; reviewers: ReviewerReport[] }
  | { kind: 'clean'; counts: VerificationCounts; reviewers: ReviewerReport[] }
  | { kind: 'failed'; reason: string; reviewers: ReviewerReport[] }
  | { kind: 'cancelled'; reviewers: ReviewerReport[] };

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** Reviewers that did the finding (finders, or Claude's review). */
function finders(reviewers: readonly ReviewerReport[]): ReviewerReport[] {
  return reviewers.filter((r) => r.role !== 'verifier');
}

/** One line: what a person reads in the status bar, the inbox and a notification. */
export function outcomeHeadline(outcome: ReviewOutcome): string {
  const found = finders(outcome.reviewers);
  const worked = found.filter((r) => r.ok).length;
  switch (outcome.kind) {
    case 'findings':
      return `${plural(outcome.findings.length, 'issue')} found by ${plural(worked, 'reviewer')}`;
    case 'clean':
      return `No issues found by ${plural(worked, 'reviewer')}`;
    case 'failed':
      return `The review failed: ${outcome.reason}`;
    case 'cancelled':
      return 'The review was cancelled';
  }
}

/** The lines under the headline: refutations, failures named, each with its reason. */
export function outcomeDetails(outcome: ReviewOutcome): string[] {
  const lines: string[] = [];
  if (outcome.kind === 'findings' || outcome.kind === 'clean') {
    const { found, refuted, unverified } = outcome.counts;
    if (found)
      lines.push(
        `${plural(found, 'finding')} raised, ${refuted} refuted by verification${unverified ? `, ${unverified} not verified` : ''}.`,
      );
  }
  const failed = outcome.reviewers.filter((r) => !r.ok);
  for (const reviewer of failed) lines.push(`${reviewer.label} failed: ${reviewer.error ?? 'no reason given'}`);
  const others = finders(outcome.reviewers).filter((r) => r.ok).length;
  if (failed.some((r) => r.role !== 'verifier') && (outcome.kind === 'findings' || outcome.kind === 'clean')) {
    lines.push(`The other ${plural(others, 'reviewer')} reported.`);
  }
  return lines;
}

/**
 * The findings' outcome, or a failure when no finder could report: a review where every reviewer
 * failed is never "no issues".
 */
export function decideOutcome(findings: ReviewFinding[], counts: VerificationCounts, reviewers: ReviewerReport[]): ReviewOutcome {
  const found = finders(reviewers);
  if (found.length > 0 && found.every((r) => !r.ok)) {
    const reason =
      found.length === 1 ? `${found[0]!.label} failed: ${found[0]!.error ?? 'no reason given'}` : `all ${found.length} reviewers failed`;
    return { kind: 'failed', reason, reviewers };
  }
  return findings.length ? { kind: 'findings', findings, counts, reviewers } : { kind: 'clean', counts, reviewers };
}

/** The command line's exit code: 0 nothing at or above the threshold, 1 such findings, 2 failed. */
export function exitCodeFor(outcome: ReviewOutcome, failOn: Severity): 0 | 1 | 2 {
  if (outcome.kind === 'failed' || outcome.kind === 'cancelled') return 2;
  if (outcome.kind === 'clean') return 0;
  return outcome.findings.some((f) => atLeast(f.severity, failOn)) ? 1 : 0;
}

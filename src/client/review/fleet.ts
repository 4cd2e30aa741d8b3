// The review fleet (docs/review.md "How a review runs"): N finders review the change in parallel,
// each finding goes to a verifier that is another agent run (another agent kind than its finder's
// where there is one, from the verifiers when they are named), then duplicates are merged. Any
// backend works: each reviewer is a SessionBackend whose sessions run one ACP agent, embedded or
// on the server.
import { parseFinderReply } from '../../core/review/finding';
import { countVerdicts, mergeFindings, type RawFinding } from '../../core/review/merge';
import { decideOutcome, type ReviewerReport, type ReviewOutcome } from '../../core/review/outcome';
import type { ReviewProgress } from '../../core/review/progress';
import { finderPrompt, verifierPrompt } from '../../core/review/prompts';
import { diffText } from '../../core/review/changes';
import { reviewRunTitle } from '../../core/sessionPurpose';
import { orderReviewers, runFinders, verifyClaims, type FleetSettings } from './fleetRunner';
import type { CollectedChange } from './gitChange';

export { verifierFor, type ReviewerSource } from './fleetRunner';

export interface FleetOptions extends FleetSettings {
  change: Pick<CollectedChange, 'files' | 'scopeText'>;
}

export interface FleetResult {
  raw: RawFinding[];
  reviewers: ReviewerReport[];
  cancelled: boolean;
}

/** The outcome of finished reviewer runs: merged, counted, told. */
export function reviewOutcome(raw: RawFinding[], reviewers: ReviewerReport[], cancelled = false): ReviewOutcome {
  const ordered = orderReviewers(reviewers);
  if (cancelled) return { kind: 'cancelled', reviewers: ordered };
  return decideOutcome(mergeFindings(raw), countVerdicts(raw), ordered);
}

export async function runReviewFleet(options: FleetOptions): Promise<FleetResult> {
  const { sources, signal } = options;
  if (!sources.length) throw new Error('A review needs at least one agent to review with.');
  const total = Math.max(1, options.finders);
  const raw: RawFinding[] = [];
  const reviewers: ReviewerReport[] = [];
  const progress: ReviewProgress = { stage: 'finding', counts: countVerdicts(raw), finders: { done: 0, total } };
  const tell = (patch: Partial<ReviewProgress> = {}): void => {
    Object.assign(progress, patch, { counts: countVerdicts(raw) });
    options.onProgress?.({ ...progress, finders: { ...progress.finders } });
  };
  tell();

  const finders = await runFinders({
    sources,
    total,
    title: (n) => reviewRunTitle('finder', n),
    prompt: finderPrompt(options.change.scopeText, diffText(options.change.files)),
    parse: parseFinderReply,
    count: (findings) => findings.length,
    reviewers,
    signal,
    ...turnTimeout(options),
    onReply: ({ label, reply }) => {
      if (reply.ok) reply.value.forEach((finding) => raw.push({ ...finding, id: `f${raw.length + 1}`, foundBy: label }));
      tell({ finders: { done: progress.finders.done + 1, total } });
    },
  });
  if (signal.aborted) return { raw, reviewers, cancelled: true };

  tell({ stage: 'verifying' });
  await verifyClaims(raw, {
    verifiers: options.verifiers?.length ? options.verifiers : sources,
    finders,
    foundBy: (finding) => finding.foundBy,
    title: (n) => reviewRunTitle('verify', n),
    prompt: verifierPrompt,
    name: (finding) => `finding ${finding.id}`,
    reviewers,
    signal,
    ...turnTimeout(options),
    ...(options.verifierConcurrency !== undefined ? { concurrency: options.verifierConcurrency } : {}),
    onVerdict: (finding, verdict) => {
      finding.verdict = verdict;
      tell();
    },
  });
  if (signal.aborted) return { raw, reviewers, cancelled: true };

  tell({ stage: 'merging' });
  return { raw, reviewers, cancelled: false };
}

function turnTimeout(options: FleetOptions): { turnTimeoutMs?: number } {
  return options.turnTimeoutMs !== undefined ? { turnTimeoutMs: options.turnTimeoutMs } : {};
}

// The review fleet (docs/review.md "How a review runs"): N finders review the change in parallel,
// each finding goes to a verifier that is another agent run (another agent kind than its finder's
// where there is one, from the verifiers when they are named), then duplicates are merged. Any
// backend works: each reviewer is a SessionBackend whose sessions run one ACP agent, embedded or
// on the server.
import { parseFinderReply, parseVerdictReply } from '../../core/review/finding';
import { countVerdicts, mergeFindings, type RawFinding } from '../../core/review/merge';
import { decideOutcome, type ReviewerReport, type ReviewOutcome } from '../../core/review/outcome';
import type { ReviewProgress } from '../../core/review/progress';
import { finderPrompt, verifierPrompt } from '../../core/review/prompts';
import { diffText } from '../../core/review/changes';
import type { SessionBackend } from '../backend';
import { runAgentTurn } from './agentTurn';
import type { CollectedChange } from './gitChange';

export interface ReviewerSource {
  /** The agent's name for people: "Claude (ACP)". */
  label: string;
  backend: SessionBackend;
}

export interface FleetOptions {
  change: Pick<CollectedChange, 'files' | 'scopeText'>;
  /** Agents to review with; finders are spread over them in turn. */
  sources: readonly ReviewerSource[];
  finders: number;
  /**
   * Agents that verify (default: the finders' agents). Naming them lets finders of one kind be
   * checked by another kind, e.g. Codex finding and Claude verifying.
   */
  verifiers?: readonly ReviewerSource[];
  /** Verifier runs at once. */
  verifierConcurrency?: number;
  turnTimeoutMs?: number;
  signal: AbortSignal;
  onProgress?: (progress: ReviewProgress) => void;
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

/** Runs `tasks` with at most `limit` at once, in order of start. */
async function pool<T>(tasks: ReadonlyArray<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, tasks.length) }, async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  });
  await Promise.all(workers);
  return results;
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

  const prompt = finderPrompt(options.change.scopeText, diffText(options.change.files));
  const finderRuns = Array.from({ length: total }, async (_, i) => {
    const source = sources[i % sources.length]!;
    const label = `${source.label} #${i + 1}`;
    const turn = await runAgentTurn({
      backend: source.backend,
      title: `Ultrareview: finder ${i + 1}`,
      prompt,
      signal,
      ...timeout(options),
    });
    const parsed = turn.ok ? parseFinderReply(turn.text) : turn;
    if (parsed.ok) {
      parsed.value.forEach((finding) => raw.push({ ...finding, id: `f${raw.length + 1}`, foundBy: label }));
      reviewers.push({ label, role: 'finder', ok: true, findings: parsed.value.length });
    } else reviewers.push({ label, role: 'finder', ok: false, error: parsed.error });
    tell({ finders: { done: progress.finders.done + 1, total } });
    return { index: i, source };
  });
  const finished = await Promise.all(finderRuns);
  if (signal.aborted) return { raw, reviewers, cancelled: true };

  tell({ stage: 'verifying' });
  const finderSource = new Map(finished.map(({ index, source }) => [`${source.label} #${index + 1}`, source]));
  const verifiers = options.verifiers?.length ? options.verifiers : sources;
  await pool(
    raw.map((finding, n) => async () => {
      if (signal.aborted) return;
      const source = verifierFor(finderSource.get(finding.foundBy), verifiers, n);
      const label = `${source.label} verifier`;
      const turn = await runAgentTurn({
        backend: source.backend,
        title: `Ultrareview: verify ${n + 1}`,
        prompt: verifierPrompt(finding),
        signal,
        ...timeout(options),
      });
      const parsed = turn.ok ? parseVerdictReply(turn.text) : turn;
      finding.verdict = parsed.ok
        ? { by: label, verdict: parsed.value.verdict, reason: parsed.value.reason }
        : { by: label, verdict: 'failed', reason: parsed.error };
      if (!parsed.ok) reviewers.push({ label: `${label} (finding ${finding.id})`, role: 'verifier', ok: false, error: parsed.error });
      tell();
    }),
    options.verifierConcurrency ?? 4,
  );
  if (signal.aborted) return { raw, reviewers, cancelled: true };

  tell({ stage: 'merging' });
  return { raw, reviewers, cancelled: false };
}

/** The `n`th finding's verifier: another agent kind than its finder's where there is one, in turn. */
export function verifierFor(finder: ReviewerSource | undefined, verifiers: readonly ReviewerSource[], n: number): ReviewerSource {
  const others = verifiers.filter((source) => source.label !== finder?.label);
  const choice = others.length ? others : verifiers;
  return choice[n % choice.length]!;
}

function timeout(options: FleetOptions): { timeoutMs?: number } {
  return options.turnTimeoutMs !== undefined ? { timeoutMs: options.turnTimeoutMs } : {};
}

/** Finders in their number order, then verifiers. */
function orderReviewers(reviewers: ReviewerReport[]): ReviewerReport[] {
  const finders = reviewers
    .filter((r) => r.role !== 'verifier')
    .sort((a, b) => a.label.localeCompare(b.label, undefined, { numeric: true }));
  return [...finders, ...reviewers.filter((r) => r.role === 'verifier')];
}

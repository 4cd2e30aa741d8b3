// The fleet's machinery, shared by the review of a change (fleet.ts) and the verification of a
// change against an approved plan (verifyAgainstPlan.ts): finder turns spread over the agents and
// run in parallel, then each claim they made checked by a verifier turn of another agent run
// (another agent kind than its finder's where there is one), a bounded number at once. Every turn
// is a read-only session of its own (agentTurn.ts: timeouts, refusals, archiving, cancellation).
import { parseVerdictReply, type ParsedReply } from '../../core/review/finding';
import type { Verdict } from '../../core/review/merge';
import type { ReviewerReport } from '../../core/review/outcome';
import type { ReviewProgress } from '../../core/review/progress';
import type { SessionBackend } from '../../core/sessionBackend';
import { runAgentTurn } from './agentTurn';

export interface ReviewerSource {
  /** The agent's name for people: "Claude (ACP)". */
  label: string;
  backend: SessionBackend;
}

export interface TurnSettings {
  signal: AbortSignal;
  turnTimeoutMs?: number;
}

/** Who runs a fleet and how: the same for a review and for a verification against a plan. */
export interface FleetSettings extends TurnSettings {
  /** Agents that find; finder runs are spread over them in turn. */
  sources: readonly ReviewerSource[];
  finders: number;
  /**
   * Agents that verify (default: the finders' agents). Naming them lets finders of one kind be
   * checked by another kind, e.g. Codex finding and Claude verifying.
   */
  verifiers?: readonly ReviewerSource[];
  /** Verifier runs at once. */
  verifierConcurrency?: number;
  onProgress?: (progress: ReviewProgress) => void;
}

/** One finder's parsed reply: `label` is the run's name ("Claude (ACP) #2"), what its claims are found by. */
export interface FinderReply<T> {
  label: string;
  source: ReviewerSource;
  reply: ParsedReply<T>;
}

export interface FinderRuns<T> extends TurnSettings {
  sources: readonly ReviewerSource[];
  total: number;
  /** The session's title for the `n`th run (1-based). */
  title: (n: number) => string;
  prompt: string;
  parse: (text: string) => ParsedReply<T>;
  /** How many claims a reply holds, for its reviewer report. */
  count: (value: T) => number;
  /** Reports of every run, in order of finishing: a failed run is named with its reason. */
  reviewers: ReviewerReport[];
  /** Each run as it finishes, so its claims count in the progress at once. */
  onReply?: (finder: FinderReply<T>) => void;
}

export async function runFinders<T>(options: FinderRuns<T>): Promise<FinderReply<T>[]> {
  const { sources, signal } = options;
  if (!sources.length) throw new Error('A review needs at least one agent to review with.');
  return Promise.all(
    Array.from({ length: options.total }, async (_, i): Promise<FinderReply<T>> => {
      const source = sources[i % sources.length]!;
      const label = `${source.label} #${i + 1}`;
      const turn = await runAgentTurn({
        backend: source.backend,
        title: options.title(i + 1),
        prompt: options.prompt,
        signal,
        ...timeout(options),
      });
      const reply = turn.ok ? options.parse(turn.text) : turn;
      options.reviewers.push(
        reply.ok
          ? { label, role: 'finder', ok: true, findings: options.count(reply.value) }
          : { label, role: 'finder', ok: false, error: reply.error },
      );
      const finder = { label, source, reply };
      options.onReply?.(finder);
      return finder;
    }),
  );
}

export interface VerifierRuns<C> extends TurnSettings {
  /** Agents that verify (the finders' agents unless others are named). */
  verifiers: readonly ReviewerSource[];
  /** The finder runs, to verify each claim by another agent than the one that found it. */
  finders: ReadonlyArray<FinderReply<unknown>>;
  foundBy: (claim: C) => string;
  /** The session's title for the `n`th verification (1-based). */
  title: (n: number) => string;
  prompt: (claim: C) => string;
  /** Names the claim in a failed verifier's report: "finding f3", "step 3". */
  name: (claim: C) => string;
  concurrency?: number;
  reviewers: ReviewerReport[];
  /** Each claim's verdict as it arrives; a failed run is a `failed` verdict with its reason. */
  onVerdict: (claim: C, verdict: Verdict) => void;
}

/** One verifier turn per claim, at most `concurrency` at once; stops starting new ones on a cancel. */
export async function verifyClaims<C>(claims: readonly C[], options: VerifierRuns<C>): Promise<void> {
  const { signal } = options;
  const finderSource = new Map(options.finders.map((finder) => [finder.label, finder.source]));
  await pool(
    claims.map((claim, n) => async () => {
      if (signal.aborted) return;
      const source = verifierFor(finderSource.get(options.foundBy(claim)), options.verifiers, n);
      const label = `${source.label} verifier`;
      const turn = await runAgentTurn({
        backend: source.backend,
        title: options.title(n + 1),
        prompt: options.prompt(claim),
        signal,
        ...timeout(options),
      });
      const parsed = turn.ok ? parseVerdictReply(turn.text) : turn;
      if (!parsed.ok)
        options.reviewers.push({ label: `${label} (${options.name(claim)})`, role: 'verifier', ok: false, error: parsed.error });
      options.onVerdict(
        claim,
        parsed.ok
          ? { by: label, verdict: parsed.value.verdict, reason: parsed.value.reason }
          : { by: label, verdict: 'failed', reason: parsed.error },
      );
    }),
    options.concurrency ?? 4,
  );
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

/** The `n`th claim's verifier: another agent kind than its finder's where there is one, in turn. */
export function verifierFor(finder: ReviewerSource | undefined, verifiers: readonly ReviewerSource[], n: number): ReviewerSource {
  const others = verifiers.filter((source) => source.label !== finder?.label);
  const choice = others.length ? others : verifiers;
  return choice[n % choice.length]!;
}

function timeout(options: TurnSettings): { timeoutMs?: number } {
  return options.turnTimeoutMs !== undefined ? { timeoutMs: options.turnTimeoutMs } : {};
}

/** Finders in their number order, then verifiers. */
export function orderReviewers(reviewers: readonly ReviewerReport[]): ReviewerReport[] {
  const finders = reviewers
    .filter((r) => r.role !== 'verifier')
    .sort((a, b) => a.label.localeCompare(b.label, undefined, { numeric: true }));
  return [...finders, ...reviewers.filter((r) => r.role === 'verifier')];
}

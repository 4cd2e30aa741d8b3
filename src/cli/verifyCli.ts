// ultraplan-review --against-plan PLAN.md [--since REV]: the change since REV verified against an
// approved plan (docs/execution.md "Verification"). Prints each step's verdict with its evidence
// and who verified it; exit 0 every step done, 1 a step missing or done differently (or, with
// --fail-on out-of-plan, a change no step asked for), 2 the verification failed.
import { readFile } from 'node:fs/promises';
import { errorMessage } from '../core/errors';
import { verificationDetail, verificationExitCode, verificationHeadline } from '../core/execution/verificationOutcome';
import { stepReports, verificationReportText } from '../core/execution/verificationReport';
import { readPlanSteps } from '../core/execution/steps';
import { progressLine } from '../core/review/progress';
import type { ReviewerSource } from '../client/review/fleetRunner';
import { collectChange, defaultSinceRevision, repositoryRoot, ReviewChangeError, type CollectedChange } from '../client/review/gitChange';
import { verifyAgainstPlan } from '../client/review/verifyAgainstPlan';

export const VERIFY_HELP = `Verify against a plan:
  --against-plan FILE the approved plan (markdown): finders judge each of its steps done, done
                      differently or missing on the change, and name changes no step asked for;
                      each claim is checked by a verifier of another run
  --since REV         the change since REV, with uncommitted work (default: HEAD's merge-base
                      with the branch's upstream, or HEAD when the branch has no upstream)
  --untracked         include untracked files (default: left out)
  --fail-on out-of-plan  also exit 1 when a change is not in the plan
  Exit codes: 0 every step verified done; 1 a step missing or done differently; 2 the
  verification failed (no agent, every finder failed, nothing to verify).
`;

export interface VerifyCliOptions {
  planFile: string;
  folder: string;
  since?: string;
  includeUntracked: boolean;
  failOnOutOfPlan: boolean;
  json: boolean;
  sources: readonly ReviewerSource[];
  verifiers: readonly ReviewerSource[];
  finders: number;
  signal: AbortSignal;
  stdout: (text: string) => void;
  log: (line: string) => void;
}

export async function runVerifyCli(options: VerifyCliOptions): Promise<number> {
  const { signal, log } = options;
  let plan: string;
  try {
    plan = await readFile(options.planFile, 'utf8');
  } catch (error) {
    log(`ultraplan-review: cannot read the plan ${options.planFile}: ${errorMessage(error)}`);
    return 2;
  }
  let change: CollectedChange | undefined;
  let failure: string | undefined;
  let since: { rev: string; why: string } | undefined;
  try {
    const root = await repositoryRoot(options.folder, signal);
    since = options.since ? { rev: options.since, why: 'named with --since' } : await defaultSinceRevision(root, signal);
    log(`verifying the changes since ${since.rev} (${since.why}) against ${options.planFile}`);
    change = await collectChange(root, { kind: 'since', rev: since.rev, includeUntracked: options.includeUntracked }, undefined, signal);
  } catch (error) {
    if (!(error instanceof ReviewChangeError)) throw error;
    failure = error.message;
  }
  let lastLine = '';
  const { outcome: told, outline } = change
    ? await verifyAgainstPlan({
        plan,
        change,
        sources: options.sources,
        ...(options.verifiers.length ? { verifiers: options.verifiers } : {}),
        finders: options.finders,
        signal,
        onProgress: (progress) => {
          const line = progressLine(progress);
          if (line !== lastLine) log((lastLine = line));
        },
      })
    : { outcome: { kind: 'failed' as const, reason: failure ?? 'no change to verify', reviewers: [] }, outline: readPlanSteps(plan) };
  const exitCode = verificationExitCode(told, { failOnOutOfPlan: options.failOnOutOfPlan });
  if (change?.withheld.length) log(`Left out as secrets (never sent): ${change.withheld.join(', ')}`);
  const steps = stepReports(outline, told);
  options.stdout(
    options.json
      ? `${JSON.stringify(
          {
            outcome: told.kind,
            headline: verificationHeadline(told),
            details: verificationDetail(told),
            plan: options.planFile,
            since: since ?? null,
            scope: change?.scopeText ?? null,
            withheld: change?.withheld ?? [],
            steps,
            outOfPlan: told.kind === 'verified' ? told.outOfPlan : [],
            reviewers: told.reviewers,
            exitCode,
          },
          null,
          2,
        )}\n`
      : verificationReportText(told, steps, change?.scopeText),
  );
  return exitCode;
}

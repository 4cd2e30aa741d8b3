// Retention: archived sessions are deleted once they have been archived longer than
// --retain-archived-days (their events and journals with them); audit rows, where a store keeps
// them, only once older than --retain-audit-days. Each replica runs the sweep on a timer; the
// store makes sure one sweeps at a time (PostgreSQL: an advisory lock).
import { errorMessage } from '../../core/errors';

export interface RetentionPolicy {
  /** Days an archived session is kept; null keeps it for good. */
  archivedDays: number | null;
  /** Days an audit row is kept; null keeps it for good. */
  auditDays: number | null;
}

/** What a sweep deletes: sessions archived before, audit rows written before (null: none). */
export interface RetentionCutoffs {
  archivedBefore: Date | null;
  auditBefore: Date | null;
}

export interface SweepResult {
  sessions: number;
  auditRows: number;
}

export interface Sweepable {
  /** Deletes what the cutoffs say; null when another process is sweeping now. */
  sweep(cutoffs: RetentionCutoffs): Promise<SweepResult | null>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
export const RETENTION_INTERVAL_MS = 60 * 60 * 1000;

export function retentionCutoffs(policy: RetentionPolicy, now: Date): RetentionCutoffs {
  const before = (days: number | null) => (days === null ? null : new Date(now.getTime() - days * DAY_MS));
  return { archivedBefore: before(policy.archivedDays), auditBefore: before(policy.auditDays) };
}

/**
 * Sweeps now and then every `intervalMs`, one sweep at a time; answers the stop. `now`: the
 * clock (tests move it).
 */
export function startRetention(
  store: Sweepable,
  policy: RetentionPolicy,
  log: (line: string) => void,
  options: { intervalMs?: number; now?: () => Date; describe?: (result: SweepResult) => string } = {},
): () => void {
  if (policy.archivedDays === null && policy.auditDays === null) return () => {};
  const now = options.now ?? (() => new Date());
  let running: Promise<void> | undefined;
  const sweep = () => {
    running ??= store
      .sweep(retentionCutoffs(policy, now()))
      .then((result) => {
        if (result && (result.sessions > 0 || result.auditRows > 0)) {
          log(
            `retention: ${options.describe?.(result) ?? `deleted ${result.sessions} archived session(s) and ${result.auditRows} audit row(s)`}`,
          );
        }
      })
      .catch((err: unknown) => log(`retention: the sweep failed (${errorMessage(err)}); trying again later`))
      .finally(() => (running = undefined));
  };
  sweep();
  const timer = setInterval(sweep, options.intervalMs ?? RETENTION_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

// Measuring helpers for bench/*.bench.ts: repeat a measurement, keep every sample, report
// median/min/max (the machine's noise is part of the answer), and compare against a baseline
// measured in the same run. Benchmarks print; they never pass or fail on a number.

export type Better = 'higher' | 'lower';

export interface BenchResult {
  /** Unique within its bench file, e.g. "ingest: ours". */
  name: string;
  /** e.g. "events/s", "MB", "ms". */
  unit: string;
  better: Better;
  samples: number[];
  median: number;
  min: number;
  max: number;
  /** Name of the result (same file) this one is compared against. */
  baseline?: string;
  /** median / baseline's median. */
  ratio?: number;
  /** One line on what was measured, for the table and the JSON. */
  note?: string;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no samples');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function result(
  name: string,
  unit: string,
  better: Better,
  samples: readonly number[],
  extra: { baseline?: string; note?: string } = {},
): BenchResult {
  return {
    name,
    unit,
    better,
    samples: [...samples],
    median: median(samples),
    min: Math.min(...samples),
    max: Math.max(...samples),
    ...extra,
  };
}

/**
 * Runs `sample` `runs` times (after `warmup` unrecorded runs) and returns what each run
 * reported. The sample function measures itself, so it can time only the part that matters
 * and return any quantity (a rate, bytes, ms).
 */
export async function repeat(runs: number, sample: (run: number) => number | Promise<number>, warmup = 0): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await sample(-1 - i);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(await sample(i));
  return samples;
}

/** Milliseconds a function takes, with the high-resolution clock. */
export async function timeMs(fn: () => unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Full garbage collection; the harness runs node with --expose-gc. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('Run with node --expose-gc (npm run bench does).');
  gc();
  gc();
}

/** Fills in `ratio` for results that name a baseline. */
export function withRatios(results: BenchResult[]): BenchResult[] {
  const byName = new Map(results.map((r) => [r.name, r]));
  return results.map((r) => {
    if (r.baseline === undefined) return r;
    const base = byName.get(r.baseline);
    if (base === undefined) throw new Error(`${r.name}: baseline "${r.baseline}" is not in the same file`);
    return { ...r, ratio: r.median / base.median };
  });
}

export function formatNumber(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (abs >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  if (abs >= 100) return n.toFixed(0);
  if (abs >= 1) return n.toFixed(2);
  return n.toPrecision(3);
}

/** A plain-text table: one row per result, ratios against the baseline where there is one. */
export function formatTable(results: readonly BenchResult[]): string {
  const header = ['benchmark', 'unit', 'median', 'min', 'max', 'vs baseline'];
  const rows = results.map((r) => [
    r.name,
    `${r.unit} (${r.better} is better)`,
    formatNumber(r.median),
    formatNumber(r.min),
    formatNumber(r.max),
    r.ratio === undefined ? '' : `${r.ratio.toFixed(3)}x ${r.baseline}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 2 && i <= 4 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

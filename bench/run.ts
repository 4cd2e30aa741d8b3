// The benchmark runner: `npm run bench` (all files) or `npm run bench -- scanner` (the files
// whose name contains "scanner").
//
// Adding a benchmark: create bench/<topic>.bench.ts exporting
//   export const title = 'What this measures';            // optional
//   export async function run(): Promise<BenchResult[]>   // BenchResult from ./measure
// Build each result with `result(name, unit, better, samples, { baseline, note })` from
// ./measure; name a baseline measured in the same file and the runner prints the ratio. Take
// several samples (median of 5 is the house habit) and measure the alternative in the same run.
// Results are printed as a table and written to test-output/bench-results.json (ignored by git).
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatTable, withRatios, type BenchResult } from './measure';

interface BenchModule {
  title?: string;
  run(): Promise<BenchResult[]>;
}

function isBenchModule(m: unknown): m is BenchModule {
  return typeof m === 'object' && m !== null && typeof (m as { run?: unknown }).run === 'function';
}

async function main(): Promise<void> {
  const filters = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const benchDir = __dirname;
  const files = readdirSync(benchDir)
    .filter((f) => f.endsWith('.bench.ts'))
    .filter((f) => filters.length === 0 || filters.some((w) => f.includes(w)))
    .sort();
  if (files.length === 0) {
    console.error(`No bench/*.bench.ts file matches ${JSON.stringify(filters)}.`);
    process.exitCode = 1;
    return;
  }

  const report: Array<{ file: string; title?: string; results: BenchResult[] }> = [];
  for (const file of files) {
    const loaded: unknown = await import(pathToFileURL(path.join(benchDir, file)).href);
    // tsx may hand a CommonJS module's exports over as `default`.
    const mod = isBenchModule(loaded) ? loaded : (loaded as { default?: unknown }).default;
    if (!isBenchModule(mod)) throw new Error(`${file} does not export run(): Promise<BenchResult[]>`);
    console.log(`\n== ${file}${mod.title ? `: ${mod.title}` : ''}`);
    const results = withRatios(await mod.run());
    console.log(formatTable(results));
    for (const r of results) if (r.note) console.log(`  ${r.name}: ${r.note}`);
    report.push({ file, ...(mod.title ? { title: mod.title } : {}), results });
  }

  const outDir = path.resolve(benchDir, '..', 'test-output');
  mkdirSync(outDir, { recursive: true });
  const outFile = path.join(outDir, 'bench-results.json');
  const machine = {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
  };
  writeFileSync(outFile, `${JSON.stringify({ date: new Date().toISOString(), machine, files: report }, null, 2)}\n`);
  console.log(`\nWritten: ${path.relative(process.cwd(), outFile)}`);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  // The benches' code-server windows share one Chromium, which would keep this process alive.
  .finally(async () => (await import('../test/e2e/harness/browser')).closeSharedBrowser());

// Reads what the in-host suite wrote and turns any failure into a failure of the outer test,
// with every failing test's title and error printed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hostSuiteResultsSchema, type HostSuiteResults } from '../runner-extension/src/wire';
import { outputDir } from './paths';
import { waitFor } from '../../support/wait';

/** Waits (bounded) for the results file of the env-started in-host suite; keeps a copy in test-output. */
export async function readHostResults(
  resultsFile: string | undefined,
  options: { suite?: string; timeoutMs?: number } = {},
): Promise<HostSuiteResults> {
  if (!resultsFile) throw new Error('no in-host suite was started: pass hostSuite to startCodeServer/startWorkbench');
  const text = await waitFor(() => (fs.existsSync(resultsFile) ? fs.readFileSync(resultsFile, 'utf8') : undefined), {
    timeoutMs: options.timeoutMs ?? 5 * 60_000,
    intervalMs: 250,
    message: `in-host suite results in ${resultsFile}`,
  });
  const results = hostSuiteResultsSchema.parse(JSON.parse(text));
  fs.writeFileSync(
    path.join(outputDir(options.suite ?? 'e2e'), `host-results-${results.suite.replace(/\W+/g, '_')}.json`),
    JSON.stringify(results, null, 2),
  );
  return results;
}

export function formatHostResults(results: HostSuiteResults): string {
  const lines = [
    `in-host suite ${results.suite}: ${results.passed} passed, ${results.failed} failed, ${results.pending} pending (${results.durationMs} ms)`,
  ];
  if (results.loadError) lines.push(`  could not run: ${results.loadError}`);
  for (const test of results.tests) {
    const mark = test.state === 'passed' ? 'ok  ' : test.state === 'failed' ? 'FAIL' : 'skip';
    lines.push(`  ${mark} ${test.fullTitle}`);
    if (test.error) lines.push(`       ${(test.error.stack ?? test.error.message).split('\n').join('\n       ')}`);
  }
  return lines.join('\n');
}

/** Prints every in-host test, then throws listing each failure (or a load error, or no tests at all). */
export function assertHostSuitePassed(results: HostSuiteResults, options: { print?: boolean } = {}): void {
  if (options.print ?? true) console.log(formatHostResults(results));
  const failures = results.tests.filter((t) => t.state === 'failed');
  if (results.loadError || failures.length > 0 || results.failed > 0 || results.passed === 0) {
    const details = [
      ...(results.loadError ? [`could not run: ${results.loadError}`] : []),
      ...failures.map((t) => `${t.fullTitle}: ${t.error?.message ?? 'failed'}`),
      ...(results.passed === 0 && !results.loadError && failures.length === 0 ? ['no in-host test passed'] : []),
    ];
    throw new Error(`in-host suite ${results.suite} failed:\n  ${details.join('\n  ')}`);
  }
}

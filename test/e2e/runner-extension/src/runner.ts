// The test runner extension: inside code-server's extension host it (1) answers probe requests
// from the e2e harness and (2) runs the in-host mocha suite named by ULTRAPLAN_TEST_SUITE once,
// writing the results where ULTRAPLAN_TEST_RESULTS says. Under @vscode/test-electron the same
// bundle is the extensionTestsPath: `run()` runs the suites and rejects on any failure.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { startProbe } from './probe';
import { listBundledSuites, resolveSuiteFile, runSuiteFile, writeResultsFile } from './suiteRunner';
import { RUNNER_ENV, type HostSuiteResults } from './wire';

function log(line: string): void {
  console.log(`[ultraplan-test-runner] ${line}`);
}

function runNamedSuite(suite: string, grep: string | undefined): Promise<HostSuiteResults> {
  return runSuiteFile(suite, resolveSuiteFile(suite, __dirname), grep ? { grep } : {});
}

/** Runs the env-named suite at most once per code-server start, even across window reloads. */
async function autorun(suite: string, resultsFile: string): Promise<void> {
  try {
    fs.writeFileSync(`${resultsFile}.started`, String(process.pid), { flag: 'wx' });
  } catch {
    log(`suite ${suite} already started in an earlier extension host; not running it again`);
    return;
  }
  log(`running in-host suite ${suite}`);
  let results: HostSuiteResults;
  try {
    results = await runNamedSuite(suite, process.env[RUNNER_ENV.grep] || undefined);
  } catch (err) {
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    results = {
      suite,
      file: resolveSuiteFile(suite, __dirname),
      passed: 0,
      failed: 1,
      pending: 0,
      durationMs: 0,
      tests: [],
      loadError: message,
    };
  }
  writeResultsFile(resultsFile, results);
  log(`suite ${suite}: ${results.passed} passed, ${results.failed} failed, ${results.pending} pending`);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const probeFile = process.env[RUNNER_ENV.probeFile];
  const token = process.env[RUNNER_ENV.probeToken];
  if (probeFile && token) {
    context.subscriptions.push(await startProbe({ probeFile, token, log, handlers: { runSuite: runNamedSuite } }));
  }
  const suite = process.env[RUNNER_ENV.suite];
  const resultsFile = process.env[RUNNER_ENV.results];
  if (suite && resultsFile) {
    // Not awaited: activation must finish so the workbench (and the suite's own waits) can go on.
    void autorun(suite, resultsFile);
  }
}

export function deactivate(): void {}

/** @vscode/test-electron entry: the named suite, or every bundled one. */
export async function run(): Promise<void> {
  const named = process.env[RUNNER_ENV.suite];
  const suites = named ? [named] : listBundledSuites(__dirname);
  if (suites.length === 0) throw new Error('no in-host suites bundled (test/e2e/host/*.host.ts)');
  const failures: string[] = [];
  for (const suite of suites) {
    const results = await runNamedSuite(suite, process.env[RUNNER_ENV.grep] || undefined);
    log(`suite ${suite}: ${results.passed} passed, ${results.failed} failed, ${results.pending} pending`);
    if (results.loadError) failures.push(`${suite}: ${results.loadError}`);
    for (const test of results.tests) {
      if (test.state === 'failed') failures.push(`${suite}: ${test.fullTitle}: ${test.error?.message ?? 'failed'}`);
    }
  }
  if (failures.length > 0) throw new Error(`in-host suites failed:\n${failures.join('\n')}`);
}

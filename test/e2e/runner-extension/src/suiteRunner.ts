// Runs one bundled mocha suite inside the extension host with mocha's programmatic API and
// collects a result per test. The suite uses the bdd globals (describe/it) and `vscode` directly.
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import type { HostSuiteResults, HostTestResult } from './wire';

const DEFAULT_TEST_TIMEOUT_MS = 60_000;

/** `smoke` -> <out>/suites/smoke.js; an absolute path is taken as it is. */
export function resolveSuiteFile(suite: string, outDir: string): string {
  return path.isAbsolute(suite) ? suite : path.join(outDir, 'suites', `${suite}.js`);
}

export function listBundledSuites(outDir: string): string[] {
  const dir = path.join(outDir, 'suites');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.js'))
    .map((name) => name.slice(0, -'.js'.length))
    .sort();
}

function errorParts(err: unknown): { message: string; stack?: string } {
  if (err instanceof Error) return { message: err.message, ...(err.stack ? { stack: err.stack } : {}) };
  return { message: String(err) };
}

export async function runSuiteFile(
  suite: string,
  file: string,
  options: { grep?: string; timeoutMs?: number } = {},
): Promise<HostSuiteResults> {
  const started = Date.now();
  const base = { suite, file, passed: 0, failed: 0, pending: 0, tests: [] as HostTestResult[] };
  if (!fs.existsSync(file)) {
    return {
      ...base,
      failed: 1,
      durationMs: 0,
      loadError: `in-host suite bundle not found: ${file} (is there a test/e2e/host/${suite}.host.ts, and was the runner built?)`,
    };
  }
  // A suite may run twice in one host (probe runSuite); a cached module would register no tests.
  delete require.cache[require.resolve(file)];
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: options.timeoutMs ?? DEFAULT_TEST_TIMEOUT_MS, reporter: 'spec' });
  if (options.grep) mocha.grep(options.grep);
  mocha.addFile(file);
  const tests: HostTestResult[] = [];
  const { EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING } = Mocha.Runner.constants;
  try {
    await new Promise<void>((resolve) => {
      const runner = mocha.run(() => resolve());
      runner.on(EVENT_TEST_PASS, (test: Mocha.Test) => {
        tests.push({ fullTitle: test.fullTitle(), state: 'passed', ...(test.duration !== undefined ? { durationMs: test.duration } : {}) });
      });
      // Also fires for failing hooks (before/after), whose "test" is the hook.
      runner.on(EVENT_TEST_FAIL, (test: Mocha.Runnable, err: unknown) => {
        tests.push({
          fullTitle: test.fullTitle(),
          state: 'failed',
          error: errorParts(err),
          ...(test.duration !== undefined ? { durationMs: test.duration } : {}),
        });
      });
      runner.on(EVENT_TEST_PENDING, (test: Mocha.Test) => {
        tests.push({ fullTitle: test.fullTitle(), state: 'pending' });
      });
    });
  } catch (err) {
    // Thrown synchronously while loading the file (syntax error, failing import).
    const { message, stack } = errorParts(err);
    return { ...base, failed: 1, durationMs: Date.now() - started, tests, loadError: stack ?? message };
  } finally {
    try {
      mocha.dispose();
    } catch {
      // A file that failed to load leaves mocha "running"; the load error above is what matters.
    }
  }
  const count = (state: HostTestResult['state']) => tests.filter((t) => t.state === state).length;
  const results: HostSuiteResults = {
    ...base,
    passed: count('passed'),
    failed: count('failed'),
    pending: count('pending'),
    durationMs: Date.now() - started,
    tests,
  };
  if (tests.length === 0) {
    results.failed = 1;
    results.loadError = `in-host suite ${suite} registered no tests${options.grep ? ` matching ${options.grep}` : ''}`;
  }
  return results;
}

/** Written to a temporary name first, so a reader never sees half a file. */
export function writeResultsFile(file: string, results: HostSuiteResults): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(results, null, 2));
  fs.renameSync(temp, file);
}

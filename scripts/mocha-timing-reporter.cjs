// Mocha's spec reporter, then where the time went: the slowest files (their tests plus their
// hooks, where a suite's window launch or server start-up is counted), the slowest tests and hooks.
// Works in --parallel mode too, where each file's events arrive in one batch when it is done:
// there the figures are the durations mocha measured in the worker, summed per file.
//
//   --reporter scripts/mocha-timing-reporter.cjs [--reporter-option json=<file>] [--reporter-option top=<n>]
//
// The json option also writes every file's, test's and hook's duration, to compare two runs.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha/lib/mocha.cjs');

const { EVENT_HOOK_END, EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_END } = Mocha.Runner.constants;

const seconds = (ms) => (ms / 1000).toFixed(1).padStart(6);

class TimingReporter extends Mocha.reporters.Spec {
  constructor(runner, options = {}) {
    super(runner, options);
    const reporterOptions = options.reporterOption ?? options.reporterOptions ?? {};
    const top = Number(reporterOptions.top) || 12;
    const jsonFile = reporterOptions.json;
    const started = Date.now();
    const cwd = process.cwd();
    /** file -> { tests, testMs, hookMs, wallMs } */
    const files = new Map();
    const tests = [];
    const hooks = [];
    const openSuites = new Map();

    const relative = (file) => (file ? path.relative(cwd, file) : '(no file)');
    const entry = (file) => {
      const key = relative(file);
      if (!files.has(key)) files.set(key, { file: key, tests: 0, testMs: 0, hookMs: 0, wallMs: undefined });
      return files.get(key);
    };

    // Wall time per file: only meaningful when mocha runs the files one after another in this process.
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.file && suite.parent?.root) openSuites.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const at = openSuites.get(suite);
      if (at === undefined || runner.isParallelMode?.()) return;
      const e = entry(suite.file);
      e.wallMs = (e.wallMs ?? 0) + (Date.now() - at);
    });
    runner.on(EVENT_TEST_END, (test) => {
      const ms = test.duration ?? 0;
      const e = entry(test.file);
      e.tests += 1;
      e.testMs += ms;
      tests.push({ file: relative(test.file), title: test.fullTitle?.() ?? test.title, ms, state: test.state });
    });
    runner.on(EVENT_HOOK_END, (hook) => {
      const ms = hook.duration ?? 0;
      entry(hook.file).hookMs += ms;
      hooks.push({ file: relative(hook.file), title: hook.fullTitle?.() ?? hook.title, ms });
    });

    runner.once(EVENT_RUN_END, () => {
      const totalMs = Date.now() - started;
      const byFile = [...files.values()].map((f) => ({ ...f, busyMs: f.testMs + f.hookMs }));
      byFile.sort((a, b) => (b.wallMs ?? b.busyMs) - (a.wallMs ?? a.busyMs));
      const out = [];
      out.push('', `  where the time went (${(totalMs / 1000).toFixed(1)} s in all, ${byFile.length} files)`);
      out.push(`  slowest files: ${runner.isParallelMode?.() ? 'tests + hooks, seconds in their worker' : 'wall, tests, hooks, seconds'}`);
      for (const f of byFile.slice(0, top)) {
        const wall = f.wallMs === undefined ? '' : `${seconds(f.wallMs)} `;
        out.push(`    ${wall}${seconds(f.testMs)} ${seconds(f.hookMs)}  ${f.file} (${f.tests} tests)`);
      }
      out.push('  slowest tests (seconds):');
      for (const t of [...tests].sort((a, b) => b.ms - a.ms).slice(0, top)) out.push(`    ${seconds(t.ms)}  ${t.file}: ${t.title}`);
      out.push('  slowest hooks (seconds):');
      for (const h of [...hooks].sort((a, b) => b.ms - a.ms).slice(0, Math.ceil(top / 2)))
        out.push(`    ${seconds(h.ms)}  ${h.file}: ${h.title}`);
      process.stdout.write(`${out.join('\n')}\n`);
      if (jsonFile) {
        fs.mkdirSync(path.dirname(path.resolve(jsonFile)), { recursive: true });
        fs.writeFileSync(jsonFile, JSON.stringify({ totalMs, files: byFile, tests, hooks }, null, 2));
      }
    });
  }
}

module.exports = TimingReporter;

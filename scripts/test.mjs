#!/usr/bin/env node
// `npm test`: system deps -> code-server (cached) -> build -> .vsix -> the e2e tests on the engine
// floor, two files at a time, with the unit tests, typecheck, lint and format check beside them,
// and the e2e tests on the newest code-server after the first of those two runs ends. Each step
// is timed (wall and CPU seconds); mocha's runs end with their slowest files, tests and hooks
// (all of them in test-output/timings/). Keeps going after a failed typecheck or unit run (so one
// run shows everything), stops if the build fails (nothing after it could run). Ends with the
// line `N passed, N failed` summing unit and e2e tests; a failed step counts as one failure.
//
//   node scripts/test.mjs                 everything
//   node scripts/test.mjs --e2e [files]   deps, code-server, build, then only e2e (files optional),
//                                         one run after the other
//   --code-server=<version>               the e2e files on that code-server only (default: every
//                                         file on the engine floor, ON_NEWEST also on the newest)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureSystemDeps } from './ensure-system-deps.mjs';
import { setupCodeServer } from './setup-code-server.mjs';
import { setupAgents } from './setup-agents.mjs';

const require = createRequire(import.meta.url);
const codeServers = require('./code-server-config.cjs');

/**
 * The e2e files that also run on the newest code-server. All of them run on the engine floor; these
 * two cover what differs between VS Code versions (installing the .vsix and loading its ES module
 * graph, the palette, the in-host API suites, the webview panel and its messages, the status bar,
 * a reload) in about 3 of the 12 minutes `npm test` may take on 2 cores. The review loop, the
 * inbox and teleport passed there too when run by hand (`npm run test:e2e -- --code-server=4.139.1 <file>`).
 */
const ON_NEWEST = ['test/e2e/smoke.e2e.ts', 'test/e2e/embeddedDemo.e2e.ts'];

/** Mocha's spec reporter plus the slowest files, tests and hooks (and all of them in test-output/timings/). */
const TIMING_REPORTER = 'scripts/mocha-timing-reporter.cjs';
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const mochaBin = path.join(repoRoot, 'node_modules', 'mocha', 'bin', 'mocha.js');
const args = process.argv.slice(2);
const e2eOnly = args.includes('--e2e');
const e2eFiles = args.filter((a) => !a.startsWith('--'));
const onlyCodeServer = args.find((a) => a.startsWith('--code-server='))?.slice('--code-server='.length);

const summary = { passed: 0, failed: 0, pending: 0, failures: [] };

/**
 * Each failure of a mocha run in a line (its titles, the error's first line and what follows it: an
 * assertion's actual and expected values), from the failures mocha lists after its "N failing":
 * repeated in the summary, the last thing a run prints, so a log kept only by its tail still says
 * what failed and how.
 */
function failureHeads(text) {
  const at = [...text.matchAll(/^\s*\d+ failing\b.*$/gm)].at(-1);
  if (!at) return [];
  const heads = [];
  for (const block of text.slice(at.index + at[0].length).split(/\n(?=\s{2}\d+\) )/)) {
    const lines = block
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    if (!/^\d+\) /.test(lines[0] ?? '')) continue;
    const error = lines.findIndex((l) => /^\w*Error\b|^AssertionError|^Error:/.test(l));
    const title = lines.slice(0, error < 0 ? 3 : Math.min(error, 4)).join(' ');
    const how = lines.slice(error, error + 4).filter((line) => !line.startsWith('at '));
    heads.push(`${title}${error < 0 ? '' : ` -- ${how.join(' | ')}`}`.slice(0, 700));
  }
  return heads;
}
const steps = [];

function stripAnsi(text) {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

/** Clock ticks a second for /proc's CPU times (USER_HZ, 100 on every Linux we run on). */
const CLOCK_TICKS = 100;

/**
 * CPU seconds (user + sys) of this process's children that have ended, or undefined off Linux. The
 * figure grows when a child is reaped, by that child's CPU and that of the descendants it reaped
 * (processes orphaned before that, such as a detached session service, are not counted).
 */
function reapedChildrenCpu() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // After "pid (comm) ": state is field 3; cutime and cstime are fields 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

let lastReapedCpu = reapedChildrenCpu();

/** The CPU of the child (or children) reaped since the last call: called as each child exits. */
function cpuOfReaped() {
  const now = reapedChildrenCpu();
  const spent = now === undefined || lastReapedCpu === undefined ? undefined : now - lastReapedCpu;
  lastReapedCpu = now;
  return spent;
}

const formatCpu = (cpu) => (cpu === undefined ? 'CPU not measured' : `${cpu.toFixed(1)} s CPU`);

/** Runs a command with its output shown as it comes (unless `quiet`) and kept for counting; `cpu` is its user + sys seconds. */
function run(command, commandArgs, env = {}, { quiet = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (!quiet) process.stdout.write(chunk);
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
      if (!quiet) process.stderr.write(chunk);
    });
    child.on('error', (err) => resolve({ code: 1, output: `${output}\n${err.message}` }));
    let cpu;
    child.on('exit', () => {
      cpu = cpuOfReaped();
    });
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output, cpu }));
  });
}

/** An action's answer: whether it passed, or `{ ok, cpu, output }` (CPU seconds of its commands; output kept to show later). */
function settle(result) {
  return typeof result === 'object' && result !== null ? result : { ok: result };
}

function finish(name, ok, started, cpu) {
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  steps.push({ name, ok, seconds, cpu });
  console.log(`=== ${name}: ${ok ? 'ok' : 'FAILED'} in ${seconds} s${cpu === undefined ? '' : ` (${formatCpu(cpu)})`}`);
}

/**
 * Runs one timed step, its output shown as it comes. `action(false)` answers whether it passed, or
 * `{ ok, cpu }` with the CPU seconds of the commands it ran (shown beside the wall time: on a
 * shared machine, wall time says little).
 */
async function step(name, action) {
  const started = Date.now();
  console.log(`\n=== ${name}`);
  let result;
  try {
    result = settle(await action(false));
  } catch (err) {
    console.error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    result = { ok: false };
  }
  finish(name, result.ok, started, result.cpu);
  return result.ok;
}

/**
 * Starts a step that runs beside others: `action(true)` keeps its output, which `show()` prints
 * whole once the step is done, so the lines of steps running side by side do not mix. `done`
 * settles when it has finished (for a step that waits on it). With `after`, it starts once that
 * settles (its time counts from then).
 */
function besideStep(name, action, after = Promise.resolve()) {
  const done = (async () => {
    await after;
    const started = Date.now();
    try {
      return { ...settle(await action(true)), started, ended: Date.now() };
    } catch (err) {
      return { ok: false, output: `${name}: ${err instanceof Error ? err.message : String(err)}\n`, started, ended: Date.now() };
    }
  })();
  return {
    done,
    async show() {
      const { ok, cpu, output = '', started, ended } = await done;
      console.log(`\n=== ${name} (ran beside the e2e tests; its output, kept until now)`);
      process.stdout.write(output);
      const seconds = ((ended - started) / 1000).toFixed(1);
      steps.push({ name, ok, seconds, cpu });
      console.log(`=== ${name}: ${ok ? 'ok' : 'FAILED'} in ${seconds} s${cpu === undefined ? '' : ` (${formatCpu(cpu)})`}`);
      return ok;
    },
  };
}

/** A step's action that runs mocha and adds its "N passing / N failing / N pending" to the summary. */
function mochaAction(mochaArgs, env = {}) {
  return async (quiet) => {
    const { code, output, cpu } = await run(process.execPath, [mochaBin, ...mochaArgs], env, { quiet });
    const text = stripAnsi(output);
    // The last match: mocha prints its summary at the end, after anything a test logged.
    const count = (word) => Number([...text.matchAll(new RegExp(`^\\s*(\\d+) ${word}\\b`, 'gm'))].at(-1)?.[1] ?? 0);
    const passed = count('passing');
    const failed = count('failing');
    summary.passed += passed;
    summary.pending += count('pending');
    summary.failed += failed;
    summary.failures.push(...failureHeads(text));
    // A crash before mocha's summary (no tests found, a syntax error) still has to show as a failure.
    if (code !== 0 && failed === 0) summary.failed += 1;
    return { ok: code === 0, cpu, output };
  };
}

/**
 * `files` longest first by an earlier run's timings (test-output/timings/<timings>, written by the
 * timing reporter), so that two at a time the run does not end on one long file; by size when
 * there are none (a clean clone). Files that run did not time (new ones) go first: they may be long.
 */
function longestFirst(files, timings) {
  let last = new Map();
  try {
    const earlier = JSON.parse(readFileSync(path.join(repoRoot, 'test-output', 'timings', timings), 'utf8'));
    last = new Map(earlier.files.map((f) => [f.file, f.wallMs ?? f.busyMs]));
  } catch {
    // no earlier run here
  }
  const weight = (file) => last.get(file) ?? statSync(path.join(repoRoot, file)).size;
  const measured = (file) => (last.has(file) ? 0 : 1);
  return files.sort((a, b) => measured(b) - measured(a) || weight(b) - weight(a) || a.localeCompare(b));
}

// The files a spec pattern of the form <folder>/**/*<suffix> names (the only form our spec lists use).
function filesOf(pattern) {
  const match = /^(.+)\/\*\*\/\*(\.[\w.]+)$/.exec(pattern);
  if (!match) throw new Error(`scripts/test.mjs expands only <folder>/**/*<suffix> patterns, not ${pattern}`);
  const [, folder, suffix] = match;
  return readdirSync(path.join(repoRoot, folder), { recursive: true })
    .map((name) => path.join(folder, String(name)))
    .filter((file) => file.endsWith(suffix));
}

/** Every e2e file, longest first. */
function e2eFilesLongestFirst(version) {
  return longestFirst(filesOf('test/e2e/**/*.e2e.ts'), `e2e-${version}.json`);
}

/**
 * test/unit.mocharc.json with its spec list as files, longest first (mocha would run them in the
 * order of its patterns, and a long file last keeps one worker busy alone at the end).
 */
function unitConfigLongestFirst() {
  const config = JSON.parse(readFileSync(path.join(repoRoot, 'test', 'unit.mocharc.json'), 'utf8'));
  config.spec = longestFirst([...new Set(config.spec.flatMap(filesOf))], 'unit.json');
  const file = path.join(repoRoot, 'test-output', 'timings', 'unit.mocharc.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
  return file;
}

/**
 * The mocha arguments of one e2e run: the files `specs` on code-server `version`, timed per file.
 * With `parallel`, two files at a time, each in a worker with its own window: a window mostly
 * waits (code-server, Chromium and the agents behind it use about half a core while a suite runs).
 */
function e2eArgs(version, specs, { parallel = false } = {}) {
  return [
    '--config',
    'test/e2e/.mocharc.json',
    '--reporter',
    TIMING_REPORTER,
    // The timings of a whole run order the next one (a run of named files would leave out the rest).
    ...(parallel || specs === ON_NEWEST ? ['--reporter-option', `json=test-output/timings/e2e-${version}.json`] : []),
    ...(parallel ? ['--parallel', '--jobs', '2'] : []),
    ...specs,
  ];
}

function e2eName(version) {
  return `e2e tests on code-server ${version} (VS Code ${codeServers.CODE_SERVERS[version]?.vscode ?? '?'}) + Chromium`;
}

/**
 * The in-host suites' own counts, for the log. They are not added to the closing line: each
 * in-host suite already passes or fails an e2e test, which is counted there.
 */
function reportHostSuites(since) {
  const root = path.join(repoRoot, 'test-output', 'e2e');
  if (!existsSync(root)) return;
  const totals = { passed: 0, failed: 0, suites: 0 };
  for (const dir of readdirSync(root)) {
    for (const name of readdirSync(path.join(root, dir)).filter((n) => n.startsWith('host-results-') && n.endsWith('.json'))) {
      const file = path.join(root, dir, name);
      if (statSync(file).mtimeMs < since) continue;
      try {
        const results = JSON.parse(readFileSync(file, 'utf8'));
        totals.passed += Number(results.passed) || 0;
        totals.failed += Number(results.failed) || 0;
        totals.suites += 1;
      } catch {
        // a results file we cannot read was already reported by its e2e test
      }
    }
  }
  if (totals.suites > 0) console.log(`(in-host suites: ${totals.suites}, their tests: ${totals.passed} passed, ${totals.failed} failed)`);
}

async function main() {
  const prepared =
    (await step('system packages', async () => {
      ensureSystemDeps();
      return true;
    })) &&
    (await step(`code-server ${Object.keys(codeServers.CODE_SERVERS).join(' and ')} (cached)`, async () => {
      await setupCodeServer();
      return true;
    })) &&
    (await step('ACP agents for the real-agent tests (cached)', async () => {
      await setupAgents(['claude', 'codex', 'gemini', 'qwen', 'copilot', 'opencode']);
      return true;
    })) &&
    (await step('build', async () => {
      const { code, cpu } = await run('npm', ['run', '--silent', 'build']);
      return { ok: code === 0, cpu };
    }));
  if (!prepared) {
    summary.failed += 1;
  } else {
    // The e2e suites run against the installed .vsix, packaged once here for all of them (first,
    // on its own: a few seconds, where beside the other steps it took a minute on a busy machine).
    const vsix = path.join(repoRoot, 'test-output', 'ultraplan-e2e.vsix');
    const packaged = await step('package (.vsix)', async () => {
      const { code, cpu } = await run(process.execPath, [path.join('scripts', 'package.mjs'), '--out', vsix]);
      return { ok: code === 0, cpu };
    });
    if (!packaged) summary.failed += 1;
    // Everything after that runs side by side where it can: the unit tests and the e2e tests
    // mostly wait (on servers, agents, code-server and Chromium), so the floor's e2e run, the
    // longest step, starts at once with the unit tests beside it and tsc, ESLint and Prettier one
    // after the other (three more processes at once only slowed the windows starting then), and
    // the newest code-server's e2e run follows whichever of the two test runs ends first. Only the
    // floor's e2e run prints as it goes; the others' output is kept and printed whole after it.
    const beside = [];
    let unitDone = Promise.resolve();
    if (!e2eOnly) {
      // Two files at a time, each in a worker of its own.
      const unit = besideStep('unit tests', mochaAction(['--config', unitConfigLongestFirst(), '--parallel', '--jobs', '2']));
      unitDone = unit.done;
      beside.push(unit);
      // tsc, ESLint (the layer rules of eslint.config.mjs) and Prettier's check, each with its
      // cache in test-output/cache: a clean clone has none and checks everything; a second run
      // checks again only what changed.
      const cache = path.join('test-output', 'cache');
      const checks = [
        ['typecheck', 'typecheck', ['--incremental', '--tsBuildInfoFile', path.join(cache, 'tsconfig.tsbuildinfo')]],
        ['lint', 'lint', ['--cache', '--cache-strategy', 'content', '--cache-location', path.join(cache, 'eslint')]],
        ['format', 'format:check', ['--cache', '--cache-strategy', 'content', '--cache-location', path.join(cache, 'prettier')]],
      ];
      let previous = Promise.resolve();
      for (const [name, script, cacheArgs] of checks) {
        const check = besideStep(
          name,
          async (quiet) => {
            const { code, output, cpu } = await run('npm', ['run', '--silent', script, '--', ...cacheArgs], {}, { quiet });
            if (code !== 0) summary.failed += 1;
            return { ok: code === 0, cpu, output };
          },
          previous,
        );
        previous = check.done;
        beside.push(check);
      }
    }
    const e2eStarted = Date.now();
    const e2eEnv = (version) => ({ ULTRAPLAN_E2E_VSIX: vsix, [codeServers.CODE_SERVER_ENV]: version });
    // The spec lists live here, not in test/e2e/.mocharc.json: mocha adds a config's spec to the
    // files named on the command line, so one named file would still run every suite.
    // Files named on the command line run one at a time; every file, two at a time.
    const all = (version) => [version, e2eFilesLongestFirst(version), { parallel: true }];
    const runs = onlyCodeServer
      ? [e2eFiles.length > 0 ? [onlyCodeServer, e2eFiles] : all(onlyCodeServer)]
      : e2eFiles.length > 0
        ? [[codeServers.FLOOR, e2eFiles]]
        : e2eOnly
          ? [all(codeServers.FLOOR), [codeServers.NEWEST, ON_NEWEST]]
          : [all(codeServers.FLOOR)];
    let floorDone;
    const floorEnded = new Promise((resolve) => (floorDone = resolve));
    if (packaged && !e2eOnly && !onlyCodeServer && e2eFiles.length === 0) {
      // The newest code-server's run, once the unit tests or the floor's e2e run are done (so no
      // more than two of the three run at once).
      const newest = Promise.race([unitDone, floorEnded]).then(() =>
        besideStep(e2eName(codeServers.NEWEST), mochaAction(e2eArgs(codeServers.NEWEST, ON_NEWEST), e2eEnv(codeServers.NEWEST))),
      );
      beside.push({ show: async () => (await newest).show() });
    }
    for (const [version, specs, options] of packaged ? runs : []) {
      await step(e2eName(version), mochaAction(e2eArgs(version, specs, options), e2eEnv(version)));
    }
    floorDone();
    for (const later of beside) await later.show();
    reportHostSuites(e2eStarted);
  }
  console.log('\n=== summary');
  for (const s of steps)
    console.log(`  ${s.ok ? 'ok    ' : 'FAILED'} ${s.name} (${s.seconds} s${s.cpu === undefined ? '' : `, ${formatCpu(s.cpu)}`})`);
  if (summary.pending > 0) console.log(`  ${summary.pending} pending`);
  for (const head of summary.failures) console.log(`  failed: ${head}`);
  console.log(`${summary.passed} passed, ${summary.failed} failed`);
  process.exit(steps.every((s) => s.ok) && summary.failed === 0 ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  console.log(`${summary.passed} passed, ${summary.failed + 1} failed`);
  process.exit(1);
});

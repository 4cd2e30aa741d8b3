#!/usr/bin/env node
// `npm test`: system deps -> code-server (cached) -> build -> typecheck, lint and format check beside
// unit tests -> .vsix -> e2e tests,
// in that order, each timed. Keeps going after a failed typecheck or unit run (so one run shows
// everything), stops if the build fails (nothing after it could run). Ends with the line
// `N passed, N failed` summing unit and e2e tests; a failed step counts as one failure.
//
//   node scripts/test.mjs                 everything
//   node scripts/test.mjs --e2e [files]   deps, code-server, build, then only e2e (files optional)
//   --code-server=<version>               the e2e files on that code-server only (default: every
//                                         file on the engine floor, ON_NEWEST also on the newest)
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
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

const summary = { passed: 0, failed: 0, pending: 0 };
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

/**
 * Runs one timed step. `action` answers whether it passed, or `{ ok, cpu }` with the CPU seconds of
 * the commands it ran (shown beside the wall time: on a shared machine, wall time says little).
 */
async function step(name, action) {
  const started = Date.now();
  console.log(`\n=== ${name}`);
  let ok;
  let cpu;
  try {
    const result = await action();
    if (typeof result === 'object' && result !== null) ({ ok, cpu } = result);
    else ok = result;
  } catch (err) {
    console.error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    ok = false;
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  steps.push({ name, ok, seconds, cpu });
  console.log(`=== ${name}: ${ok ? 'ok' : 'FAILED'} in ${seconds} s${cpu === undefined ? '' : ` (${formatCpu(cpu)})`}`);
  return ok;
}

/** Runs mocha with the spec reporter and adds its "N passing / N failing / N pending" to the summary. */
async function mochaStep(name, mochaArgs, env = {}) {
  return step(name, async () => {
    const { code, output, cpu } = await run(process.execPath, [mochaBin, ...mochaArgs], env);
    const text = stripAnsi(output);
    // The last match: mocha prints its summary at the end, after anything a test logged.
    const count = (word) => Number([...text.matchAll(new RegExp(`^\\s*(\\d+) ${word}\\b`, 'gm'))].at(-1)?.[1] ?? 0);
    const passed = count('passing');
    const failed = count('failing');
    summary.passed += passed;
    summary.pending += count('pending');
    summary.failed += failed;
    // A crash before mocha's summary (no tests found, a syntax error) still has to show as a failure.
    if (code !== 0 && failed === 0) summary.failed += 1;
    return { ok: code === 0, cpu };
  });
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
      await setupAgents(['codex', 'gemini']);
      return true;
    })) &&
    (await step('build', async () => {
      const { code, cpu } = await run('npm', ['run', '--silent', 'build']);
      return { ok: code === 0, cpu };
    }));
  if (!prepared) {
    summary.failed += 1;
  } else {
    if (!e2eOnly) {
      // tsc, ESLint (the layer rules of eslint.config.mjs) and Prettier's check work while the unit
      // tests mostly wait on servers, browsers and child processes, so they run side by side; their
      // output is printed once the unit tests are done.
      const beside = (script) => {
        const started = Date.now();
        return run('npm', ['run', '--silent', script], {}, { quiet: true }).then((r) => ({
          ...r,
          seconds: ((Date.now() - started) / 1000).toFixed(1),
        }));
      };
      const checks = [
        ['typecheck', beside('typecheck')],
        ['lint', beside('lint')],
        ['format', beside('format:check')],
      ];
      // Two files at a time: most of the suite's time is spent waiting on real servers, agents and
      // browsers, and each file runs in a worker of its own.
      await mochaStep('unit tests', ['--config', 'test/unit.mocharc.json', '--parallel', '--jobs', '2']);
      for (const [name, pending] of checks) {
        const passed = await step(`${name} (ran beside the unit tests)`, async () => {
          const { code, output, seconds, cpu } = await pending;
          process.stdout.write(output);
          console.log(`(${name} took ${seconds} s, ${formatCpu(cpu)})`);
          return code === 0;
        });
        if (!passed) summary.failed += 1;
      }
    }
    // The e2e suites run against the installed .vsix, packaged once here for all of them.
    const vsix = path.join(repoRoot, 'test-output', 'ultraplan-e2e.vsix');
    const packaged = await step('package (.vsix)', async () => {
      const { code, cpu } = await run(process.execPath, [path.join('scripts', 'package.mjs'), '--out', vsix]);
      return { ok: code === 0, cpu };
    });
    if (!packaged) summary.failed += 1;
    const e2eStarted = Date.now();
    // The spec lists live here, not in test/e2e/.mocharc.json: mocha adds a config's spec to the
    // files named on the command line, so one named file would still run every suite.
    const runs = onlyCodeServer
      ? [[onlyCodeServer, e2eFiles.length > 0 ? e2eFiles : ['test/e2e/**/*.e2e.ts']]]
      : e2eFiles.length > 0
        ? [[codeServers.FLOOR, e2eFiles]]
        : [
            [codeServers.FLOOR, ['test/e2e/**/*.e2e.ts']],
            [codeServers.NEWEST, ON_NEWEST],
          ];
    for (const [version, specs] of packaged ? runs : []) {
      const vscode = codeServers.CODE_SERVERS[version]?.vscode ?? '?';
      await mochaStep(
        `e2e tests on code-server ${version} (VS Code ${vscode}) + Chromium`,
        [
          '--config',
          'test/e2e/.mocharc.json',
          '--reporter',
          TIMING_REPORTER,
          '--reporter-option',
          `json=test-output/timings/e2e-${version}.json`,
          ...specs,
        ],
        {
          ULTRAPLAN_E2E_VSIX: vsix,
          [codeServers.CODE_SERVER_ENV]: version,
        },
      );
    }
    reportHostSuites(e2eStarted);
  }
  console.log('\n=== summary');
  for (const s of steps)
    console.log(`  ${s.ok ? 'ok    ' : 'FAILED'} ${s.name} (${s.seconds} s${s.cpu === undefined ? '' : `, ${formatCpu(s.cpu)}`})`);
  if (summary.pending > 0) console.log(`  ${summary.pending} pending`);
  console.log(`${summary.passed} passed, ${summary.failed} failed`);
  process.exit(steps.every((s) => s.ok) && summary.failed === 0 ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  console.log(`${summary.passed} passed, ${summary.failed + 1} failed`);
  process.exit(1);
});

#!/usr/bin/env node
// `npm run test:electron`: the in-host suites (test/e2e/host/*.host.ts) under @vscode/test-electron,
// in a downloaded desktop VS Code. That download needs a network these CI machines do not have,
// so we first check, with short timeouts, that the download server answers, and say so at once
// when it does not, instead of letting the download hang. `npm run test:e2e` runs the same
// suites inside code-server, which is what CI uses.
//
//   ULTRAPLAN_TEST_SUITE=smoke npm run test:electron   one suite (default: all bundled suites)
import { spawnSync } from 'node:child_process';
import dns from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOWNLOAD_HOST = 'update.code.visualstudio.com';
const CHECK_TIMEOUT_MS = 5_000;

function withTimeout(promise, ms, what) {
  return Promise.race([
    promise,
    new Promise((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms / 1000} s`)), ms).unref()),
  ]);
}

async function downloadReachable() {
  try {
    await withTimeout(dns.lookup(DOWNLOAD_HOST), CHECK_TIMEOUT_MS, `DNS lookup of ${DOWNLOAD_HOST}`);
    const response = await fetch(`https://${DOWNLOAD_HOST}/api/releases/stable`, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    await response.body?.cancel();
    if (!response.ok) return `${DOWNLOAD_HOST} answered HTTP ${response.status}`;
    return undefined;
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
    return `${err instanceof Error ? err.message : String(err)}${cause}`;
  }
}

function runOrExit(command, args) {
  const result = spawnSync(command, args, { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

async function main() {
  const problem = await downloadReachable();
  if (problem) {
    console.error(`[test:electron] cannot download VS Code here: ${problem}.`);
    console.error('[test:electron] @vscode/test-electron needs that download; on this machine run `npm run test:e2e`,');
    console.error('[test:electron] which runs the same in-host suites inside code-server.');
    process.exit(1);
  }
  runOrExit('npm', ['run', '--silent', 'build']);
  runOrExit(process.execPath, ['--import', 'tsx', 'test/e2e/runner-extension/build.ts']);
  const { runTests } = await import('@vscode/test-electron');
  const workspace = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-electron-ws-'));
  try {
    await runTests({
      extensionDevelopmentPath: repoRoot,
      extensionTestsPath: path.join(repoRoot, 'test', 'e2e', 'runner-extension', 'out', 'runner.js'),
      launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust'],
    });
    console.log('[test:electron] in-host suites passed');
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`[test:electron] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

#!/usr/bin/env node
// Installs code-server 4.100.3 (VS Code 1.100.3) into a per-machine cache folder, following
// docs TESTING.md steps 1-5. Its npm postinstall would download ripgrep and build native
// modules in one go, which fails here, so we install with scripts off and do the steps by hand.
//
// Once per machine: a marker file is written only after the whole install and a `--version`
// check succeed, so an interrupted install is redone from scratch. A lock folder keeps two
// concurrent runs (two test suites, `npm start` and `npm test`) from installing over each other.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync, lstatSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureSystemDeps } from './ensure-system-deps.mjs';

const require = createRequire(import.meta.url);
const paths = require('./code-server-config.cjs');

const LOCK_WAIT_MS = 20 * 60_000;
const LOCK_POLL_MS = 2_000;

function log(line) {
  console.log(`[setup-code-server] ${line}`);
}

/** npm run passes npm_* variables to its children; a nested npm in another folder must not see them. */
export function cleanNpmEnv(extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.toLowerCase().startsWith('npm_') && value !== undefined) env[key] = value;
  }
  return { ...env, ...extra };
}

function run(cwd, command, args, extraEnv = {}) {
  const started = Date.now();
  log(`$ (cd ${cwd} && ${command} ${args.join(' ')})`);
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'], env: cleanNpmEnv(extraEnv) });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`\`${command} ${args.join(' ')}\` in ${cwd} exited with ${result.status ?? result.signal}`);
  }
  log(`  done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function which(command) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, command);
    if (dir && existsSync(candidate)) return candidate;
  }
  throw new Error(`${command} not found on PATH`);
}

function linkForce(target, linkPath) {
  try {
    lstatSync(linkPath);
    unlinkSync(linkPath);
  } catch {
    // not there yet
  }
  symlinkSync(target, linkPath);
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err && typeof err === 'object' && 'code' in err && err.code === 'EPERM';
  }
}

/** mkdir is atomic, so the lock is a folder holding the owner's pid; a dead owner's lock is taken over. */
export async function acquireLock(lockDir) {
  const deadline = Date.now() + LOCK_WAIT_MS;
  let announced = false;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
      return () => rmSync(lockDir, { recursive: true, force: true });
    } catch (err) {
      if (!(err && typeof err === 'object' && 'code' in err && err.code === 'EEXIST')) throw err;
    }
    let owner = NaN;
    try {
      owner = Number(readFileSync(path.join(lockDir, 'pid'), 'utf8'));
    } catch {
      // the owner has made the folder but not yet written its pid
    }
    if (Number.isInteger(owner) && owner > 0 && !pidAlive(owner)) {
      log(`taking over a stale lock left by pid ${owner}`);
      rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!announced) {
      log(`another install (pid ${Number.isNaN(owner) ? '?' : owner}) holds ${lockDir}; waiting for it`);
      announced = true;
    }
    if (Date.now() > deadline) throw new Error(`gave up waiting for the lock ${lockDir} after ${LOCK_WAIT_MS / 60_000} min`);
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

function versionOutput(entry) {
  const result = spawnSync(process.execPath, [entry, '--version'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  // code-server may log a line about its config file first; keep only the version line.
  const lines = `${result.stdout ?? ''}${result.stderr ?? ''}`.split('\n');
  return (lines.find((line) => line.includes(' with Code ')) ?? lines.join(' ')).trim();
}

function install(home) {
  const started = Date.now();
  log(`installing code-server ${paths.CODE_SERVER_VERSION} into ${home} (about 2-5 minutes, once per machine)`);
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  // Its own package.json, so npm treats this folder as the project root and not some parent.
  writeFileSync(path.join(home, 'package.json'), JSON.stringify({ name: 'ultraplan-code-server', private: true }, null, 2));

  log('step 2/5: code-server package, scripts off');
  run(home, 'npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', `code-server@${paths.CODE_SERVER_VERSION}`]);

  const codeServer = path.join(home, 'node_modules', 'code-server');
  const vscodeDir = path.join(codeServer, 'lib', 'vscode');
  log('step 3/5: VS Code dependencies, local ripgrep, native rebuild');
  run(vscodeDir, 'npm', ['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund']);
  const rgBin = path.join(vscodeDir, 'node_modules', '@vscode', 'ripgrep', 'bin');
  mkdirSync(rgBin, { recursive: true });
  copyFileSync(which('rg'), path.join(rgBin, 'rg'));
  // node-pty's install script calls npx, which would otherwise stop to ask.
  run(vscodeDir, 'npm', ['rebuild'], { npm_config_yes: 'true' });

  log('step 4/5: links and built-in extensions');
  linkForce('node_modules', path.join(vscodeDir, 'node_modules.asar'));
  linkForce('code-linux.sh', path.join(vscodeDir, 'bin', 'remote-cli', 'code-server'));
  linkForce('browser-linux.sh', path.join(vscodeDir, 'bin', 'helpers', 'browser.sh'));
  run(path.join(vscodeDir, 'extensions'), 'npm', ['install', '--omit=dev', '--no-audit', '--no-fund']);

  log('step 5/5: argon2');
  run(home, 'npm', ['rebuild', 'argon2']);

  const version = versionOutput(paths.codeServerEntry());
  if (!version.includes(paths.CODE_SERVER_VERSION) || !version.includes(paths.VSCODE_VERSION)) {
    throw new Error(`code-server --version printed "${version}", expected ${paths.CODE_SERVER_VERSION} with Code ${paths.VSCODE_VERSION}`);
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  writeFileSync(
    paths.codeServerMarker(),
    JSON.stringify(
      { version: paths.CODE_SERVER_VERSION, versionOutput: version, installSeconds: seconds, installedAt: new Date().toISOString() },
      null,
      2,
    ),
  );
  log(`installed in ${seconds} s: ${version}`);
}

export async function setupCodeServer({ verify = false } = {}) {
  const home = paths.codeServerHome();
  const marker = paths.codeServerMarker();
  if (existsSync(marker) && existsSync(paths.codeServerEntry())) {
    if (verify) log(versionOutput(paths.codeServerEntry()));
    log(`code-server ${paths.CODE_SERVER_VERSION} ready (cached in ${home})`);
    return;
  }
  ensureSystemDeps();
  mkdirSync(paths.cacheRoot(), { recursive: true });
  const release = await acquireLock(`${home}.lock`);
  try {
    // Another run may have finished the install while we waited for the lock.
    if (existsSync(marker) && existsSync(paths.codeServerEntry())) {
      log(`code-server ${paths.CODE_SERVER_VERSION} ready (installed by another run)`);
      return;
    }
    install(home);
  } finally {
    release();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  setupCodeServer({ verify: process.argv.includes('--verify') }).catch((err) => {
    console.error(`[setup-code-server] failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}

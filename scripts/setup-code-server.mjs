#!/usr/bin/env node
// Installs the code-servers we run on into a per-machine cache folder, following TESTING.md steps
// 1-5: the engine floor, 4.100.3 (VS Code 1.100.3, on the Node running us), and the newest,
// 4.139.1 (VS Code 1.139.1, on Node 24 from npm's `node@24`, cached beside it). Their npm
// postinstall would download ripgrep and build native modules in one go, which fails here, so we
// install with scripts off and do the steps by hand.
//
//   node scripts/setup-code-server.mjs [--verify] [--only=4.139.1]
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

function versionOutput(version) {
  const result = spawnSync(paths.codeServerNode(version), [paths.codeServerEntry(version), '--version'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  // code-server may log a line about its config file first; keep only the version line.
  const lines = `${result.stdout ?? ''}${result.stderr ?? ''}`.split('\n');
  return (lines.find((line) => line.includes(' with Code ')) ?? lines.join(' ')).trim();
}

/** A folder of its own with a package.json, so npm treats it as the project root and not some parent. */
function freshProject(home, name) {
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'package.json'), JSON.stringify({ name, private: true }, null, 2));
}

/**
 * Node `major` from npm's `node@<major>` (its install script fetches the platform package
 * `node-<os>-<arch>` from npm, which also holds the headers): into the cache, once. Returns what the
 * npm steps of a code-server that runs on it need: its bin folder first on PATH, so install scripts
 * run on it, and its headers as npm_config_nodedir, so native modules build for it with no download.
 */
function ensureNode(major) {
  const home = paths.nodeHome(major);
  const binary = paths.nodeBinary(major);
  const marker = path.join(home, '.install-complete');
  if (!existsSync(marker) || !existsSync(binary)) {
    log(`installing Node ${major} from npm (node@${major}) into ${home}`);
    freshProject(home, `ultraplan-node-${major}`);
    run(home, 'npm', ['install', '--no-audit', '--no-fund', `node@${major}`]);
    const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
    if (!version.startsWith(`v${major}.`)) throw new Error(`${binary} --version printed "${version}", expected v${major}.x`);
    writeFileSync(marker, JSON.stringify({ version, installedAt: new Date().toISOString() }, null, 2));
  }
  // node@<major>'s install script puts the platform package under its own node_modules.
  const platform = `node-${process.platform}-${process.arch}`;
  const candidates = [path.join(home, 'node_modules', 'node', 'node_modules', platform), path.join(home, 'node_modules', platform)];
  const platformPackage = candidates.find((dir) => existsSync(path.join(dir, 'include', 'node', 'node.h')));
  if (!platformPackage) throw new Error(`no Node ${major} headers (include/node/node.h) in ${candidates.join(' or ')}`);
  return {
    PATH: `${path.dirname(binary)}${path.delimiter}${process.env.PATH ?? ''}`,
    npm_config_nodedir: platformPackage,
  };
}

function install(version) {
  const home = paths.codeServerHome(version);
  const { vscode, node } = paths.CODE_SERVERS[version];
  const started = Date.now();
  log(`installing code-server ${version} into ${home} (about 2-5 minutes, once per machine)`);
  // A code-server that needs another Node: every npm step below runs on it and builds for it.
  const nodeEnv = node ? ensureNode(node) : {};
  freshProject(home, 'ultraplan-code-server');

  log('step 2/5: code-server package, scripts off');
  run(home, 'npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', `code-server@${version}`], nodeEnv);

  const codeServer = path.join(home, 'node_modules', 'code-server');
  const vscodeDir = path.join(codeServer, 'lib', 'vscode');
  log('step 3/5: VS Code dependencies, ripgrep, native rebuild');
  run(vscodeDir, 'npm', ['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], nodeEnv);
  // @vscode/ripgrep (1.100) downloads its binary in an install script: ours comes from the system
  // package. 1.139 ships @vscode/ripgrep-universal, binaries included, instead.
  const ripgrep = path.join(vscodeDir, 'node_modules', '@vscode', 'ripgrep');
  if (existsSync(path.join(ripgrep, 'package.json')) && !existsSync(path.join(ripgrep, 'bin', 'rg'))) {
    mkdirSync(path.join(ripgrep, 'bin'), { recursive: true });
    copyFileSync(which('rg'), path.join(ripgrep, 'bin', 'rg'));
  }
  // node-pty's install script calls npx, which would otherwise stop to ask.
  run(vscodeDir, 'npm', ['rebuild'], { ...nodeEnv, npm_config_yes: 'true' });

  log('step 4/5: links and built-in extensions');
  linkForce('node_modules', path.join(vscodeDir, 'node_modules.asar'));
  linkForce('code-linux.sh', path.join(vscodeDir, 'bin', 'remote-cli', 'code-server'));
  linkForce('browser-linux.sh', path.join(vscodeDir, 'bin', 'helpers', 'browser.sh'));
  run(path.join(vscodeDir, 'extensions'), 'npm', ['install', '--omit=dev', '--no-audit', '--no-fund'], nodeEnv);

  log('step 5/5: argon2');
  run(home, 'npm', ['rebuild', 'argon2'], nodeEnv);

  const printed = versionOutput(version);
  if (!printed.includes(version) || !printed.includes(vscode)) {
    throw new Error(`code-server --version printed "${printed}", expected ${version} with Code ${vscode}`);
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  writeFileSync(
    paths.codeServerMarker(version),
    JSON.stringify({ version, versionOutput: printed, installSeconds: seconds, installedAt: new Date().toISOString() }, null, 2),
  );
  log(`installed in ${seconds} s: ${printed}`);
}

async function setupOne(version, verify) {
  const home = paths.codeServerHome(version);
  const ready = () => existsSync(paths.codeServerMarker(version)) && existsSync(paths.codeServerEntry(version));
  if (ready()) {
    if (verify) log(versionOutput(version));
    log(`code-server ${version} ready (cached in ${home})`);
    return;
  }
  ensureSystemDeps();
  mkdirSync(paths.cacheRoot(), { recursive: true });
  const release = await acquireLock(`${home}.lock`);
  try {
    // Another run may have finished the install while we waited for the lock.
    if (ready()) {
      log(`code-server ${version} ready (installed by another run)`);
      return;
    }
    install(version);
  } finally {
    release();
  }
}

/** Installs each code-server we run on (the engine floor and the newest), or those named. */
export async function setupCodeServer({ verify = false, versions = Object.keys(paths.CODE_SERVERS) } = {}) {
  for (const version of versions) await setupOne(version, verify);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
  setupCodeServer({ verify: process.argv.includes('--verify'), ...(only ? { versions: [only] } : {}) }).catch((err) => {
    console.error(`[setup-code-server] failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}

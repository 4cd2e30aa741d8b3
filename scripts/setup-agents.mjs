#!/usr/bin/env node
// Installs the pinned ACP agents the tests run for real (src/agents/catalogue/agents.json) into
// a per-machine cache folder, each in its own npm prefix: ~/.cache/ultraplan/agents/<id>-<version>.
// Once per machine: the marker is written only after the install and its checks succeed, so an
// interrupted install is redone from scratch; a lock keeps concurrent runs from racing.
//
// Checked after install: the agent's program runs, and every package came from the npm registry
// (Codex's adapter pulls its native `codex` program in as the npm package @openai/codex-<platform>;
// nothing is downloaded by an install script, which we turn off).
//
//   node scripts/setup-agents.mjs [ids…]   (default: every pinned agent)
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { acquireLock, cleanNpmEnv } from './setup-code-server.mjs';

const require = createRequire(import.meta.url);
const paths = require('./agents-config.cjs');

function log(line) {
  console.log(`[setup-agents] ${line}`);
}

/** Every package in the install's lock file, with where npm fetched it from. */
function lockedPackages(home) {
  const lock = JSON.parse(readFileSync(path.join(home, 'package-lock.json'), 'utf8'));
  return Object.entries(lock.packages ?? {})
    .filter(([key]) => key.startsWith('node_modules/'))
    .map(([key, entry]) => ({
      key,
      name: entry.name ?? key.replace(/^.*node_modules\//, ''),
      version: entry.version,
      resolved: entry.resolved,
      integrity: entry.integrity,
      link: entry.link,
    }));
}

/** npm's registry for this machine (it may be a mirror): every package must come from it. */
function registry() {
  const result = spawnSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8', env: cleanNpmEnv() });
  return (result.stdout ?? '').trim() || 'https://registry.npmjs.org/';
}

function checkSources(id, home) {
  const from = registry().replace(/\/+$/, '');
  // npm leaves `resolved` out for the default registry; a git, file or URL source always has one,
  // and only a registry tarball has an integrity hash.
  const foreign = lockedPackages(home).filter(
    (entry) => entry.link || !entry.integrity || (entry.resolved && !entry.resolved.startsWith(`${from}/`)),
  );
  if (foreign.length > 0) {
    throw new Error(
      `${id}: packages not from ${from}: ${foreign.map((entry) => `${entry.name}@${entry.version} (${entry.resolved ?? 'link'})`).join(', ')}`,
    );
  }
}

function checkRuns(id) {
  const bin = paths.agentBin(id);
  if (!existsSync(bin)) throw new Error(`${id}: ${bin} is missing after the install`);
  if (id === 'codex') {
    // The native program the adapter starts (`codex app-server`), from its per-platform npm package.
    const codexJs = path.join(paths.agentHome(id), 'node_modules', '@openai', 'codex', 'bin', 'codex.js');
    const result = spawnSync(process.execPath, [codexJs, '--version'], { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) throw new Error(`${id}: \`codex --version\` failed: ${(result.stderr || result.stdout || '').trim()}`);
    return result.stdout.trim();
  }
  return bin;
}

function install(id) {
  const spec = paths.PACKAGES[id];
  const home = paths.agentHome(id);
  const started = Date.now();
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'package.json'), JSON.stringify({ name: `ultraplan-agent-${id}`, private: true }, null, 2));
  const args = ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--save-exact', `${spec.package}@${spec.version}`];
  log(`$ (cd ${home} && npm ${args.join(' ')})`);
  const result = spawnSync('npm', args, { cwd: home, stdio: ['ignore', 'inherit', 'inherit'], env: cleanNpmEnv() });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`npm install ${spec.package}@${spec.version} exited with ${result.status ?? result.signal}`);
  checkSources(id, home);
  const version = checkRuns(id);
  writeFileSync(paths.agentMarker(id), `${spec.package}@${spec.version}\n`);
  log(`${spec.package}@${spec.version} installed in ${((Date.now() - started) / 1000).toFixed(1)} s (${version})`);
}

/** Installs each agent not yet cached; answers the program of each. */
export async function setupAgents(ids = Object.keys(paths.PACKAGES)) {
  const programs = {};
  for (const id of ids) {
    const spec = paths.PACKAGES[id];
    if (!spec) throw new Error(`unknown agent "${id}"; known: ${Object.keys(paths.PACKAGES).join(', ')}`);
    if (!existsSync(paths.agentMarker(id))) {
      mkdirSync(path.dirname(paths.agentHome(id)), { recursive: true });
      const release = await acquireLock(`${paths.agentHome(id)}.lock`);
      try {
        // Another run may have finished the install while we waited for the lock.
        if (!existsSync(paths.agentMarker(id))) install(id);
      } finally {
        release();
      }
    }
    log(`${spec.package}@${spec.version} ready (cached in ${paths.agentHome(id)})`);
    programs[id] = paths.agentBin(id);
  }
  return programs;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const ids = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  setupAgents(ids.length ? ids : undefined).catch((err) => {
    console.error(`[setup-agents] failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}

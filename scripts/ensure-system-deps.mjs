#!/usr/bin/env node
// Makes sure the system packages that code-server's install and the e2e tests need are present:
// Chromium (the browser the tests drive), ripgrep (replaces the binary code-server would download),
// the Kerberos headers (code-server's native `kerberos` module builds against gssapi.h) and
// PostgreSQL (the server's tests start a throwaway cluster of it: test/support/postgresCluster.ts),
// gh and openssl (the pull-request review test), socat and bubblewrap (each agent's sandbox:
// src/agents/sandbox/). bubblewrap is unpacked from Debian's package into Ultraplan's cache, not
// installed: a `bwrap` on PATH makes Codex's adapter, run as root, sandbox its own commands with a
// helper its sandbox cannot find (docs/security.md), and only our sandbox needs it.
// Fast and silent when everything is there; installs with apt-get only when running as root.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const { privateBwrap, privateToolsDir } = createRequire(import.meta.url)('./agents-config.cjs');

/** Each requirement: how to tell it is there, and the Debian package that provides it. */
const requirements = [
  { what: 'Chromium (/usr/bin/chromium)', apt: 'chromium', present: () => existsSync('/usr/bin/chromium') },
  { what: 'ripgrep (rg)', apt: 'ripgrep', present: () => onPath('rg') },
  { what: 'Kerberos headers (gssapi/gssapi.h)', apt: 'libkrb5-dev', present: () => existsSync('/usr/include/gssapi/gssapi.h') },
  { what: 'PostgreSQL (initdb)', apt: 'postgresql', present: postgresInstalled },
  // The review of a pull request runs the real GitHub CLI against a stand-in GitHub API over HTTPS
  // with a throwaway certificate (test/support/review/githubApiStandIn.ts).
  { what: 'GitHub CLI (gh)', apt: 'gh', present: () => onPath('gh') },
  { what: 'OpenSSL (openssl)', apt: 'openssl', present: () => onPath('openssl') },
  // The sandbox of each agent: socat bridges its proxy socket; bubblewrap (below) makes its namespaces.
  { what: 'socat', apt: 'socat', present: () => onPath('socat') },
];

/** Debian packages unpacked into the cache, their programs found by path and never on PATH. */
const unpacked = [{ what: 'bubblewrap (bwrap)', apt: 'bubblewrap', program: privateBwrap }];

function postgresInstalled() {
  const root = '/usr/lib/postgresql';
  return existsSync(root) && readdirSync(root).some((version) => existsSync(path.join(root, version, 'bin', 'initdb')));
}

function onPath(command) {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && existsSync(path.join(dir, command)));
}

function run(command, args) {
  const result = spawnSync(command, args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`);
  }
}

export function ensureSystemDeps() {
  installMissing();
  unpackMissing();
}

/** Unpacks each of `unpacked` that is not there yet: apt-get download, then dpkg-deb -x (neither installs). */
function unpackMissing() {
  for (const tool of unpacked.filter((t) => !existsSync(t.program()))) {
    const downloads = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-deb-'));
    try {
      console.log(`[ensure-system-deps] unpacking ${tool.apt} into ${privateToolsDir(tool.apt)} (not installed: kept off PATH)`);
      // As root, apt hands the download to its own user, who cannot write this private folder.
      const asRoot = isRoot() ? ['-o', 'APT::Sandbox::User=root'] : [];
      const download = () =>
        spawnSync('apt-get', [...asRoot, 'download', tool.apt], { cwd: downloads, stdio: ['ignore', 'inherit', 'inherit'] });
      if (download().status !== 0) {
        // A machine whose package lists are empty or old: read them once, as root, then try again.
        if (!isRoot()) throw new Error(`apt-get download ${tool.apt} failed; run: sudo apt-get update, then npm run setup`);
        run('apt-get', ['update']);
        if (download().status !== 0) throw new Error(`apt-get download ${tool.apt} failed after apt-get update`);
      }
      const deb = readdirSync(downloads).find((name) => name.endsWith('.deb'));
      if (!deb) throw new Error(`apt-get download ${tool.apt} left no .deb`);
      mkdirSync(privateToolsDir(tool.apt), { recursive: true });
      run('dpkg-deb', ['-x', path.join(downloads, deb), privateToolsDir(tool.apt)]);
    } finally {
      rmSync(downloads, { recursive: true, force: true });
    }
    if (!existsSync(tool.program())) throw new Error(`${tool.what}: ${tool.program()} is missing after unpacking ${tool.apt}`);
  }
}

function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function installMissing() {
  const missing = requirements.filter((r) => !r.present());
  if (missing.length === 0) return;
  const packages = missing.map((r) => r.apt);
  const command = `apt-get update && apt-get install -y ${packages.join(' ')}`;
  if (!isRoot()) {
    const names = missing.map((r) => r.what).join(', ');
    throw new Error(`Missing system packages: ${names}.\nInstall them with:\n  sudo sh -c '${command}'`);
  }
  console.log(`[ensure-system-deps] installing ${packages.join(', ')} with apt-get`);
  run('apt-get', ['update']);
  run('apt-get', ['install', '-y', '--no-install-recommends', ...packages]);
  const still = requirements.filter((r) => !r.present());
  if (still.length > 0) {
    throw new Error(`apt-get finished but these are still missing: ${still.map((r) => r.what).join(', ')}`);
  }
  console.log('[ensure-system-deps] done');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    ensureSystemDeps();
  } catch (err) {
    console.error(`[ensure-system-deps] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}

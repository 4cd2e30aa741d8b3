#!/usr/bin/env node
// Makes sure the system packages that code-server's install and the e2e tests need are present:
// Chromium (the browser the tests drive), ripgrep (replaces the binary code-server would download),
// the Kerberos headers (code-server's native `kerberos` module builds against gssapi.h) and
// PostgreSQL (the server's tests start a throwaway cluster of it: test/support/postgresCluster.ts),
// gh and openssl (the pull-request review test).
// Fast and silent when everything is there; installs with apt-get only when running as root.
import { existsSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

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
];

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
  const missing = requirements.filter((r) => !r.present());
  if (missing.length === 0) return;
  const packages = missing.map((r) => r.apt);
  const command = `apt-get update && apt-get install -y ${packages.join(' ')}`;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
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

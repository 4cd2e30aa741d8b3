#!/usr/bin/env node
// `node scripts/try-postgres.mjs [--port N]`: a throwaway PostgreSQL to try the team server on one
// machine (docs/team.md). Debian's binaries, as the tests use them (test/support/postgresCluster.ts):
// initdb in a temp folder, the server on 127.0.0.1 only, a database `ultraplan` owned by the user
// `ultraplan`. stdout carries one line, the database's URL; the rest goes to stderr. Ctrl-C (or
// SIGTERM) stops PostgreSQL at once, removes the folder and exits 0.
// Not a deployment: every local user may connect (trust authentication), and nothing is kept.
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { fail as failWith, portFlag } from './try-command-line.mjs';

const NAME = 'try-postgres';
const USER = 'ultraplan';
const DATABASE = 'ultraplan';
const DEFAULT_PORT = 55432;

function fail(message) {
  failWith(NAME, message);
}

/** The newest installed major version's binaries. */
function binDir() {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    fail(
      'PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run `node scripts/ensure-system-deps.mjs` as root, or `sudo apt-get install -y postgresql`',
    );
  }
  return { bin: path.join(root, versions[0], 'bin'), version: versions[0] };
}

/** PostgreSQL refuses to run as root: then the cluster belongs to the `postgres` user Debian's package creates. */
function owner() {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

function portFree(port) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

async function waitForConnections(url, server, deadline) {
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null) throw new Error('PostgreSQL exited at start');
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not accept connections within 30 s (${err.message})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function main() {
  const port = portFlag(NAME, DEFAULT_PORT);
  const { bin, version } = binDir();
  if (!(await portFree(port))) fail(`port ${port} on 127.0.0.1 is in use: pick another with --port N`);
  const runAs = owner();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-try-pg-'));
  const remove = () => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  if (runAs) chownSync(dir, runAs.uid, runAs.gid);
  const dataDir = path.join(dir, 'data');
  const options = { ...(runAs ?? {}), env: { ...process.env, LC_ALL: 'C.UTF-8' } };
  try {
    execFileSync(path.join(bin, 'initdb'), ['-D', dataDir, '-U', USER, '-A', 'trust', '-E', 'UTF8', '--no-instructions', '--no-sync'], {
      ...options,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (err) {
    remove();
    fail(`initdb failed: ${err.stderr?.toString().trim() || err.message}`);
  }
  const server = spawn(
    path.join(bin, 'postgres'),
    ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-k', dir, '-c', 'max_connections=200'],
    { ...options, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  // Its log is shown only when it fails: a running server's chatter is not what the person asked for.
  let log = '';
  server.stderr.setEncoding('utf8').on('data', (chunk) => (log = (log + chunk).slice(-8000)));
  let stopping = false;
  let failure = '';
  server.once('exit', (code, signal) => {
    remove();
    if (failure) fail(`${failure}\n${log}`);
    if (stopping) {
      process.stderr.write(`${NAME}: stopped; ${dir} removed\n`);
      process.exit(0);
    }
    fail(`PostgreSQL exited (${code ?? signal}):\n${log}`);
  });
  const stop = (signal) => {
    if (stopping) {
      // Asked twice: do not wait for the shutdown.
      server.kill('SIGKILL');
      return;
    }
    stopping = true;
    process.stderr.write(`${NAME}: ${signal}: stopping PostgreSQL\n`);
    // Immediate shutdown (no checkpoint): the folder is removed next, so nothing is worth writing.
    server.kill('SIGQUIT');
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));

  const adminUrl = `postgres://${USER}@127.0.0.1:${port}/postgres`;
  try {
    await waitForConnections(adminUrl, server, Date.now() + 30_000);
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`CREATE DATABASE ${DATABASE}`);
    await client.end();
  } catch (err) {
    if (stopping) return;
    failure = err.message;
    server.kill('SIGKILL');
    return;
  }
  process.stderr.write(
    `${NAME}: PostgreSQL ${version} on 127.0.0.1:${port}, data in ${dir}: a throwaway (any local user may connect); Ctrl-C stops it and removes the folder\n`,
  );
  process.stdout.write(`postgres://${USER}@127.0.0.1:${port}/${DATABASE}\n`);
}

await main();

// A throwaway PostgreSQL cluster for tests and benches: Debian's `postgresql` binaries, initdb in
// a temp folder, the server on 127.0.0.1 (and a Unix socket in the same folder), removed after.
// PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` user the
// Debian package creates. The server is our own child process, so a test can SIGKILL and restart
// it like a machine losing its database.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';

export interface PostgresCluster {
  /** `postgres://ultraplan@127.0.0.1:PORT/postgres` */
  readonly adminUrl: string;
  readonly port: number;
  /** A fresh, empty database on this cluster; its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server (SIGKILL when `crash`, else a fast shutdown) and starts it again on the same port. */
  restart(options?: { crash?: boolean; downMs?: number }): Promise<void>;
  /** Stops the server and removes the cluster's folder. */
  destroy(): Promise<void>;
  /** What the server wrote to stderr. */
  log(): string;
}

const USER = 'ultraplan';
const running = new Set<ChildProcess>();
const folders: string[] = [];

/** Stops every cluster this process started and removes their folders (synchronous: it runs at exit). */
function removeClusters(): void {
  for (const child of running) child.kill('SIGKILL');
  // The killed server's own children go a moment later and may still write meanwhile (a removal
  // then finds a folder not empty): retried, and one folder that still fails does not keep the
  // others.
  for (const dir of folders) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
    } catch {
      // Left in the temp folder; nothing else depends on it.
    }
  }
}

process.once('exit', removeClusters);
// A mocha worker that does not end within a second of being asked is sent SIGTERM, which ends a
// process without its exit handlers: the clusters would outlive it.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    removeClusters();
    process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
  });
}

/** The folder of Debian's PostgreSQL binaries (the newest installed major version). */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] === undefined) {
    throw new Error(
      'PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb). Run `node scripts/ensure-system-deps.mjs` as root, or `sudo apt-get install -y postgresql`.',
    );
  }
  return path.join(root, versions[0], 'bin');
}

/** The uid/gid to run PostgreSQL as: ours, or the `postgres` user's when we are root. */
function clusterOwner(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** A port free on 127.0.0.1 now (for a server that needs its port before it starts). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `holdsProcess: false` lets the test process end while the cluster still runs (the exit handler
 * above removes it): for the shared cluster, which no suite stops.
 */
export async function startPostgresCluster({ holdsProcess = true } = {}): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  const owner = clusterOwner();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-pg-'));
  folders.push(dir);
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const dataDir = path.join(dir, 'data');
  const spawnOptions = { ...(owner ?? {}), env: { ...process.env, LC_ALL: 'C.UTF-8' } };
  execFileSync(path.join(bin, 'initdb'), ['-D', dataDir, '-U', USER, '-A', 'trust', '-E', 'UTF8', '--no-instructions'], {
    ...spawnOptions,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const port = await freePort();
  const adminUrl = `postgres://${USER}@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | undefined;
  let stderr = '';
  let databases = 0;

  const start = async (deadline = Date.now() + 90_000): Promise<void> => {
    const proc = spawn(
      path.join(bin, 'postgres'),
      ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-k', dir, '-c', 'max_connections=300'],
      { ...spawnOptions, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    running.add(proc);
    // Killed at exit (above): it must not keep a test process alive once its tests are done.
    proc.unref();
    (proc.stderr as (NodeJS.ReadableStream & { unref?: () => void }) | null)?.unref?.();
    proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    if (!holdsProcess) {
      proc.unref();
      (proc.stderr as (NodeJS.ReadableStream & { unref?: () => void }) | null)?.unref?.();
    }
    proc.once('exit', () => running.delete(proc));
    child = proc;
    for (;;) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        // After a SIGKILL the old server's children still hold its shared memory for a moment,
        // and a new server refuses to start until they are gone: try again until the deadline.
        if (Date.now() > deadline) throw new Error(`postgres exited at start:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 200));
        return start(deadline);
      }
      const client = new Client({ connectionString: adminUrl });
      try {
        await client.connect();
        await client.query('SELECT 1');
        await client.end();
        return;
      } catch (err) {
        await client.end().catch(() => {});
        if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 90 s (${String(err)}):\n${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    // Started unreferenced (above); a caller waiting for it to stop must keep this process alive
    // until it has, or a bench whose last work this is would end here without a word.
    proc.ref();
    proc.kill(signal);
    await exited;
  };

  await start();
  return {
    adminUrl,
    port,
    async createDatabase(name = `t${Date.now().toString(36)}_${++databases}`) {
      const client = new Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://${USER}@127.0.0.1:${port}/${name}`;
    },
    async restart({ crash = false, downMs = 0 } = {}) {
      await stop(crash ? 'SIGKILL' : 'SIGINT');
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    async destroy() {
      await stop('SIGINT');
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => stderr,
  };
}

let shared: Promise<PostgresCluster> | undefined;

/** One cluster for the whole test process (each suite takes its own databases on it); removed at exit. */
export function sharedPostgresCluster(): Promise<PostgresCluster> {
  shared ??= startPostgresCluster({ holdsProcess: false });
  return shared;
}

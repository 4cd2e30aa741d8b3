// Starts the real built server (dist/server.mjs) as a child process for tests and benchmarks.
// dist/server.mjs is rebuilt once per test process when it is older than the sources it bundles,
// so `npx mocha test/service/...` works without a manual `npm run build`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { strict as assert } from 'node:assert';
import { setPlanModeEvent, userMessageEvent } from '../../src/core/protocol';
import { standIn } from './standIn';
import { waitFor } from './wait';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const SERVER_JS = path.join(REPO_ROOT, 'dist', 'server.mjs');
export const EXAMPLES_DIR = path.join(REPO_ROOT, 'examples');

export interface StartServerOptions {
  /** A scenario file: shorthand for agent `scripted:<path>`. Default examples/approve.json. */
  scenario?: string;
  /** A full --agent spec (wins over scenario). */
  agent?: string;
  /** Default: a fresh temp dir, removed when the test process exits. */
  dataDir?: string;
  /** A PostgreSQL URL: the server is a replica on that database (no data dir, no agent: workers run agents). */
  store?: string;
  /** Hands `store` over in a 0400 --database-url-file (as a deployment's Secret does), not --store. */
  storeInFile?: boolean;
  /**
   * Default: a random token (sent as ULTRAPLAN_SERVER_TOKEN to a journal server, in a 0400
   * --token-file with PostgreSQL or OIDC, which refuse the variable). null: --insecure-no-auth.
   */
  token?: string | null;
  /** Default 127.0.0.1. */
  host?: string;
  /** The stream's keep-alive interval (hidden flag); default the server's 15 s. */
  keepAliveMs?: number;
  extraArgs?: string[];
  env?: Record<string, string>;
  /** How long to wait for the listening line (default 15 s). */
  startTimeoutMs?: number;
}

export interface ServerProcess {
  url: string;
  token: string | null;
  dataDir: string;
  pid: number;
  /** Headers with the token, for fetch. */
  headers(extra?: Record<string, string>): Record<string, string>;
  /** Everything the server wrote so far. */
  stdout(): string;
  stderr(): string;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ServerRunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const LISTENING_LINE = /^ultraplan-server listening on (http:\/\/\S+)$/;
const running = new Set<ChildProcess>();
const createdDirs: string[] = [];
const built = new Set<string>();

process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  for (const dir of createdDirs) rmSync(dir, { recursive: true, force: true });
});

/** A temp dir removed when the test process exits. */
export function tempDir(prefix = 'ultraplan-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  createdDirs.push(dir);
  return dir;
}

/** Rebuilds dist/server.mjs when any source it bundles is newer (once per process). */
export function ensureServerBuilt(): void {
  ensureBundleBuilt('server');
}

/** Rebuilds dist/<bundle>.mjs (a command-line entry of the Node graph, esbuild.mjs) when a source is newer. */
export function ensureBundleBuilt(bundle: 'server' | 'review'): void {
  if (built.has(bundle)) return;
  let builtAt = 0;
  try {
    builtAt = statSync(path.join(REPO_ROOT, 'dist', `${bundle}.mjs`)).mtimeMs;
  } catch {
    /* missing: build */
  }
  // The rooms the server and review bundles are built from (docs/architecture.md).
  const newest = Math.max(...['service', 'agents', 'core', 'client', 'cli'].map((room) => newestMtime(path.join(REPO_ROOT, 'src', room))));
  if (newest > builtAt) execFileSync(process.execPath, ['esbuild.mjs', `--only=${bundle}`], { cwd: REPO_ROOT, stdio: 'inherit' });
  built.add(bundle);
}

/** The newest modification time of any file under `dir` (a bundle is rebuilt when a source is newer). */
export function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/** A secret as a deployment hands it over: a file only its owner reads. */
export function secretFile(text: string, name = 'secret'): string {
  const file = path.join(tempDir('ultraplan-secret-'), name);
  writeFileSync(file, `${text}\n`, { mode: 0o400 });
  return file;
}

/** A server for several people (PostgreSQL, OIDC) takes its token only from a file. */
function tokenInFile(options: StartServerOptions, token: string | null): boolean {
  const multiUser =
    options.store !== undefined || (options.extraArgs ?? []).includes('--oidc-issuer') || options.env?.ULTRAPLAN_OIDC_ISSUER !== undefined;
  return multiUser && token !== null && !options.env?.ULTRAPLAN_SERVER_TOKEN;
}

function buildArgs(options: StartServerOptions, dataDir: string, token: string | null): string[] {
  const agent = options.agent ?? `scripted:${options.scenario ?? path.join(EXAMPLES_DIR, 'approve.json')}`;
  const store =
    options.store === undefined
      ? []
      : options.storeInFile
        ? ['--database-url-file', secretFile(options.store, 'database-url')]
        : ['--store', options.store];
  const where = options.store !== undefined ? store : ['--data-dir', dataDir, '--agent', agent];
  const args = [SERVER_JS, '--host', options.host ?? '127.0.0.1', '--port', '0', ...where];
  if (tokenInFile(options, token)) args.push('--token-file', secretFile(token as string, 'token'));
  if (options.token === null) args.push('--insecure-no-auth');
  if (options.keepAliveMs !== undefined) args.push('--keep-alive-ms', String(options.keepAliveMs));
  args.push(...(options.extraArgs ?? []));
  return args;
}

function childEnv(options: StartServerOptions, token: string | null): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  if (token !== null && !tokenInFile(options, token)) env.ULTRAPLAN_SERVER_TOKEN = token;
  else if (!options.env?.ULTRAPLAN_SERVER_TOKEN) delete env.ULTRAPLAN_SERVER_TOKEN;
  return env;
}

export async function startServer(options: StartServerOptions = {}): Promise<ServerProcess> {
  ensureServerBuilt();
  const token = options.token === undefined ? randomBytes(24).toString('hex') : options.token;
  const dataDir = options.dataDir ?? tempDir('ultraplan-server-');
  const child = spawn(process.execPath, buildArgs(options, dataDir, token), {
    cwd: REPO_ROOT,
    env: childEnv(options, token),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });

  const url = await new Promise<string>((resolve, reject) => {
    // A replica migrating its database beside the e2e and unit tests on two cores has taken over 15 s.
    const timeoutMs = options.startTimeoutMs ?? 40_000;
    const timer = setTimeout(() => fail(`no listening line within ${timeoutMs} ms`), timeoutMs);
    const onData = () => {
      const newline = stdout.indexOf('\n');
      if (newline < 0) return;
      const match = LISTENING_LINE.exec(stdout.slice(0, newline));
      if (match) finish(() => resolve(match[1] as string));
      else fail(`unexpected first stdout line ${JSON.stringify(stdout.slice(0, newline))}`);
    };
    // 'close', not 'exit': only then has all of its stderr (the reason it gave) been read.
    const onExit = () => fail('the server exited before listening');
    function finish(then: () => void) {
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.off('close', onExit);
      then();
    }
    function fail(why: string) {
      finish(() => {
        child.kill('SIGKILL');
        reject(new Error(`ultraplan-server: ${why}\nstderr:\n${stderr}`));
      });
    }
    child.stdout.on('data', onData);
    child.once('close', onExit);
  });

  return {
    url,
    token,
    dataDir,
    pid: child.pid as number,
    headers: (extra = {}) => ({
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'ccr-byoc-2025-07-29',
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      ...extra,
    }),
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const { code } = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * A server for the enclosing describe: started in before(), stopped in after() with its exit code
 * asserted 0 (a clean shutdown). The returned object stands for the running server in the tests.
 */
export function serverForSuite(options: StartServerOptions = {}): ServerProcess {
  let current: ServerProcess | undefined;
  before(async () => {
    current = await startServer(options);
  });
  after(async () => {
    const server = current;
    current = undefined;
    if (server) assert.equal(await server.stop(), 0, `ultraplan-server exited uncleanly\nstderr:\n${server.stderr()}`);
  });
  return standIn(() => current, 'serverForSuite(…)');
}

/**
 * For tests that start servers of their own (a server per case, a restart): `start` starts one, and
 * every server started so is stopped in afterEach(), whatever the test did.
 */
export function serversPerTest(): { start(options?: StartServerOptions): Promise<ServerProcess> } {
  const started: ServerProcess[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((server) => server.stop()));
  });
  return {
    async start(options = {}) {
      const server = await startServer(options);
      started.push(server);
      return server;
    },
  };
}

/** Runs the server CLI to completion (for refused starts and --help); kills it after timeoutMs. */
export async function runServerCli(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ServerRunResult> {
  ensureServerBuilt();
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  if (!options.env?.ULTRAPLAN_SERVER_TOKEN) delete env.ULTRAPLAN_SERVER_TOKEN;
  const child = spawn(process.execPath, [SERVER_JS, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 10_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  running.delete(child);
  return { code, stdout, stderr };
}

/**
 * Creates a planning session the way a script would: plain fetch on the current wire, titled
 * `ultraplan: <prompt>`, plan mode then the prompt. Resolves with the session id (`cse_…`).
 */
export async function createCodeSessionByHttp(server: ServerProcess, prompt: string): Promise<string> {
  const response = await fetch(`${server.url}/v1/code/sessions`, {
    method: 'POST',
    headers: server.headers({ 'content-type': 'application/json' }),
    body: JSON.stringify({
      title: `ultraplan: ${prompt}`,
      events: [{ payload: setPlanModeEvent(`set-mode-${randomUUID()}`) }, { payload: userMessageEvent(prompt) }],
    }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`creating a session failed: HTTP ${response.status} ${text}`);
  return (JSON.parse(text) as { session: { id: string } }).session.id;
}

export interface WorkerProcess {
  pid: number;
  stderr(): string;
  /** SIGTERM (a clean stop: the leases are let go) and wait for exit. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

/** Starts `ultraplan-server worker` on a PostgreSQL database and waits for its running line. */
export async function startWorker(options: {
  store: string;
  agent: string;
  leaseMs?: number;
  workerId?: string;
  /** --workspace, --scratch and the like. */
  extraArgs?: string[];
  /** Hands the database URL over in a 0400 --database-url-file (as a deployment's Secret does), not --store. */
  storeInFile?: boolean;
  /** Added to the test's environment (an agent's model URL and home, say). */
  env?: Record<string, string>;
}): Promise<WorkerProcess> {
  ensureServerBuilt();
  const where = options.storeInFile ? ['--database-url-file', secretFile(options.store, 'database-url')] : ['--store', options.store];
  const args = [SERVER_JS, 'worker', ...where, '--agent', options.agent];
  if (options.leaseMs !== undefined) args.push('--lease-ms', String(options.leaseMs));
  if (options.workerId !== undefined) args.push('--worker-id', options.workerId);
  args.push(...(options.extraArgs ?? []));
  const env = { ...process.env, ...options.env };
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const started = () => {
    if (child.exitCode !== null) throw new Error(`ultraplan-server worker exited (${child.exitCode}) before it ran\nstderr:\n${stderr}`);
    return /^ultraplan-server worker \S+ running$/m.test(stdout);
  };
  await waitFor(started, { message: 'ultraplan-server worker to start', timeoutMs: 15_000, detail: () => `stderr:\n${stderr}` }).catch(
    (error: unknown) => {
      child.kill('SIGKILL');
      throw error;
    },
  );
  return {
    pid: child.pid as number,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

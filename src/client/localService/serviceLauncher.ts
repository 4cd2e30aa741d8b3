// Finds this user's local session service or starts it (docs/service.md): the private folders
// and the token first, then this version's socket; an older version with nothing live is asked
// to make way, one with live sessions is left running beside this one. Two windows starting it
// at once both spawn it: one process wins the data folder's lock, the other exits (code 3) and
// both windows connect to the winner.
import { spawn } from 'node:child_process';
import { promises as fs, openSync, closeSync } from 'node:fs';
import * as path from 'node:path';
import { processAlive } from '../../core/node/dataDirLock';
import { ServiceSetupError, checkOwnEntry, ensurePrivateDir, readOrCreateToken } from '../../core/node/privateFiles';
import { compareVersions, servicePlace, versionOfDataDir, type ServicePaths, type ServicePlace } from '../../core/node/servicePaths';
import { ServiceStatusSchema, type ServiceStatus } from '../../core/serviceStatus';
import { socketFetch } from './socketFetch';
import { errorMessage } from '../../core/errors';

/** The racing loser's exit code (src/service/local/serviceMode.ts ALREADY_RUNNING_EXIT). */
const ALREADY_RUNNING_EXIT = 3;
/** A log larger than this is moved aside (one old copy kept) when the service starts. */
const MAX_LOG_BYTES = 2 * 1024 * 1024;
/** No start is waited for longer than this, however busy its log. */
const MAX_START_MS = 5 * 60_000;

export interface ServiceLauncherOptions {
  paths: ServicePaths;
  version: string;
  /** The server program (dist/server.mjs) and the node that runs it. */
  serverScript: string;
  execPath?: string;
  /** Exit after this long with no live session and no client; 0: never. */
  idleExitSeconds: number;
  /** The environment the service (and so its agents) runs with. */
  env?: NodeJS.ProcessEnv;
  /**
   * Whether its agents run in a sandbox of their own (`--sandbox`; absent: the service's default,
   * off), and the bubblewrap it runs (`--sandbox-bwrap`; absent: the service looks for one).
   */
  sandbox?: { mode: 'auto' | 'off'; bwrap?: string | undefined };
  /** How long a start may go without answering or writing to its log before it is reported as failed. */
  startTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface ServiceConnection {
  place: ServicePlace;
  token: string;
  status: ServiceStatus;
  /** True when this call started the process (it may still have lost a race to another start). */
  spawned: boolean;
}

/** The service did not come up; the message names the cause and the log file. */
export class ServiceStartError extends Error {
  constructor(
    readonly reason: string,
    readonly logFile: string,
  ) {
    super(`The Ultraplan session service did not start: ${reason}. Its log: ${logFile}`);
  }
}

export async function connectOrStartService(options: ServiceLauncherOptions): Promise<ServiceConnection> {
  const log = options.log ?? (() => {});
  const { paths } = options;
  const place = servicePlace(paths, options.version);
  await ensurePrivateDir(paths.runtimeDir);
  await ensurePrivateDir(paths.stateDir);
  const token = await readOrCreateToken(paths.tokenFile);
  const running = await readServiceStatus(place, token);
  if (running && !running.stopping) return { place, token, status: running, spawned: false };
  await makeWayForThisVersion(paths, options.version, token, log);
  return { place, token, status: await startService(place, options, log), spawned: true };
}

/**
 * This version's service if it runs, without making anything (folders, token) or starting it:
 * null when it does not answer. For a window that only looks (otherWindows.ts).
 */
export async function findRunningService(options: Pick<ServiceLauncherOptions, 'paths' | 'version'>): Promise<ServiceConnection | null> {
  const place = servicePlace(options.paths, options.version);
  try {
    if (!(await checkOwnEntry(options.paths.tokenFile))?.isFile()) return null;
    const token = await readOrCreateToken(options.paths.tokenFile);
    const status = await readServiceStatus(place, token);
    return status && !status.stopping ? { place, token, status, spawned: false } : null;
  } catch {
    return null;
  }
}

/** `/v1/service` on a place; null when nothing answers there (no socket, refused, stopping). */
export async function readServiceStatus(place: ServicePlace, token: string, timeoutMs = 3_000): Promise<ServiceStatus | null> {
  const answer = await serviceRequest(place, token, 'GET', '/v1/service', timeoutMs);
  if (answer === null) return null;
  const parsed = ServiceStatusSchema.safeParse(answer.body);
  if (answer.status !== 200 || !parsed.success) {
    throw new ServiceSetupError(`the service at ${place.socket} answered ${answer.status} to its status request`);
  }
  return parsed.data;
}

/** Asks a service to stop; true when it agreed (nothing live), false when it keeps running. */
export async function requestServiceStop(place: ServicePlace, token: string): Promise<boolean> {
  const answer = await serviceRequest(place, token, 'POST', '/v1/service/stop', 3_000);
  return answer?.status === 200;
}

/** The versions whose services may be running: one data folder each in the state folder. */
export async function knownServiceVersions(paths: ServicePaths): Promise<string[]> {
  const names = await fs.readdir(paths.stateDir).catch(() => [] as string[]);
  return names.flatMap((name) => {
    const version = versionOfDataDir(name);
    return version === null ? [] : [version];
  });
}

async function serviceRequest(
  place: ServicePlace,
  token: string,
  method: 'GET' | 'POST',
  route: string,
  timeoutMs: number,
): Promise<{ status: number; body: unknown } | null> {
  // A socket someone else put at our name would be handed the token: it must be our own.
  if (!place.paths.pipePrefix && !(await checkOwnEntry(place.socket))) return null;
  try {
    const response = await socketFetch(place.socket)(`http://localhost${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: '{}' } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (response.status === 503) {
      await response.body?.cancel();
      return null; // shutting down
    }
    if (response.status === 401) {
      await response.body?.cancel();
      throw new ServiceSetupError(`the service at ${place.socket} refused the token in ${place.paths.tokenFile}`);
    }
    return { status: response.status, body: await response.json().catch(() => null) };
  } catch (err) {
    if (err instanceof ServiceSetupError) throw err;
    return null;
  }
}

/**
 * Older versions with nothing live are asked to stop, so this one takes their sessions over. A
 * newer version is never stopped by an older one: they run side by side.
 */
async function makeWayForThisVersion(paths: ServicePaths, version: string, token: string, log: (line: string) => void): Promise<void> {
  for (const other of await knownServiceVersions(paths)) {
    if (compareVersions(other, version) >= 0) continue;
    const place = servicePlace(paths, other);
    const status = await readServiceStatus(place, token).catch(() => null);
    if (!status) continue;
    if (status.live_sessions > 0 || !(await requestServiceStop(place, token))) {
      log(`service ${other} has live sessions; version ${version} runs beside it`);
      continue;
    }
    log(`service ${other} had nothing live and stops for version ${version}`);
    await waitUntil(() => !processAlive(status.pid), 15_000);
  }
}

async function startService(place: ServicePlace, options: ServiceLauncherOptions, log: (line: string) => void): Promise<ServiceStatus> {
  const token = await readOrCreateToken(place.paths.tokenFile);
  await rotateLog(place.logFile);
  let child = spawnService(place, options, log);
  // A service answers once it has resumed every live session's agent, one after the other, which
  // can take long after a crash; it logs as it goes. So the bound is on silence: a start that
  // neither answers nor writes to its log for this long has failed (and none may take forever).
  const quietLimitMs = options.startTimeoutMs ?? 30_000;
  const started = Date.now();
  let logSize = await sizeOf(place.logFile);
  let lastProgress = started;
  for (;;) {
    const status = await readServiceStatus(place, token, 1_000).catch((err: unknown) => {
      throw new ServiceStartError(errorMessage(err), place.logFile);
    });
    if (status && !status.stopping) return status;
    if (child.spawnError) {
      throw new ServiceStartError(`cannot run ${options.execPath ?? process.execPath}: ${child.spawnError.message}`, place.logFile);
    }
    if (child.exitCode !== undefined && child.exitCode !== ALREADY_RUNNING_EXIT) {
      throw new ServiceStartError(`it exited with code ${child.exitCode}: ${await lastLogLine(place.logFile)}`, place.logFile);
    }
    const size = await sizeOf(place.logFile);
    if (size !== logSize) {
      logSize = size;
      lastProgress = Date.now();
    }
    if (Date.now() - lastProgress > quietLimitMs || Date.now() - started > MAX_START_MS) {
      const quiet = Math.round((Date.now() - lastProgress) / 1000);
      // Left running, a hung start would hold the data folder's lock, and every later start (the
      // person's retry, another window) would lose the race to it and wait on it in turn.
      const stopped = child.exitCode === undefined && child.pid !== undefined && (await stopHungStart(child));
      throw new ServiceStartError(
        `it did not answer on ${place.socket} (nothing in its log for ${quiet} s${stopped ? '; it was stopped' : ''})`,
        place.logFile,
      );
    }
    // Exit 3: another process holds this version's lock. Usually the winner of a race, coming up:
    // keep asking. If that holder has gone since (it was stopping), start again.
    if (child.exitCode === ALREADY_RUNNING_EXIT && !(await lockHolderAlive(place.dataDir))) child = spawnService(place, options, log);
    await delay(50);
  }
}

interface SpawnedService {
  pid: number | undefined;
  exitCode: number | undefined;
  spawnError: Error | undefined;
}

/** How long a hung start is given to end on SIGTERM (its agents with it) before its group is killed. */
const HUNG_START_GRACE_MS = 3_000;

/** Ends a start this window spawned (detached: the leader of its own process group); answers whether it is gone. */
async function stopHungStart(child: SpawnedService): Promise<boolean> {
  const pid = child.pid as number;
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-pid, signal);
    } catch {
      // already gone
    }
  };
  const exited = (): boolean => child.exitCode !== undefined;
  signalGroup('SIGTERM');
  await waitUntil(exited, HUNG_START_GRACE_MS);
  if (!exited()) signalGroup('SIGKILL');
  await waitUntil(exited, HUNG_START_GRACE_MS);
  return exited();
}

/** Checks `done` every 50 ms until it holds or `boundMs` have passed. */
async function waitUntil(done: () => boolean, boundMs: number): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!done() && Date.now() < deadline) await delay(50);
}

function spawnService(place: ServicePlace, options: ServiceLauncherOptions, log: (line: string) => void): SpawnedService {
  const state: SpawnedService = { pid: undefined, exitCode: undefined, spawnError: undefined };
  const logFd = openSync(place.logFile, 'a', 0o600);
  try {
    const args = [
      options.serverScript,
      '--socket',
      place.socket,
      '--data-dir',
      place.dataDir,
      '--token-file',
      place.paths.tokenFile,
      '--service-version',
      place.version,
      '--idle-exit-seconds',
      String(options.idleExitSeconds),
      ...sandboxArgs(options.sandbox),
    ];
    log(`starting the session service ${place.version}: ${place.socket}`);
    // Detached, in a process group of its own: it outlives this window, a reload, a crash of the
    // extension host. ELECTRON_RUN_AS_NODE makes VS Code's own binary run it as plain node.
    const child = spawn(options.execPath ?? process.execPath, args, {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: { ...(options.env ?? process.env), ELECTRON_RUN_AS_NODE: '1' },
      windowsHide: true,
    });
    state.pid = child.pid;
    child.once('error', (err) => (state.spawnError = err));
    child.once('exit', (code, signal) => (state.exitCode = code ?? (signal ? 128 : 1)));
    child.unref();
  } finally {
    closeSync(logFd);
  }
  return state;
}

function sandboxArgs(sandbox: ServiceLauncherOptions['sandbox']): string[] {
  if (!sandbox) return [];
  return ['--sandbox', sandbox.mode, ...(sandbox.mode !== 'off' && sandbox.bwrap ? ['--sandbox-bwrap', sandbox.bwrap] : [])];
}

/** Whether the process named in a data folder's lock (server.lock) still runs. */
async function lockHolderAlive(dataDir: string): Promise<boolean> {
  const text = await fs.readFile(path.join(dataDir, 'server.lock'), 'utf8').catch(() => '');
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 && processAlive(pid);
}

async function rotateLog(file: string): Promise<void> {
  if ((await sizeOf(file)) > MAX_LOG_BYTES) await fs.rename(file, `${file}.1`).catch(() => {});
}

function sizeOf(file: string): Promise<number> {
  return fs.stat(file).then(
    (s) => s.size,
    () => 0,
  );
}

/** The service's last error line, for the message a person sees. */
async function lastLogLine(file: string): Promise<string> {
  const lines = (await fs.readFile(file, 'utf8').catch(() => '')).split('\n').map((l) => l.trim());
  // Ours start with "ultraplan-server:"; node's own crash report names the error on one line
  // among stack frames, source lines and its version.
  const said = lines.filter((l) => /^ultraplan-server: |^\w*Error\b/.test(l));
  return (said[said.length - 1] ?? lines.filter(Boolean).pop() ?? 'no output').replace(/^ultraplan-server: /, '').slice(0, 500);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

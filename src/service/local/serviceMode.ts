// ultraplan-server as the local session service (`--socket`, docs/service.md): one per user and
// version, on a Unix socket (a named pipe on Windows) in a private folder, with its token in a
// private file. Started detached by the extension; it exits on its own once no session is live
// and no client is connected for the idle time, and at once when a newer version asks while
// nothing is live.
import type { AgentSandboxSettings } from '../../agents/sandbox/agentSandbox';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { AgentFactory } from '../../agents/agent';
import { DataDirLockError, lockDataDir } from '../../core/node/dataDirLock';
import { SessionHost, type SessionHostLimits } from '../host/sessionHost';
import { checkOwnEntry, ensurePrivateDir, ServiceSetupError } from '../../core/node/privateFiles';
import { compareVersions, versionOfDataDir } from '../../core/node/servicePaths';
import { FileSessionStore } from '../store/sessionStore';
import { SessionsServer, type SessionsServerOptions } from '../http/server';
import { JournalServerStore } from '../store/journalStore';
import { liveSessionCount, LocalServiceFace } from '../http/serviceRoutes';
import { Shutdown } from '../commandLine';
import { localServiceWorkspace, recordingApprovals } from '../changes/sessionWorkspace';
import { envFingerprint, randomSalt } from '../../core/envFingerprint';
import { AGENT_ENV_NAMES } from '../../agents/catalogue/agentEnvNames';
import type { ServiceSandbox } from '../../core/serviceStatus';

/** Exit code of a start that found the same version already running (the racing loser). */
export const ALREADY_RUNNING_EXIT = 3;

export class AlreadyRunningError extends Error {}

export interface ServiceModeOptions {
  socket: string;
  dataDir: string;
  tokenFile: string;
  version: string;
  /** Exit after this long with no live session and no connection; 0: never. */
  idleExitMs: number;
  defaultAgent?: AgentFactory;
  /** Each agent in a sandbox of its own (`--sandbox`). */
  sandbox?: AgentSandboxSettings;
  /** What `/v1/service` says of the sandbox: asked for, and whether agents run in one. */
  sandboxState?: ServiceSandbox;
  limits: Partial<SessionHostLimits>;
  server: Omit<SessionsServerOptions, 'store' | 'token' | 'service' | 'log'>;
  log: (line: string) => void;
}

const POSIX = process.platform !== 'win32';

export async function runService(options: ServiceModeOptions): Promise<void> {
  const { log } = options;
  const token = await readServiceToken(options.tokenFile);
  await ensurePrivateDir(path.dirname(options.dataDir));
  await ensurePrivateDir(options.dataDir);
  if (POSIX) await ensurePrivateDir(path.dirname(options.socket));
  let releaseLock: () => Promise<void>;
  try {
    releaseLock = await lockDataDir(options.dataDir);
  } catch (err) {
    if (err instanceof DataDirLockError)
      throw new AlreadyRunningError(`the session service ${options.version} is already running (${err.message})`);
    throw err;
  }
  await adoptIdleSessions(options.dataDir, log);
  // Holding this version's lock, any socket file at our name is a crashed service's leftover.
  if (POSIX && (await checkOwnEntry(options.socket))) {
    log(`ultraplan-service: removing the stale socket ${options.socket}`);
    await fs.rm(options.socket, { force: true });
  }

  // Runs only once everything below exists: its callers are the face, the idle timer and signals.
  const shutdown = new Shutdown(
    'ultraplan-service',
    async (why) => {
      clearInterval(idleCheck);
      log(`ultraplan-service: stopping (${why})`);
      await server.close();
      await sessionHost.close();
      if (POSIX) await fs.rm(options.socket, { force: true });
      await releaseLock();
      log('ultraplan-service: stopped');
    },
    log,
  );
  const face: LocalServiceFace = new LocalServiceFace({
    version: options.version,
    host: () => sessionHost,
    // Agents get this process's environment (launchedAgent.ts); the server's secrets are gone from it by now.
    environment: await envFingerprint(process.env, AGENT_ENV_NAMES, randomSalt()),
    ...(options.defaultAgent ? { defaultAgent: options.defaultAgent } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    ...(options.sandboxState ? { sandboxState: options.sandboxState } : {}),
    stop: (why) => void shutdown.begin(why),
    log,
  });
  const sessionHost = new SessionHost({
    agentFactory: face.restartAgent,
    store: new FileSessionStore(options.dataDir, { log }),
    log,
    limits: options.limits,
    approvals: recordingApprovals(localServiceWorkspace, log),
  });
  await sessionHost.load();
  const store = new JournalServerStore(sessionHost, options.dataDir, localServiceWorkspace);
  const server = new SessionsServer({ ...options.server, store, token, service: face, log });
  let connections = 0;
  server.httpServer.on('connection', (socket) => {
    connections++;
    socket.once('close', () => connections--);
  });
  await server.listenSocket(options.socket);
  if (POSIX) await fs.chmod(options.socket, 0o600);
  // Before the listening line: whoever reads it as "ready" may signal at once, and must get a clean stop.
  shutdown.onSignals(false);
  process.stdout.write(`ultraplan-server listening on unix:${options.socket}\n`);
  log(
    `ultraplan-service ${options.version}: pid ${process.pid}; data in ${options.dataDir}; ${sessionHost.listSessions().length} stored sessions`,
  );

  let idleSince = Date.now();
  const idleCheck = setInterval(
    () => {
      if (liveSessionCount(sessionHost) > 0 || connections > 0) idleSince = Date.now();
      else if (Date.now() - idleSince >= options.idleExitMs) shutdown.begin(`idle for ${Math.round(options.idleExitMs / 1000)} s`);
    },
    Math.max(50, Math.min(5_000, Math.floor(options.idleExitMs / 4))),
  );
  if (options.idleExitMs <= 0) clearInterval(idleCheck);
}

async function readServiceToken(file: string): Promise<string> {
  const stat = await checkOwnEntry(file);
  if (!stat?.isFile()) throw new ServiceSetupError(`the token file ${file} is missing`);
  if (POSIX && (stat.mode & 0o077) !== 0) throw new ServiceSetupError(`the token file ${file} can be read by others; it must be 0600`);
  const token = (await fs.readFile(file, 'utf8')).trim();
  if (!token) throw new ServiceSetupError(`the token file ${file} is empty`);
  return token;
}

/**
 * Sessions of older versions' services that are not running (their lock is free) move into this
 * version's folder, so replacing a service keeps its sessions. A version still running keeps its
 * own: it runs side by side until its sessions end. A newer version's journals are never read by
 * an older one.
 */
async function adoptIdleSessions(dataDir: string, log: (line: string) => void): Promise<void> {
  const stateDir = path.dirname(dataDir);
  const own = versionOfDataDir(path.basename(dataDir));
  if (own === null) return;
  for (const name of await fs.readdir(stateDir)) {
    const other = path.join(stateDir, name);
    const version = versionOfDataDir(name);
    if (version === null || compareVersions(version, own) >= 0) continue;
    let release: () => Promise<void>;
    try {
      release = await lockDataDir(other);
    } catch {
      continue; // running: its sessions stay with it
    }
    try {
      const from = path.join(other, 'sessions');
      const names = await fs.readdir(from).catch(() => [] as string[]);
      if (names.length === 0) continue;
      await fs.mkdir(path.join(dataDir, 'sessions'), { recursive: true, mode: 0o700 });
      for (const id of names) await fs.rename(path.join(from, id), path.join(dataDir, 'sessions', id));
      log(`ultraplan-service: took over ${names.length} session(s) from ${other}`);
    } finally {
      await release();
    }
  }
}

// Starts a cached code-server on 127.0.0.1 with Ultraplan installed from its .vsix
// (installedExtension.ts) and the test runner extension linked in, in a fresh user-data and
// extensions folder. Which code-server: ULTRAPLAN_CODE_SERVER (the engine floor, 4.100.3, unless
// it names the newest, 4.139.1; scripts/code-server-config.cjs), the same for the whole process.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  WORKBENCH_SETTINGS,
  codeServerArgs,
  codeServerEnv,
  codeServerMarker,
  codeServerNode,
  selectedVersion,
} from '../../../scripts/code-server-config.cjs';
import { buildRunnerExtension, RUNNER_DIR } from '../runner-extension/build';
import { RUNNER_ENV } from '../runner-extension/src/wire';
import { HostProbe } from './hostProbe';
import { installedExtension } from './installedExtension';
import { outputDir } from './paths';
import { waitFor } from '../../support/wait';
import { SERVICE_DIR_ENV, stopServices } from '../../support/serviceProcess';

export interface CodeServerOptions {
  /** The folder code-server opens. */
  workspace: string;
  /** Extra environment for code-server and so for the extension host (e.g. ULTRAPLAN_* variables). */
  env?: Record<string, string>;
  /** User settings written to <user-data-dir>/User/settings.json, over the harness defaults. */
  settings?: Record<string, unknown>;
  /** Names an in-host suite (test/e2e/host/<name>.host.ts) that the runner extension runs once. */
  hostSuite?: string;
  /** mocha grep for the in-host suite. */
  hostGrep?: string;
  /** Test output folder name (test-output/e2e/<suite>); also names the code-server log. */
  suite?: string;
  /** Leave VS Code's workspace trust on (the default here is --disable-workspace-trust). */
  workspaceTrust?: boolean;
  /** How long to wait for code-server's HTTP to answer. */
  startTimeoutMs?: number;
  /** Install Ultraplan (default true); benches that stage their own build pass false. */
  installUltraplan?: boolean;
}

export interface CodeServer {
  /** code-server's pid, which leads its process group. */
  pid: number | undefined;
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  /** The address a browser opens: <url>/?folder=<workspace> */
  workspaceUrl: string;
  workspace: string;
  userDataDir: string;
  extensionsDir: string;
  /** Talks to the runner extension inside the extension host (ready once a browser has connected). */
  probe: HostProbe;
  /** Where the in-host suite writes its results, when hostSuite was given. */
  hostResultsFile: string | undefined;
  /** code-server's stdout and stderr so far (also written to test-output/e2e/<suite>/code-server.log). */
  output(): string;
  /** The session service folder the extension host uses (ULTRAPLAN_SERVICE_DIR). */
  serviceDir: string;
  /** Stops the whole process group and the session services it started, removes the temporary folders. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Settings that keep welcome pages, tips and update checks out of the tests' way, and leave idle
 * the built-in services Ultraplan does not use (it runs git itself): git's repository scanning,
 * TypeScript's project server and typings downloads, npm's script detection, and motion. About a
 * second of CPU a window on 2 cores, where the suite's windows are its largest cost.
 */
export const DEFAULT_SETTINGS = {
  ...WORKBENCH_SETTINGS,
  'git.enabled': false,
  'typescript.tsserver.useSyntaxServer': 'always',
  'typescript.disableAutomaticTypeAcquisition': true,
  'npm.autoDetect': 'off',
  'workbench.reduceMotion': 'on',
  'editor.cursorBlinking': 'solid',
  // A verification after each execution starts reviewer sessions with the window's own agent,
  // whose scripted model would hand them the turns the suite wrote for its next session; a suite
  // about verification turns it on.
  'ultraplan.verify.afterExecution': false,
};

const RUNNER_ID = 'ultraplan.ultraplan-test-runner';

let runnerBuild: Promise<unknown> | undefined;

/** The runner and in-host suites are rebuilt once per test process, so edits are always picked up. */
function ensureRunnerBuilt(): Promise<unknown> {
  runnerBuild ??= buildRunnerExtension();
  return runnerBuild;
}

function readVersion(folder: string): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')) as { version?: unknown };
  if (typeof manifest.version !== 'string') throw new Error(`${folder}/package.json has no version`);
  return manifest.version;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

async function httpAnswers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return response.status < 500;
  } catch {
    return false;
  }
}

function checkPrerequisites(): void {
  if (!fs.existsSync(codeServerMarker())) {
    throw new Error(
      `code-server ${selectedVersion()} is not installed (no ${codeServerMarker()}). Run: node scripts/setup-code-server.mjs`,
    );
  }
}

/** Kills the process group (code-server forks its extension host and file watchers). */
async function killGroup(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // the group is already gone
    }
  };
  signal('SIGTERM');
  const stopped = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000))]);
  // Stragglers in the group (pty hosts, watchers) get SIGKILL either way.
  signal('SIGKILL');
  if (!stopped) await Promise.race([exited, new Promise((r) => setTimeout(r, 2_000))]);
}

export async function startCodeServer(options: CodeServerOptions): Promise<CodeServer> {
  checkPrerequisites();
  await ensureRunnerBuilt();
  const suite = options.suite ?? 'e2e';
  const logDir = outputDir(suite);
  const tempRoot = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'ultraplan-e2e-'));
  const userDataDir = path.join(tempRoot, 'user-data');
  const extensionsDir = path.join(tempRoot, 'extensions');
  fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
  fs.mkdirSync(extensionsDir, { recursive: true });
  fs.writeFileSync(path.join(userDataDir, 'User', 'settings.json'), JSON.stringify({ ...DEFAULT_SETTINGS, ...options.settings }, null, 2));
  if (options.installUltraplan ?? true) {
    const { folder } = await installedExtension();
    await fs.promises.cp(folder, path.join(extensionsDir, path.basename(folder)), { recursive: true });
  }
  fs.symlinkSync(RUNNER_DIR, path.join(extensionsDir, `${RUNNER_ID}-${readVersion(RUNNER_DIR)}`));

  const probeFile = path.join(tempRoot, 'probe.json');
  const probeToken = randomBytes(16).toString('hex');
  const hostResultsFile = options.hostSuite ? path.join(tempRoot, 'host-results.json') : undefined;
  const env: Record<string, string> = {
    ...codeServerEnv(process.env),
    [RUNNER_ENV.probeFile]: probeFile,
    [RUNNER_ENV.probeToken]: probeToken,
    ...(options.hostSuite && hostResultsFile ? { [RUNNER_ENV.suite]: options.hostSuite, [RUNNER_ENV.results]: hostResultsFile } : {}),
    ...(options.hostGrep ? { [RUNNER_ENV.grep]: options.hostGrep } : {}),
    // code-server writes a default config on first run; keep it out of the user's home.
    XDG_CONFIG_HOME: path.join(tempRoot, 'config'),
    // The session service of this window only (a suite may share one between windows by passing it).
    [SERVICE_DIR_ENV]: path.join(tempRoot, 'service'),
    ...options.env,
  };
  const serviceDir = env[SERVICE_DIR_ENV] as string;
  // The outer mocha's own variables would confuse nothing, but a parent's suite name would.
  if (!options.hostSuite) {
    delete env[RUNNER_ENV.suite];
    delete env[RUNNER_ENV.results];
  }

  let output = '';
  const logStream = fs.createWriteStream(path.join(logDir, 'code-server.log'), { flags: 'a' });
  const startOnce = async (): Promise<{ child: ChildProcess; port: number; exited: Promise<void> }> => {
    const port = await freePort();
    const args = codeServerArgs({
      port,
      userDataDir,
      extensionsDir,
      workspace: options.workspace,
      workspaceTrust: options.workspaceTrust ?? false,
    });
    const child = spawn(codeServerNode(), args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const collect = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output += text;
      logStream.write(text);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitFor(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null) {
            throw new Error(`code-server exited (${child.exitCode ?? child.signalCode}) before answering:\n${output.slice(-2_000)}`);
          }
          return (await httpAnswers(`${url}/healthz`)) || undefined;
        },
        { timeoutMs: options.startTimeoutMs ?? 60_000, intervalMs: 200, message: `code-server on ${url} to answer` },
      );
    } catch (err) {
      await killGroup(child, exited);
      throw err;
    }
    return { child, port, exited };
  };

  let started: Awaited<ReturnType<typeof startOnce>>;
  try {
    started = await startOnce();
  } catch (err) {
    // Another process may have taken the free port between our check and code-server's bind.
    if (!/EADDRINUSE/.test(output)) {
      logStream.end();
      await fs.promises.rm(tempRoot, { recursive: true, force: true });
      throw err;
    }
    started = await startOnce();
  }
  const { child, port, exited } = started;
  const url = `http://127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  return {
    pid: child.pid,
    port,
    url,
    workspaceUrl: `${url}/?folder=${encodeURIComponent(options.workspace)}`,
    workspace: options.workspace,
    userDataDir,
    extensionsDir,
    probe: new HostProbe(probeFile, probeToken),
    hostResultsFile,
    serviceDir,
    output: () => output,
    stop: () => {
      stopped ??= (async () => {
        await killGroup(child, exited);
        // A service shared with another window is that window's to stop.
        if (serviceDir.startsWith(tempRoot)) await stopServices(serviceDir);
        logStream.end();
        await fs.promises.rm(tempRoot, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

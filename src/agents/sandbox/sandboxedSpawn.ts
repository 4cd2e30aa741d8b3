// Turns an agent's command line into the command line of that agent inside its session's
// sandbox: bubblewrap's program, arguments and environment, plus the session's egress proxy
// (started here, closed by cleanup). The environment is built from an allow-list: the service's
// own secrets are never in it, whatever the caller's environment holds.
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bwrapArguments, PROXY_PORT_INSIDE } from './bwrapArgs';
import { startEgressProxy, type EgressProxy } from './egressProxy';
import { egressPolicy } from './hostPolicy';
import { SandboxEnvSchema, SandboxSpecSchema, type SandboxEnv, type SandboxSpec } from './spec';
import type { SandboxTools } from './support';

export interface SandboxedSpawn {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** bubblewrap's own working directory on the host (the agent's is the workspace). */
  cwd: string;
  /** The session's egress proxy, when it may reach any host. */
  proxy: EgressProxy | undefined;
  /** Closes the proxy and removes its socket; call once the agent exited. */
  cleanup(): Promise<void>;
}

/** Copied from the service's environment when set: what any program needs to run. */
const BASE_NAMES = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TERM'];
/** Set by the sandbox itself; a caller cannot pass or override them. */
const RESERVED = new Set([
  'HOME',
  'TMPDIR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'all_proxy',
  'NO_PROXY',
  'no_proxy',
]);

function refuseServiceSecrets(name: string): void {
  // The service's token, database URL and the like all carry this prefix.
  if (name.startsWith('ULTRAPLAN_')) throw new Error(`${name} belongs to the service and is never handed to an agent.`);
  if (RESERVED.has(name)) throw new Error(`${name} is set by the sandbox itself.`);
}

/** The agent's whole environment. */
export function sandboxEnvironment(
  spec: SandboxSpec,
  input: SandboxEnv,
  source: NodeJS.ProcessEnv,
  network: boolean,
): Record<string, string> {
  const parsed = SandboxEnvSchema.parse(input);
  const env: Record<string, string> = {};
  for (const name of BASE_NAMES) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  for (const name of parsed.pass) {
    refuseServiceSecrets(name);
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries(parsed.set)) {
    refuseServiceSecrets(name);
    env[name] = value;
  }
  env.HOME = spec.home;
  env.TMPDIR = spec.tmp;
  if (network) {
    const proxy = `http://127.0.0.1:${PROXY_PORT_INSIDE}`;
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy']) env[name] = proxy;
    // Node 22.21+/24.5+ only read the proxy variables for fetch/http when asked to.
    env.NODE_USE_ENV_PROXY = '1';
  }
  return env;
}

/**
 * Prepares `argv` to run in the session's sandbox. The caller spawns `command` with `args` and
 * `env` (no shell) exactly as it spawned the agent before, and calls `cleanup` after it exits.
 */
export async function prepareSandboxedSpawn(
  specInput: SandboxSpec,
  argv: readonly string[],
  envInput: SandboxEnv,
  tools: SandboxTools,
  source: NodeJS.ProcessEnv = process.env,
): Promise<SandboxedSpawn> {
  const spec = SandboxSpecSchema.parse(specInput);
  const workspace = await stat(spec.workspace).catch(() => undefined);
  if (!workspace?.isDirectory()) throw new Error(`The workspace ${spec.workspace} is not a folder.`);
  await mkdir(spec.home, { recursive: true, mode: 0o700 });
  await mkdir(spec.tmp, { recursive: true, mode: 0o700 });

  const network = spec.allowedHosts.length > 0;
  const env = sandboxEnvironment(spec, envInput, source, network);
  let proxy: EgressProxy | undefined;
  let socketDir: string | undefined;
  if (network) {
    const policy = egressPolicy(spec.allowedHosts, spec.allowPrivateNetwork ?? false);
    // mkdtemp makes it 0700: no other user of the machine can use this session's way out.
    socketDir = await mkdtemp(path.join(tmpdir(), 'ultraplan-egress-'));
    proxy = await startEgressProxy(path.join(socketDir, 'egress.sock'), policy, spec.heldKeys);
  }
  const args = bwrapArguments(spec, tools.layout, proxy?.socketPath, argv);
  let cleaned = false;
  return {
    command: tools.bwrap,
    args,
    env,
    cwd: '/',
    proxy,
    cleanup: async () => {
      if (cleaned) return;
      cleaned = true;
      await proxy?.close();
      if (socketDir) await rm(socketDir, { recursive: true, force: true });
    },
  };
}

// What one ACP agent's sandbox is made of, worked out from its command line and environment:
// the folders its program is installed in (read-only), the model API it may reach, the variables
// it needs (its key and base URL), and the session's own HOME and temp folder under the service's
// data directory. The service decides whether there is a sandbox; this decides what is in it.
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { isInside } from '../../core/node/realPaths';
import { userInfo } from 'node:os';
import { KNOWN_AGENTS, findOnPath, knownAgentOfArgv } from '../catalogue/knownAgents';
import { heldKeyPlan } from './heldKeys';
import { prepareSandboxedSpawn, type SandboxedSpawn } from './sandboxedSpawn';
import { hiddenPaths } from './hiddenPaths';
import { loginFileBinds, loginHosts } from './loginFiles';
import type { SandboxTools } from './support';

/** The service's sandbox settings, shared by every agent it starts. */
export interface AgentSandboxSettings {
  tools: SandboxTools;
  /** Each session's HOME and temp folder live in `<root>/<sessionId>/{home,tmp}`. */
  root: string;
  /** Folders the operator shares with every agent, writable (`--sandbox-share`). */
  sharedPaths?: readonly string[];
  /** What each session's HOME starts as, copied once (`--sandbox-home`: agent settings, trusted folders). */
  homeTemplate?: string;
  /** Files and folders of the workspace hidden inside (a reviewer's withheld files), by their workspace path. */
  hidden?: (filePath: string) => boolean;
  /** Model API keys by variable name that agents get only stand-ins for (heldKeys.ts). */
  heldKeys?: ReadonlyMap<string, string>;
}

function hostOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === 'http:' ? '80' : '443');
    return `${parsed.hostname}:${port}`;
  } catch {
    return undefined;
  }
}

export interface ModelAccess {
  allowedHosts: string[];
  /** An operator-configured base URL may name an intranet gateway. */
  allowPrivateNetwork: boolean;
  pass: string[];
}

/**
 * The variables an `env NAME=VALUE … program` command line (a custom agent command) sets, over the
 * environment the agent starts with: its base URL may be given there.
 */
function commandLineEnv(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Readonly<Record<string, string | undefined>> {
  if (argv[0] === undefined || path.basename(argv[0]) !== 'env') return env;
  const merged: Record<string, string | undefined> = { ...env };
  for (const arg of argv.slice(1)) {
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(arg);
    if (!assignment) break;
    merged[assignment[1] as string] = assignment[2];
  }
  return merged;
}

/**
 * The hosts and variables of the agent's model API, from its catalogue entry (every known agent's
 * for a command we do not know), or the host of a base URL its environment or command line sets.
 */
export function modelAccess(argv: readonly string[], startEnv: Readonly<Record<string, string | undefined>>): ModelAccess {
  const env = commandLineEnv(argv, startEnv);
  const known = knownAgentOfArgv(argv);
  const allowedHosts: string[] = [];
  const pass: string[] = [];
  let allowPrivateNetwork = false;
  for (const agent of known ? [known] : KNOWN_AGENTS) {
    const configured = agent.baseUrlEnv.map((name) => env[name]).find((value) => value);
    const host = configured ? hostOf(configured) : undefined;
    if (host) allowPrivateNetwork = true;
    for (const allowed of host ? [host] : agent.modelHosts) if (!allowedHosts.includes(allowed)) allowedHosts.push(allowed);
    for (const name of [...agent.baseUrlEnv, ...agent.keyEnv, ...agent.passEnv]) if (!pass.includes(name)) pass.push(name);
  }
  return { allowedHosts, allowPrivateNetwork, pass };
}

/**
 * The folder a program file belongs to: the first `node_modules` on its path (an npm install: the
 * program and every package it loads), else the nearest folder with a package.json (a script of
 * a project), else its own folder (the parent of a `bin`).
 */
function installRoot(file: string): string {
  const parts = file.split(path.sep);
  const modules = parts.indexOf('node_modules');
  if (modules > 0) return parts.slice(0, modules + 1).join(path.sep);
  for (let dir = path.dirname(file); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
  }
  const dir = path.dirname(file);
  return path.basename(dir) === 'bin' && path.dirname(dir) !== '/' ? path.dirname(dir) : dir;
}

/**
 * Folders the agent's program needs, read-only: the install roots of every absolute path on its
 * command line (as written and as resolved), and the real target of a project's linked
 * node_modules. Folders the host layout already shows, the session's own (`own`) and any holding
 * the person's HOME are left out.
 */
export function programFolders(argv: readonly string[], shown: readonly string[], own: readonly string[] = []): string[] {
  const roots = new Set<string>();
  for (const arg of argv) {
    if (!path.isAbsolute(arg) || !existsSync(arg)) continue;
    for (const file of [path.normalize(arg), realpathSync(arg)]) {
      const root = installRoot(file);
      roots.add(root);
      const modules = path.join(root, 'node_modules');
      if (path.basename(root) !== 'node_modules' && existsSync(modules) && lstatSync(modules).isSymbolicLink()) {
        roots.add(realpathSync(modules));
      }
    }
  }
  // The session's own folders are bound anyway; a folder holding one would show its neighbours.
  // A program in `~/bin` would bind the whole HOME (its logins, keys): it stays unfound instead.
  const homes = [userInfo().homedir, ...(process.env.HOME ? [process.env.HOME] : [])];
  const needed = [...roots].filter(
    (root) =>
      root !== '/' &&
      !shown.some((dir) => isInside(dir, root)) &&
      !own.some((dir) => isInside(dir, root) || isInside(root, dir)) &&
      !homes.some((home) => isInside(root, home)),
  );
  // A folder inside another listed one comes with it.
  return needed.filter((root) => !needed.some((other) => other !== root && isInside(other, root))).sort();
}

/**
 * The command line with its program (argv[0], or the word after an `env NAME=VALUE …` prefix)
 * found on the agent's PATH when named bare, so the folder it is installed in (an npm prefix or a
 * Node version manager's under HOME) is bound and found inside.
 */
export function withProgramFound(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): readonly string[] {
  let at = 0;
  if (argv[0] !== undefined && path.basename(argv[0]) === 'env') {
    at = 1;
    while (at < argv.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[at] as string)) at++;
  }
  const program = argv[at];
  if (program === undefined || path.isAbsolute(program) || program.includes('/')) return argv;
  const found = findOnPath(program, { PATH: commandLineEnv(argv, env).PATH ?? '' });
  if (!found) return argv;
  return [...argv.slice(0, at), found, ...argv.slice(at + 1)];
}

/**
 * The npm registry, for an agent run through `npx` (a known agent not installed: the pinned
 * package is fetched on first use into the session's HOME): the registry the environment names
 * (`npm_config_registry`, which may be a private mirror), else npm's own.
 */
export function packageRunnerAccess(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ModelAccess {
  const program = argv[0] === undefined ? '' : path.basename(argv[0]);
  if (program !== 'npx' && program !== 'npx.cmd') return { allowedHosts: [], allowPrivateNetwork: false, pass: [] };
  const configured = env.npm_config_registry ? hostOf(env.npm_config_registry) : undefined;
  return {
    allowedHosts: [configured ?? 'registry.npmjs.org:443'],
    allowPrivateNetwork: configured !== undefined,
    pass: configured ? ['npm_config_registry'] : [],
  };
}

/** Where a session's sandbox keeps its HOME and temp folder. */
export function sandboxFolders(settings: AgentSandboxSettings, sessionId: string): { home: string; tmp: string } {
  if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/.test(sessionId))
    throw new Error(`No sandbox folder for session id ${JSON.stringify(sessionId)}.`);
  const base = path.join(settings.root, sessionId);
  return { home: path.join(base, 'home'), tmp: path.join(base, 'tmp') };
}

export interface AgentSandboxRequest {
  sessionId: string;
  argv: readonly string[];
  workspace: string;
  /** The environment the agent would have had unsandboxed; only the allow-listed part goes in. */
  env: Readonly<Record<string, string | undefined>>;
  mode: 'planning' | 'executing';
  /** The service's uid: Claude Code runs as root only when told it is sandboxed. */
  uid?: number | undefined;
}

/** One agent's sandboxed command line, its egress proxy started. */
export async function prepareAgentSandbox(settings: AgentSandboxSettings, request: AgentSandboxRequest): Promise<SandboxedSpawn> {
  const access = modelAccess(request.argv, request.env);
  const registry = packageRunnerAccess(request.argv, request.env);
  const { home, tmp } = sandboxFolders(settings, request.sessionId);
  // A copy, not a bind: what one session's agent writes there no other session sees.
  if (settings.homeTemplate && !existsSync(home)) await cp(settings.homeTemplate, home, { recursive: true, verbatimSymlinks: true });
  const held = heldKeyPlan(request.argv, request.env, settings.heldKeys ?? new Map());
  const set: Record<string, string> = { ...held.set };
  if (request.uid === 0) set.IS_SANDBOX = '1';
  const agent = knownAgentOfArgv(request.argv);
  const logins = loginFileBinds(agent, request.env, request.env.HOME ?? userInfo().homedir, home);
  const source: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(request.env)) if (value !== undefined) source[name] = value;
  return prepareSandboxedSpawn(
    {
      sessionId: request.sessionId,
      workspace: path.resolve(request.workspace),
      mode: request.mode,
      home,
      tmp,
      allowedHosts: [...access.allowedHosts, ...registry.allowedHosts, ...loginHosts(agent, logins)],
      allowPrivateNetwork: access.allowPrivateNetwork || registry.allowPrivateNetwork,
      readOnlyPaths: programFolders(withProgramFound(request.argv, request.env), settings.tools.layout.readOnly, [
        path.resolve(request.workspace),
        home,
        tmp,
      ]),
      ...(settings.sharedPaths?.length ? { writablePaths: [...settings.sharedPaths] } : {}),
      ...(settings.hidden ? await hiddenPaths(path.resolve(request.workspace), settings.hidden) : {}),
      ...(held.keys.length ? { heldKeys: held.keys } : {}),
      ...(logins.length ? { loginFiles: logins } : {}),
    },
    request.argv,
    { pass: [...access.pass, ...registry.pass], set },
    settings.tools,
    source,
  );
}

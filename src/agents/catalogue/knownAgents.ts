// The ACP agents Ultraplan knows by name, each one entry of agents.json (its package and pinned
// version, how it starts, how it names itself in `initialize`, its login, the variables that carry
// its key and model address, the hosts of its model API), and which of them this machine can run.
// The settings' text, Choose Backend, the install hints, the test setup and the server image all
// read that file. Detection is a PATH lookup only: no network, no spawning, so it is cheap enough
// for a quick pick.
import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { labelFromArgv } from './agentLabel';
import catalogue from './agents.json';

/** An environment variable's name. */
export const envName = z.string().regex(/^[A-Z][A-Z0-9_]*$/);
/** A host and its port (`api.anthropic.com:443`), as the sandbox's egress allows it. */
export const hostPort = z.string().regex(/^[a-z0-9.-]+:\d+$/);

const AgentEntrySchema = z.strictObject({
  /** For people, where a short name is wanted: "Claude (ACP)". */
  label: z.string().min(1),
  /** In sentences and settings: "Claude's ACP adapter". */
  name: z.string().min(1),
  /** The npm package people install, pinned to the version Ultraplan is tested with. */
  package: z.string().min(1),
  version: z.string().regex(/^\d+\.\d+\.\d+/),
  /** The program the package puts on PATH, and the arguments that start it as an ACP agent. */
  bin: z.string().min(1),
  args: z.array(z.string()),
  /** The Node.js versions the package runs on (its `engines.node`). */
  node: z.string().min(1),
  /** What a person does before it can plan: how it logs in or which key it reads. */
  login: z.string().min(1),
  /** The names its `initialize` answer gives in agentInfo.name, now and before: its quirks are chosen by them. */
  agentInfoNames: z.array(z.string().min(1)).min(1),
  /** The environment variables that hold its key, and the one that points it at another model address. */
  keyEnv: z.array(envName),
  baseUrlEnv: z.array(envName),
  /** Other variables of its own it reads (its model's name, its own switches), passed into its sandbox. */
  passEnv: z.array(envName),
  /** Where its model API is (host:port), for the sandbox's egress. */
  modelHosts: z.array(hostPort).min(1),
});
export type AgentEntry = z.infer<typeof AgentEntrySchema>;

/** The catalogue, checked once when first loaded: a broken entry fails every test that reads it. */
const ENTRIES = z.record(z.string().regex(/^[a-z][a-z0-9-]*$/), AgentEntrySchema).parse(catalogue);

export type KnownAgentId = keyof typeof catalogue;
export const KNOWN_AGENT_IDS = Object.keys(ENTRIES) as KnownAgentId[];

/** How to install and start a known agent. */
export type AgentPackage = Pick<AgentEntry, 'package' | 'version' | 'bin' | 'args' | 'node'>;

export interface KnownAgent extends AgentEntry {
  id: KnownAgentId;
  pkg: AgentPackage;
  /** The program installed on PATH, and its argv. */
  installed: { program: string; argv: readonly string[] };
  /** Fallback through npx at the pinned version (downloads the package on first use). */
  npx: { argv: readonly string[] };
  /** The exact command that installs it. */
  installCommand: string;
  /** What to tell a person who has neither: the command, the Node it needs, what else. */
  installHint: string;
}

function knownAgent(id: KnownAgentId, entry: AgentEntry): KnownAgent {
  const installCommand = `npm install -g ${entry.package}@${entry.version}`;
  return {
    ...entry,
    id,
    pkg: { package: entry.package, version: entry.version, bin: entry.bin, args: entry.args, node: entry.node },
    installed: { program: entry.bin, argv: [entry.bin, ...entry.args] },
    npx: { argv: ['npx', '-y', `${entry.package}@${entry.version}`, ...entry.args] },
    installCommand,
    installHint: `${installCommand} (needs Node.js ${entry.node}; ${entry.login})`,
  };
}

export const KNOWN_AGENTS: readonly KnownAgent[] = KNOWN_AGENT_IDS.map((id) => knownAgent(id, ENTRIES[id] as AgentEntry));

/** The catalogue's entry for a known agent. */
export function agentEntry(id: KnownAgentId): KnownAgent {
  return KNOWN_AGENTS.find((agent) => agent.id === id) as KnownAgent;
}

/** The known agent a command line starts (its program, or its package through npx), if any. */
export function knownAgentOfArgv(argv: readonly string[]): KnownAgent | undefined {
  return KNOWN_AGENTS.find((agent) =>
    argv.some((arg) => path.basename(arg) === agent.bin || arg === agent.package || arg.startsWith(`${agent.package}@`)),
  );
}

/** The known agent whose `initialize` answered with this agentInfo.name, if any. */
export function knownAgentNamed(agentInfoName: string | undefined): KnownAgent | undefined {
  return agentInfoName === undefined ? undefined : KNOWN_AGENTS.find((agent) => agent.agentInfoNames.includes(agentInfoName));
}

export interface DetectedAgent {
  id: KnownAgentId | 'custom';
  label: string;
  argv: readonly string[];
  /** installed: the program is on PATH; npx: runs through npx (first use downloads); missing: neither. */
  availability: 'installed' | 'npx' | 'missing';
  /** The program found on PATH, when installed. */
  path?: string;
  installHint?: string;
}

function isExecutableFile(candidate: string): boolean {
  try {
    if (!statSync(candidate).isFile()) return false;
    accessSync(candidate, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `program` on PATH (with PATHEXT on Windows), or undefined. */
export function findOnPath(program: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (program.includes('/') || program.includes('\\')) return isExecutableFile(program) ? path.resolve(program) : undefined;
  const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter(Boolean);
  const extensions = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of dirs) {
    for (const extension of extensions) {
      const candidate = path.join(dir, program + extension);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/** Each known agent with how it would run here. */
export function detectKnownAgents(env: NodeJS.ProcessEnv = process.env): DetectedAgent[] {
  const npxPath = findOnPath('npx', env);
  return KNOWN_AGENTS.map((agent): DetectedAgent => {
    const found = findOnPath(agent.installed.program, env);
    if (found) return { id: agent.id, label: agent.label, argv: agent.installed.argv, availability: 'installed', path: found };
    if (npxPath) return { id: agent.id, label: agent.label, argv: agent.npx.argv, availability: 'npx', installHint: agent.installHint };
    return { id: agent.id, label: agent.label, argv: agent.npx.argv, availability: 'missing', installHint: agent.installHint };
  });
}

/** A custom command (ultraplan.agent.command), checked the same way. */
export function detectCustomAgent(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): DetectedAgent {
  const program = argv[0] ?? '';
  const found = program ? findOnPath(program, env) : undefined;
  return {
    id: 'custom',
    // A known agent's program under a command of one's own keeps its name.
    label: KNOWN_AGENTS.find((agent) => program && agent.installed.program === path.basename(program))?.label ?? labelFromArgv(argv),
    argv,
    availability: found ? 'installed' : 'missing',
    ...(found ? { path: found } : { installHint: program ? `${program} was not found on PATH` : 'the command is empty' }),
  };
}

/**
 * Splits a command line into argv without a shell: whitespace separates, single and double
 * quotes group, a backslash escapes the next character (outside single quotes).
 */
export function splitCommandLine(text: string): string[] {
  const args: string[] = [];
  let current = '';
  let inArg = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (quote) {
      if (char === quote) quote = undefined;
      else if (char === '\\' && quote === '"' && i + 1 < text.length) current += text[++i];
      else current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      inArg = true;
    } else if (char === '\\' && i + 1 < text.length) {
      current += text[++i];
      inArg = true;
    } else if (/\s/.test(char)) {
      if (inArg) args.push(current);
      current = '';
      inArg = false;
    } else {
      current += char;
      inArg = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} quote in the command ${JSON.stringify(text)}`);
  if (inArg) args.push(current);
  return args;
}

/**
 * The argv and label for `acp:<command…>`: a known agent by id (claude, gemini, codex; run as
 * installed, else through npx), or a command line.
 */
export function resolveAgentCommand(spec: string, env: NodeJS.ProcessEnv = process.env): { argv: string[]; label: string } {
  const trimmed = spec.trim();
  const known = detectKnownAgents(env).find((agent) => agent.id === trimmed);
  if (known) return { argv: [...known.argv], label: known.label };
  const argv = splitCommandLine(trimmed);
  if (argv.length === 0) {
    throw new Error(
      `acp needs a command or one of ${KNOWN_AGENTS.map((agent) => agent.id).join(', ')}: --agent "acp:npx -y @agentclientprotocol/claude-agent-acp"`,
    );
  }
  const byProgram = KNOWN_AGENTS.find(
    (agent) =>
      // The program itself, or the script a Node runs (`node …/bin/qwen --acp`).
      argv.slice(0, 2).some((arg) => path.basename(arg) === agent.installed.program) ||
      argv.some((arg) => arg === agent.pkg.package || arg.startsWith(`${agent.pkg.package}@`)),
  );
  return { argv, label: byProgram?.label ?? labelFromArgv(argv) };
}

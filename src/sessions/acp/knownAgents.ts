// The ACP agents Ultraplan knows by name, and which of them this machine can run. Detection is a
// PATH lookup only: no network, no spawning, so it is cheap enough for a quick pick.
import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';
import { labelFromArgv } from './agentLabel';
import agentPackages from './agentPackages.json';

export type KnownAgentId = 'claude' | 'gemini' | 'codex';

/** The npm package people install for an agent, pinned to the version Ultraplan is tested with. */
export interface AgentPackage {
  package: string;
  version: string;
  /** The program the package puts on PATH, and the arguments that start it as an ACP agent. */
  bin: string;
  args: string[];
  /** The Node.js versions the package runs on (its `engines.node`). */
  node: string;
}

export const AGENT_PACKAGES: Readonly<Record<KnownAgentId, AgentPackage>> = agentPackages;

export interface KnownAgent {
  id: KnownAgentId;
  label: string;
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

const LOGIN_NOTES: Record<KnownAgentId, string> = {
  claude: 'log in with Claude Code first, or set ANTHROPIC_API_KEY',
  gemini: 'then run gemini once to log in, or set GEMINI_API_KEY',
  codex: 'then set OPENAI_API_KEY or run codex login',
};

function knownAgent(id: KnownAgentId, label: string): KnownAgent {
  const pkg = AGENT_PACKAGES[id];
  const installCommand = `npm install -g ${pkg.package}@${pkg.version}`;
  return {
    id,
    label,
    pkg,
    installed: { program: pkg.bin, argv: [pkg.bin, ...pkg.args] },
    npx: { argv: ['npx', '-y', `${pkg.package}@${pkg.version}`, ...pkg.args] },
    installCommand,
    installHint: `${installCommand} (needs Node.js ${pkg.node}; ${LOGIN_NOTES[id]})`,
  };
}

export const KNOWN_AGENTS: readonly KnownAgent[] = [
  knownAgent('claude', 'Claude (ACP)'),
  knownAgent('gemini', 'Gemini CLI (ACP)'),
  knownAgent('codex', 'Codex (ACP)'),
];

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
      agent.installed.program === path.basename(argv[0] as string) ||
      argv.some((arg) => arg === agent.pkg.package || arg.startsWith(`${agent.pkg.package}@`)),
  );
  return { argv, label: byProgram?.label ?? labelFromArgv(argv) };
}

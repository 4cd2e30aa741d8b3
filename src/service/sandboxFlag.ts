// `--sandbox auto|required|off`: whether the service runs each agent in a sandbox of its own
// (src/agents/sandbox). A service serving several people (PostgreSQL, OIDC) always needs one.
import path from 'node:path';
import { multiUserRefusal, sandboxSupport, type SandboxSupport } from '../agents/sandbox';
import type { AgentSandboxSettings } from '../agents/sandbox/agentSandbox';
import { UsageError } from './commandLine';
import { SANDBOX_MODES, type SandboxMode, type ServiceSandbox } from '../core/serviceStatus';

export const SANDBOX_HELP = `  --sandbox MODE      run each agent in a sandbox of its own (bubblewrap; docs/security.md):
                      auto (default: where this machine can, else said once why not),
                      required (refuse to start without), off (single user only)
  --sandbox-share DIR a folder every sandboxed agent may write (a shared cache); repeatable
  --sandbox-home DIR  what each session's sandbox HOME starts as (a copy: agent settings,
                      trusted folders; never the service's own HOME)
  --sandbox-bwrap FILE
                      the bubblewrap to run (default: bwrap on PATH, else the one npm run
                      setup unpacks; that one is never put on PATH)
`;

export interface SandboxChoice {
  mode: string | undefined;
  /** Several people's sessions (PostgreSQL, OIDC): a sandbox is required. */
  multiUser: boolean;
  /** The sessions' HOME and temp folders go in here. */
  root: string;
  shared?: readonly string[] | undefined;
  homeTemplate?: string | undefined;
  /** `--sandbox-bwrap`: the bubblewrap to run. */
  bwrap?: string | undefined;
}

export interface SandboxDecision {
  /** undefined: agents run unsandboxed. */
  settings: AgentSandboxSettings | undefined;
  /** What `/v1/service` says of it. */
  state: ServiceSandbox;
}

/** The sandbox settings for the service's agents, or undefined when they run unsandboxed. */
export function sandboxSettings(
  command: string,
  choice: SandboxChoice,
  log: (line: string) => void,
  probe?: () => SandboxSupport,
): AgentSandboxSettings | undefined {
  return sandboxDecision(command, choice, log, probe).settings;
}

/** The sandbox settings, and what the service tells its clients of them. */
export function sandboxDecision(
  command: string,
  choice: SandboxChoice,
  log: (line: string) => void,
  probe: () => SandboxSupport = () => sandboxSupport(process.env, process.platform, choice.bwrap),
): SandboxDecision {
  const mode = choice.mode ?? (choice.multiUser ? 'required' : 'auto');
  if (!isSandboxMode(mode)) {
    throw new UsageError(command, `--sandbox must be one of ${SANDBOX_MODES.join(', ')}, got ${JSON.stringify(mode)}`);
  }
  if (choice.bwrap !== undefined && !path.isAbsolute(choice.bwrap)) {
    throw new UsageError(command, `--sandbox-bwrap takes an absolute path, got ${JSON.stringify(choice.bwrap)}`);
  }
  if (mode === 'off') {
    if (choice.multiUser) {
      throw new UsageError(command, '--sandbox off is for a single user: with PostgreSQL or OIDC every agent runs in a sandbox');
    }
    log(`${command}: --sandbox off: agents run with this service's own permissions`);
    return { settings: undefined, state: { mode, sandboxed: false } };
  }
  const support = probe();
  if (!support.supported) {
    if (choice.multiUser) throw new UsageError(command, multiUserRefusal(support) ?? support.reason);
    if (mode === 'required') throw new UsageError(command, `--sandbox required: ${support.reason}`);
    log(`${command}: agents run unsandboxed: ${support.reason}`);
    return { settings: undefined, state: { mode, sandboxed: false, reason: support.reason } };
  }
  for (const note of support.notes) log(`${command}: sandbox: ${note}`);
  log(`${command}: each agent runs in a sandbox of its own (bubblewrap ${support.tools.bwrapVersion})`);
  const shared = (choice.shared ?? []).map((dir) => path.resolve(dir));
  const settings: AgentSandboxSettings = {
    tools: support.tools,
    root: path.resolve(choice.root),
    ...(shared.length ? { sharedPaths: shared } : {}),
    ...(choice.homeTemplate ? { homeTemplate: path.resolve(choice.homeTemplate) } : {}),
  };
  return { settings, state: { mode, sandboxed: true } };
}

function isSandboxMode(mode: string): mode is SandboxMode {
  return (SANDBOX_MODES as readonly string[]).includes(mode);
}

// What an ACP agent is started with, and the bounds it keeps when none is given.
import type { AfterApproval, OutsideAccess } from '../../core/agentSettings';
import type { AgentSandboxSettings } from '../sandbox/agentSandbox';

export const DEFAULT_FIRST_EVENT_TIMEOUT_MS = 120_000;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 120_000;
export const DEFAULT_STOP_GRACE_MS = 2_000;

export interface AcpAgentOptions {
  /** The agent's command line, no shell: ["npx", "-y", "@agentclientprotocol/claude-agent-acp"]. */
  argv: readonly string[];
  /** The workspace folder: the agent's cwd and the session's cwd. */
  cwd: string;
  /** Extra environment variables, over the host's own. */
  env?: Record<string, string | undefined>;
  /** Start from the host's environment (default true); false: the agent gets `env` only. */
  inheritEnv?: boolean;
  /** A label for people ("Claude (ACP)"); derived from argv when absent. */
  label?: string;
  /** What Approve selects (default: 'default', edits approved manually). */
  afterApproval?: AfterApproval;
  /** A prompt with no first event within this bound ends the session with a clear message. */
  firstEventTimeoutMs?: number;
  /** Bound on each of initialize, session/new and the mode switch. */
  handshakeTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL when stopping. */
  stopGraceMs?: number;
  /** Diagnostic lines (besides the session's own log). */
  log?: (line: string) => void;
  /** Files never read for the agent, whatever it asks (the server's token file). */
  secretFiles?: readonly string[];
  /**
   * Files this session withholds from its agent (a review's secret rule): refused to its reads and
   * read or search tools, by the path asked and by the real path; hidden in its sandbox.
   */
  withheld?: (filePath: string) => boolean;
  /** The agent's home folder, where it keeps its plans folder (default: its HOME, else the user's). */
  home?: string;
  /** Reads outside the workspace and fetches: asked (default), allowed or refused without asking; each logged. */
  outsideAccess?: OutsideAccess;
  /**
   * Runs the agent in a sandbox of its own (src/agents/sandbox): only its workspace (read-only
   * while planning), its session's HOME and temp folder, and its model's API. The agent's `home`
   * should then be the session's sandbox home (sandboxFolders).
   */
  sandbox?: AgentSandboxSettings;
}

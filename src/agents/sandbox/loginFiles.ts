// The person's saved login of the session's agent, shown inside its sandbox: each login file the
// catalogue names for that agent and that exists is bound read-write at the same place under the
// sandbox's HOME, so the agent reads it and a token it refreshes reaches the person's file (and
// every other session), and reaches the hosts that login needs (its token endpoint). Files only,
// never their folders: nothing else of HOME is shown.
// Kept apart from the catalogue (agents.json): only the service's sandbox reads it, and the
// extension's first load carries the catalogue.
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { envName, hostPort, type KnownAgent } from '../catalogue/knownAgents';
import logins from './agentLogins.json';

/** A file's path below a folder: relative, normalized, never climbing out of it. */
const pathBelow = z
  .string()
  .min(1)
  .refine((value) => path.posix.normalize(value) === value && !path.posix.isAbsolute(value) && !value.startsWith('..'), {
    message: 'must be a relative, normalized path inside its folder',
  });

/**
 * One file of the agent's saved login, where the agent reads it: `home`, below HOME, unless the
 * variable `dir.env` names another folder, then `dir.path` below that one.
 */
const LoginFileSchema = z.strictObject({
  home: pathBelow,
  dir: z.strictObject({ env: envName, path: pathBelow }).optional(),
});

const AgentLoginSchema = z.strictObject({
  /**
   * The files its login is saved in (never folders), shown to it in its sandbox. Read in each
   * agent's bundle at the pinned version (~/.cache/ultraplan/agents/<id>-<version>):
   * - claude: the Claude Code binary of @anthropic-ai/claude-agent-sdk-linux-x64: storagePath =
   *   join(XF(), ".credentials.json"), XF() being $CLAUDE_CONFIG_DIR or ~/.claude. It writes by a
   *   staged file renamed over it, and writes in place when the rename fails with EBUSY/EXDEV
   *   (its QO set), as a rename over a bound file does.
   * - gemini: bundle/chunk-*.js of @google/gemini-cli: OAUTH_FILE "oauth_creds.json" and
   *   GOOGLE_ACCOUNTS_FILENAME "google_accounts.json" in Storage.getGlobalGeminiDir() =
   *   ($GEMINI_CLI_HOME or HOME)/.gemini; cacheCredentials() writes with fs.writeFile, in place.
   * - codex: the codex binary of @openai/codex-linux-x64 names "auth.json" (and auth.lock) in
   *   CODEX_HOME (~/.codex by default).
   * - qwen: chunks/chunk-*.js of @qwen-code/qwen-code: QWEN_CREDENTIAL_FILENAME "oauth_creds.json"
   *   in Storage.getGlobalQwenDir() (~/.qwen). It writes a temp file and renames it over, which a
   *   bound file refuses (EBUSY): a token it refreshes inside lives as long as that session.
   * - opencode: the opencode binary of opencode-linux-x64: $XDG_DATA_HOME/opencode/auth.json, else
   *   ~/.local/share/opencode/auth.json, written with writeFileSync, in place.
   * - copilot: none listed: its bundle's login store was not found by reading it.
   */
  files: z.array(LoginFileSchema).max(8),
  /**
   * Hosts (host:port) its saved login needs besides its model API, read in the same bundles:
   * claude: TOKEN_URL "https://platform.claude.com/v1/oauth/token"; gemini: GOOGLE_TOKEN_URL
   * "https://oauth2.googleapis.com/token" and CODE_ASSIST_ENDPOINT "https://cloudcode-pa.googleapis.com"
   * (where a Google login's model requests go); codex: "https://auth.openai.com/oauth/token" and
   * "https://chatgpt.com/backend-api/codex"; qwen: QWEN_OAUTH_TOKEN_ENDPOINT on "https://chat.qwen.ai".
   */
  hosts: z.array(hostPort).max(8),
});

/** Each known agent's saved login, by agent id (agentLogins.json), checked once when first loaded. */
const LOGINS = z.record(z.string(), AgentLoginSchema).parse(logins);

/** The hosts the agent's saved login needs (its token endpoint, a login's own model API), when one is bound. */
export function loginHosts(agent: KnownAgent | undefined, binds: readonly LoginFileBind[]): string[] {
  return binds.length > 0 && agent ? [...(LOGINS[agent.id]?.hosts ?? [])] : [];
}

export interface LoginFileBind {
  /** The person's file, on the host (its real path: a symlink is bound as what it names). */
  source: string;
  /** Where the agent looks for it inside: below the sandbox's HOME. */
  target: string;
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The login files of `agent` that exist for the person whose HOME is `personHome` (or where the
 * variables of `env` move them), and where each appears under `sandboxHome`. An unknown command
 * gets none: whose login it would read is not known.
 */
export function loginFileBinds(
  agent: KnownAgent | undefined,
  env: Readonly<Record<string, string | undefined>>,
  personHome: string | undefined,
  sandboxHome: string,
): LoginFileBind[] {
  const binds: LoginFileBind[] = [];
  for (const file of (agent ? LOGINS[agent.id]?.files : undefined) ?? []) {
    const moved = file.dir ? env[file.dir.env] : undefined;
    const where = moved && file.dir ? path.resolve(moved, file.dir.path) : personHome ? path.resolve(personHome, file.home) : undefined;
    // Inside, the variable is not set (it names a host folder): the agent looks under its HOME.
    if (where && isFile(where)) binds.push({ source: realpathSync(where), target: path.join(sandboxHome, file.home) });
  }
  return binds;
}

// Planning is read-only whatever the agent does: which of an agent's requests the client refuses
// while a session plans, and the message the agent gets back. Pure path logic: the file system's
// facts (lstat, real paths) are gathered by the caller.
import * as path from 'node:path';
import { isInside } from '../../core/node/realPaths';

/** Tool kinds that only look: allowed while planning without asking the reviewer. */
export const LOOKING_TOOL_KINDS: ReadonlySet<string> = new Set(['read', 'search', 'think', 'fetch']);

/** Files other agents load as instructions: never written while planning, whatever folder. */
const INSTRUCTION_FILE_NAMES: ReadonlySet<string> = new Set([
  'claude.md',
  'claude.local.md',
  'agents.md',
  'gemini.md',
  'codex.md',
  'qwen.md',
  'copilot-instructions.md',
]);

/** The word "plan" or "plans" in a file's stem (PLAN.md, greeting-plan.md, plan_v2.md; not explanation.md). */
const PLAN_WORD = /(^|[^a-z])plans?([^a-z]|$)/i;

/**
 * A name a plan file may have: Markdown, "plan" as a word of its name or a `plans` folder
 * (PLAN.md, plans/feature.md), and not a file agents load as instructions (plans/CLAUDE.md).
 */
export function looksLikePlanFile(filePath: string): boolean {
  const normalized = path.normalize(filePath);
  if (!isMarkdown(normalized)) return false;
  const base = path.basename(normalized);
  if (INSTRUCTION_FILE_NAMES.has(base.toLowerCase())) return false;
  if (PLAN_WORD.test(path.basename(base, path.extname(base)))) return true;
  return path
    .dirname(normalized)
    .split(path.sep)
    .some((segment) => segment.toLowerCase() === 'plans');
}

function isMarkdown(filePath: string): boolean {
  return path.extname(filePath).toLowerCase() === '.md';
}

/** Where agents keep their own folders: Claude's config folder, Gemini CLI's home (it adds .gemini). */
export interface AgentDirs {
  claudeConfigDir: string;
  geminiHome: string;
}

/** The agents' folders for an agent run with `env` (CLAUDE_CONFIG_DIR, GEMINI_CLI_HOME) and home folder `home`. */
export function agentDirs(home: string, env: Readonly<Record<string, string | undefined>> = {}): AgentDirs {
  return { claudeConfigDir: env.CLAUDE_CONFIG_DIR || path.join(home, '.claude'), geminiHome: env.GEMINI_CLI_HOME || home };
}

/** The path of `filePath` below `folder` as its parts, or undefined when it is not below it. */
function partsBelow(folder: string, filePath: string): string[] | undefined {
  const relative = path.relative(folder, filePath);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  const parts = relative.split(path.sep);
  return parts.some((part) => part === '' || part === '.' || part === '..') ? undefined : parts;
}

/**
 * Whether `filePath` is a Markdown file in an agent's own plans folder: Claude's
 * <config>/plans/<name>.md (~/.claude by default), Gemini CLI's
 * <home>/.gemini/tmp/<project>[/<session>]/plans/<name>.md. `where` is the home folder, or the
 * agents' folders when their environment moves them.
 */
export function inAgentPlansFolder(filePath: string, where: string | AgentDirs): boolean {
  const dirs = typeof where === 'string' ? agentDirs(where) : where;
  const normalized = path.normalize(filePath);
  if (!isMarkdown(normalized) || INSTRUCTION_FILE_NAMES.has(path.basename(normalized).toLowerCase())) return false;
  const claude = partsBelow(dirs.claudeConfigDir, normalized);
  if (claude?.length === 2 && claude[0] === 'plans') return true;
  const gemini = partsBelow(path.join(dirs.geminiHome, '.gemini', 'tmp'), normalized);
  return gemini !== undefined && (gemini.length === 3 || gemini.length === 4) && gemini[gemini.length - 2] === 'plans';
}

/** What lstat says of a file a write would replace (null: it does not exist). */
export interface ExistingFile {
  symlink: boolean;
  regular: boolean;
  /** Its hard-link count (st_nlink): above 1, writing it changes another name too. */
  links: number;
}

export type WriteVerdict = { allowed: true } | { allowed: false; message: string };

/**
 * Whether fs/write_text_file may write `filePath`. While planning only a plan file may be
 * written: one the agent creates now (a new Markdown file with a plan name in the workspace, or
 * in its own plans folder outside it) or one it created earlier in this session; never an
 * existing file of the workspace, whatever it is called, and never what the agent merely names
 * as its plan file. After approval, anything inside the workspace but its .git folder. Never
 * through a symbolic or hard link. Pure: the caller gathers `existing` and checks the path with
 * symlinks resolved as well.
 */
export function writeVerdict(options: {
  filePath: string;
  workspace: string;
  planning: boolean;
  /** Plan files this session's agent created (absolute, resolved). */
  sessionPlanFiles: ReadonlySet<string>;
  existing: ExistingFile | null;
  /** The home folder (or the agents' folders), where agents keep their own plans folders. */
  home: string | AgentDirs;
}): WriteVerdict {
  const { filePath, workspace, planning, sessionPlanFiles, existing, home } = options;
  if (!path.isAbsolute(filePath)) {
    return { allowed: false, message: `Ultraplan refused to write "${filePath}": the path must be absolute.` };
  }
  const resolved = path.resolve(filePath);
  const inside = isInside(path.resolve(workspace), resolved);
  // A git folder holds hooks git runs later: no agent writes there, planning or not.
  if (resolved.split(path.sep).some((segment) => segment.toLowerCase() === '.git')) {
    return { allowed: false, message: `Ultraplan refused to write ${resolved}: files under .git are never written by an agent.` };
  }
  if (existing?.symlink) {
    return {
      allowed: false,
      message: `Ultraplan refused to write ${resolved}: it is a symbolic link; an agent writes only the file itself.`,
    };
  }
  if (existing && !existing.regular) {
    return { allowed: false, message: `Ultraplan refused to write ${resolved}: it is not a regular file.` };
  }
  if (existing && existing.links > 1) {
    return {
      allowed: false,
      message: `Ultraplan refused to write ${resolved}: it has ${existing.links} hard links, so writing it would change another file too.`,
    };
  }
  if (planning) {
    const ownPlansFolder = !inside && inAgentPlansFolder(resolved, home);
    const created = sessionPlanFiles.has(resolved);
    const newPlanFile = existing === null && inside && looksLikePlanFile(resolved);
    if (created || ownPlansFolder || newPlanFile) return { allowed: true };
    const why =
      existing !== null && inside
        ? 'it already exists and this session did not create it'
        : "only a new Markdown plan file (PLAN.md, plans/<name>.md) or one in the agent's own plans folder may be written";
    return {
      allowed: false,
      message:
        `Ultraplan refused to write ${resolved}: this session is planning, and planning is read-only (${why}). ` +
        `Propose the change in your plan and ask to exit plan mode.`,
    };
  }
  if (inside) return { allowed: true };
  return { allowed: false, message: `Ultraplan refused to write ${resolved}: it is outside the workspace ${workspace}.` };
}

export function terminalRefusal(method: string): string {
  return (
    `Ultraplan refused ${method}: this client offers no terminals (clientCapabilities.terminal is false), ` +
    `and a planning session is read-only.`
  );
}

export function permissionRefusal(kind: string, title: string): string {
  return (
    `Ultraplan refused "${title}" (${kind}): this session is planning, and planning is read-only. ` +
    `Put the change in your plan and ask to exit plan mode.`
  );
}

/** The kernel's own files (a process's environment and memory, devices): never read for an agent. */
const SYSTEM_FOLDERS: readonly string[] = ['/proc', '/sys', '/dev'];

export type ReadVerdict = { kind: 'allow' } | { kind: 'ask'; reason: string } | { kind: 'refuse'; message: string };

/**
 * Whether a read of `requested` (whose real path is `real`) happens on its own, goes to the
 * person, or is refused. Reads inside the workspace are automatic; so are the agent's own plan
 * files. /proc, /sys, /dev and the files that hold our secrets are refused, by the path asked and
 * by the real path. Anything else is outside the workspace: the person decides.
 */
export function readVerdict(options: {
  requested: string;
  real: string;
  workspaceReal: string;
  /** Files never read for an agent (the server's token file), as real paths. */
  secretFiles: readonly string[];
  sessionPlanFiles: ReadonlySet<string>;
  /** The home folder (or the agents' folders), where agents keep their own plans folders. */
  home: string | AgentDirs;
  /** Files this session withholds from its agent (a review's secret rule), judged by either path. */
  withheld?: (filePath: string) => boolean;
}): ReadVerdict {
  const { requested, real, workspaceReal, secretFiles, sessionPlanFiles, home, withheld } = options;
  for (const candidate of [requested, real]) {
    const system = SYSTEM_FOLDERS.find((folder) => isInside(folder, candidate));
    if (system) {
      return {
        kind: 'refuse',
        message: `Ultraplan refused to read ${requested}: files under ${system} (processes, devices, the kernel) are never read for an agent.`,
      };
    }
    if (secretFiles.includes(candidate)) {
      return { kind: 'refuse', message: `Ultraplan refused to read ${requested}: it holds a secret of Ultraplan's (the server token).` };
    }
    if (withheld?.(candidate)) {
      return {
        kind: 'refuse',
        message:
          `Ultraplan refused to read ${requested}${candidate === requested ? '' : ` (it leads to ${candidate})`}: ` +
          `this review withholds files that look like secrets (.env, keys, credentials) from its reviewers. Review without it.`,
      };
    }
  }
  if (isInside(workspaceReal, real)) return { kind: 'allow' };
  if (sessionPlanFiles.has(requested) || inAgentPlansFolder(real, home)) return { kind: 'allow' };
  return { kind: 'ask', reason: `${real} is outside the workspace ${workspaceReal}` };
}

/** What the agent is told when the person (or their setting) denies a read or a fetch. */
export function accessDenial(what: string): string {
  return `Ultraplan did not allow ${what}: the person using Ultraplan denied it. Work from the files in the workspace.`;
}

/** rawInput keys that name what a read or search looks at (Claude's, Gemini's, Codex's tools). */
const LOOKED_AT_KEYS = ['file_path', 'filePath', 'absolute_path', 'path', 'dir_path', 'notebook_path', 'paths'];

/**
 * The paths a read or search tool call looks at (absolute, resolved against the workspace, "~/"
 * against the home folder): its
 * locations and the path-like keys of its input. Empty when it names none (it looks in its cwd).
 */
export function lookedAtPaths(
  toolCall: { rawInput?: unknown; locations?: ReadonlyArray<{ path: string }> | null },
  workspace: string,
  home: string,
): string[] {
  const found: string[] = [];
  for (const location of toolCall.locations ?? []) if (location.path) found.push(location.path);
  const input = toolCall.rawInput;
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
    for (const key of LOOKED_AT_KEYS) {
      const value = (input as Record<string, unknown>)[key];
      const values = Array.isArray(value) ? value : [value];
      for (const item of values) if (typeof item === 'string' && item.trim()) found.push(item);
    }
  }
  // Agents' tools expand "~/" to the home folder: so do we, or ~/.ssh would pass as a workspace path.
  const absolute = (item: string) =>
    item === '~' || item.startsWith('~/') ? path.join(home, item.slice(1)) : path.resolve(workspace, item);
  return [...new Set(found.map(absolute))];
}

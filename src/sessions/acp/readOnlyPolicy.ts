// Planning is read-only whatever the agent does: which of an agent's requests the client refuses
// while a session plans, and the message the agent gets back. Pure path logic, no file system.
import * as path from 'node:path';

/** Tool kinds that only look: allowed while planning without asking the reviewer. */
export const LOOKING_TOOL_KINDS: ReadonlySet<string> = new Set(['read', 'search', 'think', 'fetch']);

/** True when `child` is `root` or inside it (both absolute, already resolved). */
export function isInside(root: string, child: string): boolean {
  const relative = path.relative(root, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * A plan file: a Markdown file whose name says plan or that sits in a `plans` folder
 * (PLAN.md, plans/feature.md, ~/.claude/plans/x.md). Agents write their plan there in plan mode.
 */
export function looksLikePlanFile(filePath: string): boolean {
  const normalized = path.normalize(filePath);
  if (path.extname(normalized).toLowerCase() !== '.md') return false;
  if (/plan/i.test(path.basename(normalized))) return true;
  return normalized.split(path.sep).some((segment) => segment.toLowerCase() === 'plans');
}

function inPlansFolder(filePath: string): boolean {
  return path.dirname(filePath).split(path.sep).some((segment) => segment.toLowerCase() === 'plans');
}

export type WriteVerdict = { allowed: true } | { allowed: false; message: string };

/**
 * Whether fs/write_text_file may write `filePath`. While planning only a plan file may be
 * written; after approval, anything inside the workspace but its .git folder. Pure: the caller
 * checks the path with symlinks resolved as well.
 */
export function writeVerdict(options: {
  filePath: string;
  workspace: string;
  planning: boolean;
  namedPlanFiles: ReadonlySet<string>;
}): WriteVerdict {
  const { filePath, workspace, planning, namedPlanFiles } = options;
  if (!path.isAbsolute(filePath)) {
    return { allowed: false, message: `Ultraplan refused to write "${filePath}": the path must be absolute.` };
  }
  const resolved = path.resolve(filePath);
  const inside = isInside(path.resolve(workspace), resolved);
  // A git folder holds hooks git runs later: no agent writes there, planning or not.
  if (resolved.split(path.sep).some((segment) => segment.toLowerCase() === '.git')) {
    return { allowed: false, message: `Ultraplan refused to write ${resolved}: files under .git are never written by an agent.` };
  }
  if (planning) {
    // The agent itself names its plan file (in the exit request), so a named file is trusted
    // only inside the workspace. Outside it, only a Markdown file in a folder named plans
    // (~/.claude/plans/x.md): a plan-ish name alone could land in a folder a shell sources.
    if (inside && (namedPlanFiles.has(resolved) || looksLikePlanFile(resolved))) return { allowed: true };
    if (!inside && looksLikePlanFile(resolved) && inPlansFolder(resolved)) return { allowed: true };
    return {
      allowed: false,
      message:
        `Ultraplan refused to write ${resolved}: this session is planning, and planning is read-only. ` +
        `Only the plan file may be written; propose the change in your plan and ask to exit plan mode.`,
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

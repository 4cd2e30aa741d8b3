// Where plans written by other tools are found, without a scan of the disk: a few known folders
// (each listed, never walked), each with the file names its tool gives plans. Pure: the extension
// lists the folders and watches them (extension/review/plansOnDisk.ts). docs/plans-on-disk.md.

/** Which tool writes a folder's plans. */
export type PlanTool = 'copilot' | 'cursor' | 'air' | 'ultraplan' | 'claude';

export interface PlanFolder {
  readonly tool: PlanTool;
  /** Where the folder is: under each workspace folder, or under the person's home. */
  readonly base: 'workspace' | 'home';
  /** The folder's path under its base, in segments. */
  readonly segments: readonly string[];
  /** The glob a FileSystemWatcher watches in the folder (its files only, not below). */
  readonly glob: string;
  /** Whether a file name in the folder is one of its plans. */
  matches(name: string): boolean;
}

export const PLAN_TOOL_LABELS: Readonly<Record<PlanTool, string>> = {
  copilot: 'Copilot',
  cursor: 'Cursor',
  air: 'JetBrains Air',
  ultraplan: 'Ultraplan',
  claude: 'Claude Code',
};

/** Plans listed at most, newest first (the inbox group and the quick pick). */
export const MAX_LISTED_PLANS = 50;

const isMarkdown = (name: string) => /\.md$/i.test(name) && !name.startsWith('.');

/**
 * The folders plans are found in: Copilot's `.copilot/plans/plan-*.md`, Cursor's
 * `.cursor/plans/*.plan.md`, JetBrains Air's `.air/plans/*.md`, our own saved `*.plan.md` in
 * `plansDirectory` (relative to the workspace, or absolute), and, unless `includeHome` is off,
 * Claude Code's `~/.claude/plans/*.md`.
 */
export function planFolders(plansDirectory: string, includeHome: boolean): PlanFolder[] {
  const folders: PlanFolder[] = [
    folder('copilot', 'workspace', '.copilot/plans', 'plan-*.md', (n) => /^plan-.+\.md$/i.test(n)),
    folder('cursor', 'workspace', '.cursor/plans', '*.plan.md', (n) => /\.plan\.md$/i.test(n)),
    folder('air', 'workspace', '.air/plans', '*.md', isMarkdown),
  ];
  const own = segmentsOf(plansDirectory);
  if (own.length > 0 && !isAbsolutePath(plansDirectory)) {
    folders.push(folder('ultraplan', 'workspace', own.join('/'), '*.plan.md', (n) => /\.plan\.md$/i.test(n)));
  }
  if (includeHome) folders.push(folder('claude', 'home', '.claude/plans', '*.md', isMarkdown));
  return folders;
}

/** An absolute plans directory is its own folder (no base): the extension lists it as given. */
export function isAbsolutePath(p: string): boolean {
  return p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');
}

function segmentsOf(p: string): string[] {
  return p.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
}

function folder(tool: PlanTool, base: 'workspace' | 'home', at: string, glob: string, matches: (name: string) => boolean): PlanFolder {
  return { tool, base, segments: segmentsOf(at), glob, matches: (name) => !name.includes('/') && !name.includes('\\') && matches(name) };
}

/** A plan file found on disk. */
export interface FoundPlan {
  /** The file's path (a URI string or an absolute path: whatever the lister gave). */
  readonly location: string;
  /** For people: "~/.claude/plans/quiet-fox.md", ".cursor/plans/x.plan.md". */
  readonly shownPath: string;
  readonly tool: PlanTool;
  /** Last modified, ms since the epoch. */
  readonly mtime: number;
}

/** Newest first (ties by path, so the order is stable), at most `limit`, each location once. */
export function newestPlans(found: readonly FoundPlan[], limit = MAX_LISTED_PLANS): FoundPlan[] {
  const seen = new Set<string>();
  return [...found]
    .sort((a, b) => b.mtime - a.mtime || (a.shownPath < b.shownPath ? -1 : a.shownPath > b.shownPath ? 1 : 0))
    .filter((plan) => !seen.has(plan.location) && (seen.add(plan.location), true))
    .slice(0, Math.max(0, limit));
}

/** The plan's title for a list: its first Markdown heading, else its file name without `.plan.md`/`.md`. */
export function planTitle(text: string, fileName: string): string {
  const heading = /^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$/m.exec(text)?.[1];
  const name = fileName.replace(/(\.plan)?\.md$/i, '');
  const title = (heading ?? name).replace(/\s+/g, ' ').trim();
  return title.length > 80 ? `${title.slice(0, 79)}…` : title || name;
}

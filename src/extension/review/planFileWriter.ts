// Writes a teleported plan under a name nobody holds yet, atomically: an exclusive create per
// candidate name, so two teleports at the same moment (two sessions, or two windows) never
// overwrite each other the way a check-then-write could. The folder is used by its real path, and
// only when that is inside the workspace: a plans folder that is a symlink (committed to the
// repository, say, and pointing at ~/.bashrc.d) is never followed out. No vscode import, so it is
// unit-tested.
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { MAX_PLAN_FILE_ATTEMPTS, planFileName, tooManyPlanFiles } from '../../core/planFile';
import { isInside, realWriteTarget } from '../../core/node/realPaths';

/** The plans folder resolves outside every workspace folder. */
export class PlansFolderOutsideError extends Error {}

/**
 * The real path `folder` has or will have (its missing tail kept as named), required to be inside
 * one of `workspaces`; throws PlansFolderOutsideError otherwise. Creates nothing.
 */
export async function checkPlansFolder(folder: string, workspaces: readonly string[]): Promise<string> {
  return insideWorkspaces(folder, await realWriteTarget(path.resolve(folder)), workspaces);
}

/**
 * The real path of `folder`, created when missing, inside one of `workspaces`: checked before
 * anything is created (mkdir through a symlink would already write outside) and again after.
 */
export async function realPlansFolder(folder: string, workspaces: readonly string[]): Promise<string> {
  const planned = await checkPlansFolder(folder, workspaces);
  await mkdir(planned, { recursive: true });
  return insideWorkspaces(folder, await realpath(planned).catch(() => undefined), workspaces);
}

async function insideWorkspaces(folder: string, real: string | undefined, workspaces: readonly string[]): Promise<string> {
  const roots = await Promise.all(workspaces.map((root) => realpath(root).catch(() => path.resolve(root))));
  if (real !== undefined && roots.some((root) => isInside(root, real))) return real;
  const where = real === undefined ? 'a symbolic link to a place that does not exist' : real;
  throw new PlansFolderOutsideError(
    `Ultraplan did not save the plan: the plans folder ${folder} resolves to ${where}, which is outside the workspace ` +
      `(${workspaces.join(', ') || 'no folder open'}). A plans folder that links out of the workspace is never followed; ` +
      `remove the link, or set ultraplan.plansDirectory to a folder inside the workspace.`,
  );
}

/** Creates `<yyyy-mm-dd>-<slug>.plan.md` in `folder` (-2, -3, … when taken) and returns its path. */
export async function createPlanFile(folder: string, date: Date, slug: string, text: string): Promise<string> {
  for (let n = 1; n <= MAX_PLAN_FILE_ATTEMPTS; n++) {
    const file = path.join(folder, planFileName(date, slug, n));
    try {
      await writeFile(file, text, { encoding: 'utf8', flag: 'wx' });
      return file;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw tooManyPlanFiles(date, slug);
}

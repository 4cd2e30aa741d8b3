// Writes a teleported plan under a name nobody holds yet, atomically: an exclusive create per
// candidate name, so two teleports at the same moment (two sessions, or two windows) never
// overwrite each other the way a check-then-write could. No vscode import, so it is unit-tested.
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { MAX_PLAN_FILE_ATTEMPTS, planFileName, tooManyPlanFiles } from '../../core/planFile';

/** Creates `<yyyy-mm-dd>-<slug>.md` in `folder` (-2, -3, … when taken) and returns its path. */
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

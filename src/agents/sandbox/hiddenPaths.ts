// The workspace's files and folders a session's sandbox hides (files unreadable, folders empty):
// walked once when the sandbox is made, judged by their path relative to the workspace (a
// reviewer's withheld files). Symbolic links are not followed: a link inside leads to a file that is itself judged (and hidden) where
// it lies, and one leading outside leads where the sandbox shows nothing.
import { readdir } from 'node:fs/promises';
import path from 'node:path';

/** A bound on the walk: a workspace larger than this is refused rather than half hidden. */
const MAX_ENTRIES = 200_000;

export async function hiddenPaths(
  workspace: string,
  hidden: (relativePath: string) => boolean,
): Promise<{ hiddenFiles: string[]; hiddenFolders: string[] }> {
  const hiddenFiles: string[] = [];
  const hiddenFolders: string[] = [];
  const pending = [workspace];
  let seen = 0;
  while (pending.length) {
    const folder = pending.pop()!;
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      if (++seen > MAX_ENTRIES) throw new Error(`The workspace has over ${MAX_ENTRIES} files: its withheld files cannot all be hidden.`);
      const full = path.join(folder, entry.name);
      const relative = path.relative(workspace, full);
      if (entry.isDirectory()) {
        if (hidden(relative)) hiddenFolders.push(full);
        else pending.push(full);
      } else if (entry.isFile() && hidden(relative)) hiddenFiles.push(full);
    }
  }
  return { hiddenFiles, hiddenFolders };
}

// Where a path really is: inside a folder or not, and the file a write would really change once
// symbolic links are followed. The agents' file policy and the extension's plan writer both decide
// on these, never on the path as named.
import { lstat, realpath } from 'node:fs/promises';
import * as path from 'node:path';

/** True when `child` is `root` or inside it (both absolute, already resolved). */
export function isInside(root: string, child: string): boolean {
  const relative = path.relative(root, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * The file a write to `file` would really change: symlinks in its folders and in its own name
 * resolved (missing folders are kept as named, since they will be created). undefined for a
 * symlink whose target does not exist (writing would create that target wherever it points).
 */
export async function realWriteTarget(file: string): Promise<string | undefined> {
  try {
    if ((await lstat(file)).isSymbolicLink()) return await realpath(file).catch(() => undefined);
  } catch {
    /* missing: its folders decide */
  }
  const rest: string[] = [path.basename(file)];
  let dir = path.dirname(file);
  for (let depth = 0; depth < 4096; depth++) {
    try {
      return path.join(await realpath(dir), ...rest);
    } catch {
      const parent = path.dirname(dir);
      if (parent === dir) return file;
      rest.unshift(path.basename(dir));
      dir = parent;
    }
  }
  return file;
}

/** The real path of `file`, or undefined when it does not exist or cannot be resolved. */
export async function realPathOf(file: string): Promise<string | undefined> {
  return realpath(file).catch(() => undefined);
}

// The service's folders and token are the user's alone: folders 0700, the token 0600, both owned
// by the user and never a symbolic link. Anything else found in their place (another user made
// the folder first in a shared /tmp, a link planted to catch the token) is refused with what to do.
import { randomBytes, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export class ServiceSetupError extends Error {}

const POSIX = process.platform !== 'win32';

function ownUid(): number | undefined {
  return process.getuid?.();
}

/** Creates `dir` (and its parents) private to this user, or checks that an existing one is. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  if (!POSIX) return;
  const stat = await fs.lstat(dir);
  if (stat.isSymbolicLink() || !stat.isDirectory()) {
    throw new ServiceSetupError(`${dir} is not a folder (a link or a file is in its place); remove it so Ultraplan can make its own`);
  }
  const uid = ownUid();
  if (uid !== undefined && stat.uid !== uid) {
    throw new ServiceSetupError(
      `${dir} belongs to another user (uid ${stat.uid}); the session service keeps its socket and token only in a folder of yours. Remove it, or set ULTRAPLAN_SERVICE_DIR`,
    );
  }
  if ((stat.mode & 0o077) !== 0) await fs.chmod(dir, 0o700);
}

/**
 * Throws unless `file` is this user's own and not a link (a socket planted by someone else would
 * be sent the token). Missing is not an error here: null.
 */
export async function checkOwnEntry(file: string): Promise<import('node:fs').Stats | null> {
  let stat;
  try {
    stat = await fs.lstat(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (!POSIX) return stat;
  const uid = ownUid();
  if (stat.isSymbolicLink() || (uid !== undefined && stat.uid !== uid)) {
    throw new ServiceSetupError(`${file} is not this user's own file; remove it`);
  }
  return stat;
}

/** Reads the token, creating it (random, 0600, written whole before it has its name) when missing. */
export async function readOrCreateToken(file: string): Promise<string> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const stat = await checkOwnEntry(file);
    if (stat) {
      if (!stat.isFile()) throw new ServiceSetupError(`${file} is not a file; remove it`);
      if (POSIX && (stat.mode & 0o077) !== 0) await fs.chmod(file, 0o600);
      const token = (await fs.readFile(file, 'utf8')).trim();
      if (/^[0-9a-f]{64}$/.test(token)) return token;
      throw new ServiceSetupError(`${file} does not hold a service token; remove it and a new one is made`);
    }
    const temporary = path.join(path.dirname(file), `.token.${process.pid}.${randomUUID()}`);
    await fs.writeFile(temporary, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      // link fails when the name exists: of two windows racing, one token wins and both read it.
      await fs.link(temporary, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      await fs.rm(temporary, { force: true });
    }
  }
  throw new ServiceSetupError(`${file} kept changing while it was read`);
}

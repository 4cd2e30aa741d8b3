// One server per data directory: two would interleave appends to the same journals.
//
// The lock is `server.lock`, holding its owner's pid. Every step that changes it is atomic:
//  - it is created whole: the pid goes into a private temporary file that is then hard-linked
//    to the lock's name (link fails when the name exists), so exactly one of many racing starts
//    wins, and nobody ever reads a lock that is still being written;
//  - a stale lock (its pid is gone, e.g. after kill -9) is taken over by whoever first creates
//    `server.lock.takeover-<inode>` for that very lock file; only that claimant may replace it,
//    which it does with one rename. Naming the claim after the lock's inode (and checking the pid
//    again after claiming) means a start that judged an older lock stale can never replace a
//    newer, live one.
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export class DataDirLockError extends Error {}

const MAX_ATTEMPTS = 50;

interface LockState {
  ino: number;
  pid: number | null;
}

/** The lock's inode and pid, read through one handle so both describe the same file; null: no lock. */
async function readLock(lockPath: string): Promise<LockState | null> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(lockPath, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const { ino } = await handle.stat();
    const text = (await handle.readFile('utf8')).trim();
    const pid = /^\d+$/.test(text) ? Number(text) : null;
    return { ino, pid };
  } finally {
    await handle.close();
  }
}

/** Whether a process with this pid exists (EPERM: it does, another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function held(state: LockState): boolean {
  return state.pid !== null && state.pid > 0 && state.pid !== process.pid && processAlive(state.pid);
}

function isCode(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === code;
}

/** Takes the data directory's lock or throws DataDirLockError; resolves with its release. */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockPath = path.join(dataDir, 'server.lock');
  const mine = path.join(dataDir, `.server.lock.${process.pid}.${randomUUID()}`);
  await fs.writeFile(mine, `${process.pid}\n`, { flag: 'wx' });
  const release = async () => {
    const state = await readLock(lockPath).catch(() => null);
    if (state?.pid === process.pid) await fs.rm(lockPath, { force: true });
  };
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        await fs.link(mine, lockPath);
        return release;
      } catch (err) {
        if (!isCode(err, 'EEXIST')) throw err;
      }
      const state = await readLock(lockPath);
      if (state === null) continue; // released meanwhile: try again
      if (held(state)) throw new DataDirLockError(`${dataDir} is in use by another ultraplan-server (pid ${state.pid})`);
      const claim = `${lockPath}.takeover-${state.ino}`;
      try {
        await fs.link(mine, claim);
      } catch (err) {
        if (!isCode(err, 'EEXIST')) throw err;
        // Another start is taking this stale lock over; see what it left once it is done.
        await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
        continue;
      }
      try {
        const now = await readLock(lockPath);
        if (now === null || now.ino !== state.ino || held(now)) continue; // it changed: look again
        await fs.rename(mine, lockPath);
        return release;
      } finally {
        await fs.rm(claim, { force: true });
      }
    }
    throw new DataDirLockError(
      `cannot lock ${dataDir}: server.lock kept changing, or a takeover was interrupted; if no ultraplan-server uses it, remove ${lockPath} and ${lockPath}.takeover-*`,
    );
  } finally {
    await fs.rm(mine, { force: true });
  }
}

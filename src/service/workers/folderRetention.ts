// Retention on a worker's disk: each session leaves folders named by its id (the clone of its git
// source under --scratch, its sandbox HOME and temp folder under --sandbox-root). Once the session
// has been archived longer than --retain-archived-days, or the database no longer holds it (the
// API replicas' retention deleted it), they are deleted. Only names a session id can have are
// touched, and a folder an agent made unwritable is deleted all the same.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import { query } from '../store/postgres/database';
import type { RetentionCutoffs, Sweepable, SweepResult } from '../store/retention';

/** `session_<id>`, or a clone left half-done beside it (workspaceSource.ts). */
const SESSION_FOLDER = /^(session_[A-Za-z0-9]{1,120})(\.partial-[0-9a-f]{8})?$/;

/** Folders under `parents` named for a session, by session id. Symbolic links and files are left alone. */
export async function sessionFolders(parents: readonly string[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const parent of parents) {
    const entries = await fs.readdir(parent, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    for (const entry of entries) {
      const match = SESSION_FOLDER.exec(entry.name);
      if (!match || !entry.isDirectory()) continue;
      const id = match[1] as string;
      found.set(id, [...(found.get(id) ?? []), path.join(parent, entry.name)]);
    }
  }
  return found;
}

/**
 * Deletes `dir` and all in it. An agent may have left a folder without write permission (so
 * unlink fails there): folders are made writable by their owner (never following a link) and
 * the delete tried again.
 */
export async function removeTree(dir: string): Promise<void> {
  try {
    await fs.rm(dir, { recursive: true, force: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EACCES' && (err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
    await makeWritable(dir);
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function makeWritable(dir: string): Promise<void> {
  const stat = await fs.lstat(dir).catch(() => undefined);
  if (!stat?.isDirectory()) return;
  await fs.chmod(dir, 0o700);
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await makeWritable(path.join(dir, entry.name));
  }
}

/** Which of `ids` are gone from the database or were archived before the cutoff. */
async function expiredSessions(pool: Pool, ids: readonly string[], archivedBefore: Date): Promise<string[]> {
  const rows = await query<{ id: string; archived_at: Date | null; status: string }>(
    pool,
    'SELECT id, status, archived_at FROM sessions WHERE id = ANY($1::text[])',
    [[...ids]],
  );
  // An archive with no time (none is written so) is kept, as the database's own sweep keeps it.
  const kept = new Set(
    rows.filter((row) => row.status !== 'archived' || row.archived_at === null || row.archived_at >= archivedBefore).map((row) => row.id),
  );
  return ids.filter((id) => !kept.has(id));
}

/** The sweep of one worker's session folders, for startRetention (only `archivedBefore` applies). */
export class SessionFolderSweep implements Sweepable {
  constructor(
    private readonly pool: Pool,
    private readonly parents: readonly string[],
  ) {}

  async sweep(cutoffs: RetentionCutoffs): Promise<SweepResult> {
    if (cutoffs.archivedBefore === null) return { sessions: 0, auditRows: 0 };
    const folders = await sessionFolders(this.parents);
    if (folders.size === 0) return { sessions: 0, auditRows: 0 };
    const expired = await expiredSessions(this.pool, [...folders.keys()], cutoffs.archivedBefore);
    for (const id of expired) {
      for (const dir of folders.get(id) ?? []) await removeTree(dir);
    }
    return { sessions: expired.length, auditRows: 0 };
  }
}

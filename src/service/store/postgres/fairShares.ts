// The database side of fair shares (../quotas.ts) and retention (../retention.ts): what a user
// holds, counted under the creation lock so replicas cannot together let a user past a limit, and
// the sweep that deletes what has been archived long enough, one replica at a time.
import { BROWSER_STATE_SESSION_TABLES } from './browserState';
import type { Pool, PoolClient } from 'pg';
import { LIVE_STATUSES, type HeldCounts } from '../quotas';
import type { RetentionCutoffs, SweepResult } from '../retention';
import { transaction } from './database';

/** Held by one sweeping replica at a time; others skip their turn. */
const RETENTION_LOCK = 7_401_551_125;

/** What is held (archived sessions left out), and what `ownerSub` holds (null: no owner, nothing). */
export async function heldCounts(client: PoolClient, ownerSub: string | null): Promise<HeldCounts> {
  const { rows } = await client.query<{ total: string; owned: string; live: string }>(
    `SELECT count(*) AS total,
            count(*) FILTER (WHERE owner_sub = $1) AS owned,
            count(*) FILTER (WHERE owner_sub = $1 AND status = ANY($2::text[])) AS live
       FROM sessions WHERE status <> 'archived'`,
    [ownerSub, [...LIVE_STATUSES]],
  );
  const row = rows[0];
  return { total: Number(row?.total ?? 0), owned: Number(row?.owned ?? 0), live: Number(row?.live ?? 0) };
}

/**
 * Deletes sessions archived before the cutoff with their events, requests and decisions, and audit
 * rows written before theirs, in one transaction; null when another replica is sweeping.
 */
export function sweepRetention(pool: Pool, cutoffs: RetentionCutoffs): Promise<SweepResult | null> {
  return transaction(pool, async (client) => {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [RETENTION_LOCK]);
    if (!rows[0]?.locked) return null;
    let sessions = 0;
    if (cutoffs.archivedBefore !== null) {
      // Row locks first: a write racing the sweep (an archive's own audit row) waits or is done.
      const doomed = await client.query<{ id: string }>(
        'SELECT id FROM sessions WHERE status = \'archived\' AND archived_at < $1 ORDER BY id COLLATE "C" FOR UPDATE',
        [cutoffs.archivedBefore],
      );
      const ids = doomed.rows.map((r) => r.id);
      if (ids.length > 0) {
        for (const table of [
          'events',
          'control_requests',
          'decisions',
          'session_changes',
          'plan_approvals',
          ...BROWSER_STATE_SESSION_TABLES,
        ]) {
          await client.query(`DELETE FROM ${table} WHERE session_id = ANY($1::text[])`, [ids]);
        }
        await client.query('DELETE FROM sessions WHERE id = ANY($1::text[])', [ids]);
      }
      sessions = ids.length;
    }
    let auditRows = 0;
    if (cutoffs.auditBefore !== null) {
      auditRows = (await client.query('DELETE FROM audit WHERE at < $1', [cutoffs.auditBefore])).rowCount ?? 0;
    }
    return { sessions, auditRows };
  });
}

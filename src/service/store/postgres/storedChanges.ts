// The changes since approval on a team's server: the workspace is the worker's checkout, which no
// API replica can read, so the worker takes the diff when each turn of the agent after an
// approval ends and stores it here (one row per session: the latest), written under its lease
// (a worker whose lease moved on writes nothing); the API serves that row with its time.
import type { Pool } from 'pg';
import * as z from 'zod';
import { ChangesSinceApprovalSchema } from '../../../core/changesSinceApproval';
import type { ChangesOutcome } from '../../changes/approvalSnapshot';
import { query } from './database';

export const SESSION_CHANGES_MIGRATION_SQL = `
  -- The latest changes since approval a worker took of a session's workspace (ChangesOutcome as JSON).
  CREATE TABLE session_changes (
    session_id text PRIMARY KEY REFERENCES sessions (id),
    outcome text NOT NULL,
    computed_at timestamptz NOT NULL
  );
`;

const StoredOutcomeSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('changes'), changes: ChangesSinceApprovalSchema }),
  z.strictObject({ kind: z.literal('no_record'), reason: z.string() }),
  z.strictObject({ kind: z.literal('failed'), reason: z.string(), tooLarge: z.boolean() }),
]);

/** Stores `outcome` as the session's latest, unless the lease is no longer this worker's. */
export async function storeChanges(pool: Pool, lease: { sessionId: string; epoch: number }, outcome: ChangesOutcome): Promise<boolean> {
  const rows = await query<{ session_id: string }>(
    pool,
    `INSERT INTO session_changes (session_id, outcome, computed_at)
       SELECT id, $3, now() FROM sessions WHERE id = $1 AND lease_epoch = $2
     ON CONFLICT (session_id) DO UPDATE SET outcome = excluded.outcome, computed_at = excluded.computed_at
     RETURNING session_id`,
    [lease.sessionId, lease.epoch, JSON.stringify(outcome)],
  );
  return rows.length > 0;
}

/** The latest changes a worker stored for the session, or why there are none. */
export async function readStoredChanges(pool: Pool, sessionId: string): Promise<ChangesOutcome> {
  const [row] = await query<{ outcome: string }>(pool, 'SELECT outcome FROM session_changes WHERE session_id = $1', [sessionId]);
  if (!row) {
    return {
      kind: 'no_record',
      reason:
        "no changes since approval were stored for this session yet (its worker stores them when the agent's turn after an approval ends)",
    };
  }
  const parsed = StoredOutcomeSchema.safeParse(JSON.parse(row.outcome));
  if (!parsed.success) return { kind: 'failed', reason: 'the stored changes are not readable by this server', tooLarge: false };
  return parsed.data;
}

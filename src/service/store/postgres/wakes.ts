// Waking an idle session (a message or a decision to a session whose agent is not at work) makes
// one more of its owner's sessions live, so it is held to the live limit (../quotas.ts) as a new
// session is, and as tightly across replicas: each wake is counted and stored in one transaction
// under the lock that serialises creations, and marks the session running there, so the next wake
// or creation of any replica counts it. Appends to sessions at work stay in the group commit
// (appendBatches.ts); the batch checks under each session's row lock that it is still at work, and
// an append whose session went idle meanwhile comes back (`not_at_work`) to be woken here.
import type { Pool } from 'pg';
import { checkWake, LIVE_STATUSES, type UserQuotas } from '../quotas';
import { notFound } from '../serverStore';
import { appendInTransaction, type AppendOutput, type PendingAppend } from './appendFunction';
import { transaction } from './database';

/** Serialises session creation and wakes across replicas, so the session limits (quotas.ts) hold. */
export const CREATE_LOCK = 7_401_551_124;

/**
 * Migration 11: ultraplan_append_batch with, per append, whether its session must still be at
 * work (`p_at_work`): such an append is checked under the session's row lock (taken in the batch's
 * one order, as ultraplan_append_events takes it) and answered `not_at_work`, storing nothing, when
 * the session is no longer in one of `p_live` statuses.
 */
export const APPEND_AT_WORK_FUNCTION_SQL = `
  CREATE FUNCTION ultraplan_append_batch_at_work(
    p_at_work boolean[],
    p_live text[],
    p_sessions text[],
    p_counts integer[],
    p_actor_subs text[],
    p_actor_names text[],
    p_given text[],
    p_uuids text[],
    p_bodies text[],
    p_decisions text[],
    p_actions text[],
    p_audit_requests text[],
    p_at timestamptz
  )
  RETURNS TABLE (append_index integer, outcome text, at_index integer, seqs bigint[], earlier text[])
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_from integer := 1;
    v_to integer;
    v_status text;
  BEGIN
    FOR a IN 1..cardinality(p_sessions) LOOP
      v_to := v_from + p_counts[a] - 1;
      v_status := NULL;
      IF p_at_work[a] THEN
        SELECT status INTO v_status FROM sessions WHERE id = p_sessions[a] FOR UPDATE;
      END IF;
      IF v_status IS NOT NULL AND v_status <> 'archived' AND NOT (v_status = ANY (p_live)) THEN
        RETURN QUERY SELECT a, 'not_at_work'::text, NULL::integer, NULL::bigint[], NULL::text[];
      ELSE
        RETURN QUERY
          SELECT a, r.outcome, r.at_index, r.seqs, r.earlier
          FROM ultraplan_append_events(
            p_sessions[a], p_given[v_from:v_to], p_uuids[v_from:v_to], p_bodies[v_from:v_to], p_decisions[v_from:v_to],
            p_actions[v_from:v_to], p_audit_requests[v_from:v_to], p_actor_subs[a], p_actor_names[a], p_at
          ) AS r;
      END IF;
      v_from := v_to + 1;
    END LOOP;
  END
  $fn$;
`;

/** How an append goes: a wake (here), to a session at work (checked in the batch), or unchecked (no owner, archived, unknown). */
export type AppendRoute = 'wake' | 'at_work' | 'free';

/** Each append's route, from one read of its sessions' owners and statuses. */
export async function appendRoutes(pool: Pool, appends: ReadonlyArray<Pick<PendingAppend, 'sessionId'>>): Promise<AppendRoute[]> {
  const ids = [...new Set(appends.map((append) => append.sessionId))];
  const { rows } = await pool.query<{ id: string; owner_sub: string | null; status: string }>(
    'SELECT id, owner_sub, status FROM sessions WHERE id = ANY($1::text[])',
    [ids],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return appends.map(({ sessionId }) => {
    const row = byId.get(sessionId);
    if (!row || row.owner_sub === null || row.status === 'archived') return 'free';
    return LIVE_STATUSES.includes(row.status) ? 'at_work' : 'wake';
  });
}

/**
 * Stores an append to a session that may be idle, in one transaction under the creation lock: the
 * session's owner and status read under its row lock, the owner's live sessions counted, the
 * append refused (the live limit's 429, nothing stored) or stored, and the session marked running
 * when it was idle and took something new. An append that only repeats events stored before (a
 * retried POST) is never refused.
 */
export function appendWaking(pool: Pool, append: PendingAppend, quotas: UserQuotas, at: Date): Promise<AppendOutput[]> {
  return transaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [CREATE_LOCK]);
    const { rows } = await client.query<{ owner_sub: string | null; status: string }>(
      'SELECT owner_sub, status FROM sessions WHERE id = $1 FOR UPDATE',
      [append.sessionId],
    );
    const session = rows[0];
    if (!session) throw notFound(append.sessionId);
    const owner = session.owner_sub;
    const waking = owner !== null && session.status !== 'archived' && !LIVE_STATUSES.includes(session.status);
    if (waking && !(await onlyRepeats(client, append))) {
      const live = await client.query<{ live: string }>(
        'SELECT count(*) AS live FROM sessions WHERE owner_sub = $1 AND status = ANY($2::text[])',
        [owner, [...LIVE_STATUSES]],
      );
      checkWake(Number(live.rows[0]?.live ?? 0), quotas);
    }
    const outputs = await appendInTransaction(client, append, at);
    // Its agent takes the turn when the worker delivers it; until then it counts as at work.
    if (waking && outputs.some((output) => 'seq' in output)) {
      await client.query("UPDATE sessions SET status = 'running' WHERE id = $1", [append.sessionId]);
    }
    return outputs;
  });
}

/** Every event of the append names a uuid the session already stored from a client. */
async function onlyRepeats(client: { query: Pool['query'] }, append: PendingAppend): Promise<boolean> {
  const given = append.inputs.map((input) => input.given);
  if (given.some((uuid) => uuid === null)) return false;
  const { rows } = await client.query<{ n: string }>(
    "SELECT count(DISTINCT uuid) AS n FROM events WHERE session_id = $1 AND origin = 'client' AND uuid = ANY($2::text[])",
    [append.sessionId, given],
  );
  return Number(rows[0]?.n ?? 0) === new Set(given).size;
}

// A client's append in one statement: the server-side functions that migrations 3 and 4 install,
// and the call that uses them. The rules are those of a transaction per append (the session's row
// lock, uuid as idempotency key, a decision once), in one round trip for several appends:
// called outside an explicit transaction, the statement is its own transaction, and
// node-postgres answers only at ReadyForQuery, after the commit (synchronous_commit on) is done.
//
// ultraplan_append_events checks everything before it writes anything, and answers a refusal as
// an `outcome` (the caller words the error), so a refused append stores nothing. Inside PL/pgSQL
// each statement takes a fresh snapshot (READ COMMITTED), so what it reads after taking the row
// lock includes whatever the previous holder of that lock committed.
import type { Pool, PoolClient } from 'pg';
import { SessionsError } from '../../../core/errors';
import type { StoredEvent } from '../../host/sessionHost';
import { archivedConflict, notFound } from '../serverStore';
import { query } from './database';

export const APPEND_FUNCTION_SQL = `
  CREATE FUNCTION ultraplan_append_events(
    p_session text,
    -- Per event, in order: the uuid the client gave (NULL: none, never a duplicate) and the uuid
    -- it is stored under; its stored JSON without the leading "id" member (added here, once the
    -- number is known); the request a decision answers; the audit action and request.
    p_given text[],
    p_uuids text[],
    p_bodies text[],
    p_decisions text[],
    p_actions text[],
    p_audit_requests text[],
    p_actor_sub text,
    p_actor_name text,
    p_at timestamptz
  )
  -- outcome: ok | not_found | archived | answered | closed | not_open (the last three at at_index,
  -- 1-based). seqs: each stored event's number (NULL for a duplicate); earlier: the stored body
  -- of an event whose uuid the session already held.
  RETURNS TABLE (outcome text, at_index integer, seqs bigint[], earlier text[])
  LANGUAGE plpgsql AS $fn$
  DECLARE
    n integer := cardinality(p_uuids);
    v_status text;
    v_seq bigint;
    v_state text;
    v_answering text[] := '{}';
    v_fresh boolean[] := '{}';
  BEGIN
    seqs := array_fill(NULL::bigint, ARRAY[n]);
    SELECT status, last_seq INTO v_status, v_seq FROM sessions WHERE id = p_session FOR UPDATE;
    IF NOT FOUND THEN
      outcome := 'not_found';
      RETURN NEXT;
      RETURN;
    END IF;
    IF v_status = 'archived' THEN
      outcome := 'archived';
      RETURN NEXT;
      RETURN;
    END IF;

    earlier := ARRAY(
      SELECT e.body FROM unnest(p_given) WITH ORDINALITY AS g (uuid, i)
      LEFT JOIN events e ON e.session_id = p_session AND e.uuid = g.uuid AND e.origin = 'client'
      ORDER BY g.i
    );
    FOR i IN 1..n LOOP
      -- A uuid repeated inside the batch is stored once, for its first occurrence.
      v_fresh := v_fresh || (earlier[i] IS NULL AND (p_given[i] IS NULL OR array_position(p_given[1:i - 1], p_given[i]) IS NULL));
    END LOOP;

    FOR i IN 1..n LOOP
      CONTINUE WHEN p_decisions[i] IS NULL OR earlier[i] IS NOT NULL;
      SELECT state INTO v_state FROM control_requests WHERE session_id = p_session AND request_id = p_decisions[i];
      IF NOT FOUND THEN
        v_state := NULL;
      END IF;
      IF v_state = 'answered' OR p_decisions[i] = ANY (v_answering) THEN
        outcome := 'answered';
      ELSIF v_state = 'closed' THEN
        outcome := 'closed';
      ELSIF v_state IS DISTINCT FROM 'open' THEN
        outcome := 'not_open';
      END IF;
      IF outcome IS NOT NULL THEN
        at_index := i;
        RETURN NEXT;
        RETURN;
      END IF;
      v_answering := v_answering || p_decisions[i];
    END LOOP;

    FOR i IN 1..n LOOP
      IF v_fresh[i] THEN
        v_seq := v_seq + 1;
        seqs[i] := v_seq;
      END IF;
    END LOOP;
    IF true = ANY (v_fresh) THEN
      INSERT INTO events (session_id, seq, uuid, origin, body, at)
      SELECT p_session, t.seq, t.uuid, 'client', '{"id":"e_' || lpad(t.seq::text, greatest(12, length(t.seq::text)), '0') || '",' || substr(t.body, 2), p_at
      FROM unnest(seqs, p_uuids, p_bodies) AS t (seq, uuid, body)
      WHERE t.seq IS NOT NULL;
      INSERT INTO decisions (session_id, request_id, seq)
      SELECT p_session, t.request_id, t.seq FROM unnest(p_decisions, seqs) AS t (request_id, seq)
      WHERE t.request_id IS NOT NULL AND t.seq IS NOT NULL;
      UPDATE control_requests SET state = 'answered'
      WHERE session_id = p_session AND request_id = ANY (v_answering);
      UPDATE sessions SET last_seq = v_seq, updated_at = p_at WHERE id = p_session;
      IF p_actor_sub IS NOT NULL THEN
        INSERT INTO audit (at, session_id, actor_sub, actor_name, action, request_id, seq)
        SELECT p_at, p_session, p_actor_sub, p_actor_name, t.action, t.request_id, t.seq
        FROM unnest(p_actions, p_audit_requests, seqs) AS t (action, request_id, seq)
        WHERE t.action IS NOT NULL AND t.seq IS NOT NULL
        ORDER BY t.seq;
      END IF;
    END IF;
    outcome := 'ok';
    RETURN NEXT;
  END
  $fn$;
`;

/**
 * Several appends in one statement (migration 4): ultraplan_append_events for each, in the order
 * given, in one transaction. The events of all are in flat arrays; p_counts says how many are
 * each append's.
 */
export const APPEND_BATCH_FUNCTION_SQL = `
  CREATE FUNCTION ultraplan_append_batch(
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
  -- append_index: 1-based, into p_sessions; the rest as ultraplan_append_events answers.
  RETURNS TABLE (append_index integer, outcome text, at_index integer, seqs bigint[], earlier text[])
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_from integer := 1;
    v_to integer;
  BEGIN
    FOR a IN 1..cardinality(p_sessions) LOOP
      v_to := v_from + p_counts[a] - 1;
      RETURN QUERY
        SELECT a, r.outcome, r.at_index, r.seqs, r.earlier
        FROM ultraplan_append_events(
          p_sessions[a], p_given[v_from:v_to], p_uuids[v_from:v_to], p_bodies[v_from:v_to], p_decisions[v_from:v_to],
          p_actions[v_from:v_to], p_audit_requests[v_from:v_to], p_actor_subs[a], p_actor_names[a], p_at
        ) AS r;
      v_from := v_to + 1;
    END LOOP;
  END
  $fn$;
`;

/** One event of a client's append, as the function takes it. */
export interface AppendInput {
  /** The uuid the client gave: the idempotency key (null: none, so never a duplicate). */
  given: string | null;
  /** The event as stored, numbered 0: the function puts the real number in. */
  stamped: StoredEvent;
  /** The control_request a decision answers. */
  decision: string | null;
  audit: { action: string; requestId: string | null } | null;
}

/** Per event: its number when stored now, or the stored event its uuid already named. */
export type AppendOutput = { seq: number } | { earlier: StoredEvent } | { repeatOf: number };

export interface AppendRow extends Record<string, unknown> {
  /** not_at_work: the batch's check that the session is still at work failed (wakes.ts); nothing stored. */
  outcome: 'ok' | 'not_found' | 'archived' | 'answered' | 'closed' | 'not_open' | 'not_at_work';
  at_index: number | null;
  seqs: Array<string | null>;
  earlier: Array<string | null> | null;
}

/** One client's append, waiting to go with others (appendBatches.ts). */
export interface PendingAppend {
  sessionId: string;
  inputs: readonly AppendInput[];
  actor: { sub: string; name: string | null } | undefined;
}

/**
 * Runs appends (of any sessions) in one statement, so in one transaction and one commit; the
 * answer of each: its row, in the order given. The function checks each before it writes it and
 * answers a refusal as an outcome, so one append's refusal leaves the others whole; an error it
 * raises (a constraint) undoes the whole statement, and the caller retries each alone. An append
 * whose `atWork[i]` is true is stored only while its session is in one of `live` (migration 11).
 */
export async function appendTogether(
  pool: Pool,
  appends: readonly PendingAppend[],
  at: Date,
  atWork: readonly boolean[],
  live: readonly string[],
): Promise<AppendRow[]> {
  // Row locks taken in one order (session id) by every batch, so two batches never deadlock.
  const order = appends.map((_, index) => index).sort((a, b) => compareText(appends[a]?.sessionId ?? '', appends[b]?.sessionId ?? ''));
  const sorted = order.map((index) => appends[index] as PendingAppend);
  const events = sorted.flatMap((a) => a.inputs);
  const rows = await query<AppendRow & { append_index: number }>(
    pool,
    'SELECT * FROM ultraplan_append_batch_at_work($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)',
    [
      order.map((index) => atWork[index] === true),
      [...live],
      sorted.map((a) => a.sessionId),
      sorted.map((a) => a.inputs.length),
      sorted.map((a) => a.actor?.sub ?? null),
      sorted.map((a) => a.actor?.name ?? null),
      ...eventColumns(events),
      at,
    ],
    'ultraplan_append_batch_at_work',
  );
  const answers = new Array<AppendRow>(appends.length);
  for (const row of rows) answers[order[row.append_index - 1] as number] = row;
  if (answers.some((row) => row === undefined)) throw new Error('ultraplan_append_batch left an append unanswered');
  return answers;
}

/**
 * One append inside a transaction the caller holds (which may already hold the session's row
 * lock): the same function, so the same checks; its refusal is thrown as appendOutputs words it.
 */
export async function appendInTransaction(client: PoolClient, append: PendingAppend, at: Date): Promise<AppendOutput[]> {
  const { rows } = await client.query<AppendRow>('SELECT * FROM ultraplan_append_events($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)', [
    append.sessionId,
    ...eventColumns(append.inputs),
    append.actor?.sub ?? null,
    append.actor?.name ?? null,
    at,
  ]);
  const row = rows[0];
  if (!row) throw new Error('ultraplan_append_events gave no answer');
  return appendOutputs(append, row);
}

/** The per-event arrays both functions take, in their order: given, uuids, bodies, decisions, actions, audit requests. */
function eventColumns(events: readonly AppendInput[]): unknown[][] {
  return [
    events.map((e) => e.given),
    events.map((e) => e.stamped.uuid as string),
    events.map((e) => bodyWithoutId(e.stamped)),
    events.map((e) => e.decision),
    events.map((e) => e.audit?.action ?? null),
    events.map((e) => e.audit?.requestId ?? null),
  ];
}

/** What one append's row means: its events' numbers (or earlier copies), or the refusal it was. */
export function appendOutputs(append: PendingAppend, row: AppendRow): AppendOutput[] {
  const { sessionId, inputs } = append;
  const failed = row.at_index === null ? undefined : inputs[row.at_index - 1];
  const where = `events[${(row.at_index ?? 1) - 1}]`;
  const requestId = failed?.decision ?? '';
  switch (row.outcome) {
    case 'not_found':
      throw notFound(sessionId);
    case 'archived':
      throw archivedConflict(sessionId);
    case 'answered':
      throw new SessionsError('conflict', `${where}: control_request ${requestId} was already answered`, 409);
    case 'closed':
      throw new SessionsError(
        'conflict',
        `${where}: control_request ${requestId} can no longer be answered: the agent that asked it stopped with the worker that ran it. ` +
          'What it left (its plan, its question) can still be answered in the session.',
        409,
      );
    case 'not_open':
      throw new SessionsError('bad_request', `${where}: no control_request ${requestId} awaits an answer in session ${sessionId}`, 400);
    case 'not_at_work':
      throw new Error(`session ${sessionId} is no longer at work: its append is a wake, to be stored as one`);
    case 'ok':
      break;
  }
  const firstAt = new Map<string, number>();
  return inputs.map((input, index): AppendOutput => {
    const seq = row.seqs[index];
    if (seq !== null && seq !== undefined) {
      if (input.given !== null) firstAt.set(input.given, index);
      return { seq: Number(seq) };
    }
    const earlier = row.earlier?.[index];
    if (earlier) return { earlier: JSON.parse(earlier) as StoredEvent };
    return { repeatOf: firstAt.get(input.given as string) as number };
  });
}

/** Byte order (session ids are ASCII): PostgreSQL's COLLATE "C", which leases.ts locks in too. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `{"id":…,` is what the function adds: the stored text is then exactly JSON.stringify(stamped). */
function bodyWithoutId(stamped: StoredEvent): string {
  const { id: _numberedLater, ...rest } = stamped;
  return JSON.stringify(rest);
}

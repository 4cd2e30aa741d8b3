// Approvals by a quorum on PostgreSQL. An approval of a plan (an `allow` answering the agent's
// ExitPlanMode request) is counted, and the plan released to the agent, in ONE transaction under
// the session's row lock (the lock every writer of the session takes first). Two replicas taking
// the last two approvals at once therefore queue on that lock: the first counts and commits, the
// second reads the first's row after it (READ COMMITTED: each statement sees what committed
// before it), so exactly one of them reaches the quorum and stores the `allow`, and the request
// is answered once (the decisions table's key stands behind that too).
//
// Counting is per request and per exact plan text (its SHA-256): an edited text is a new count
// that starts with its editor. Each approval is a plan_approvals row, an audit row and a
// host-written `plan_approval` event (the agent never receives it) carrying the state so far.
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { SessionsError } from '../../../core/errors';
import { planHash } from '../../../core/decision';
import { ApprovalRefusedError, approvalEvent, type ApprovalState } from '../../../core/planApprovals';
import { EXIT_PLAN_MODE_TOOL } from '../../../core/protocol';
import { formatEventId, type StoredEvent } from '../../host/sessionHost';
import type { AuditActor, SessionOwner } from '../../identity/sessionOwner';
import { approvalRefusal, ruleFor, type QuorumPolicy } from '../../identity/quorum';
import { archivedConflict, notFound, type AppendedEvent } from '../serverStore';
import { appendInTransaction, type AppendInput } from './appendFunction';
import { transaction } from './database';

/** The one approval to count: a single `allow` answering `requestId`. */
export interface ApprovalInput {
  sessionId: string;
  requestId: string;
  input: AppendInput;
  /** User messages sent with the approval (its notes): held until the quorum releases the plan. */
  after: readonly AppendInput[];
  actor: AuditActor;
  policy: QuorumPolicy;
  at: Date;
}

interface LockedSession extends Record<string, unknown> {
  status: string;
  last_seq: string;
  owner_sub: string | null;
  owner_name: string | null;
  owner_groups: string[];
}

/**
 * Counts the approval and, when it completes the quorum, stores the `allow` in the same
 * transaction. Null when this is no plan under a quorum (a tool permission, a request no longer
 * open, a session whose rule is one approval from anyone): the caller appends it as usual.
 * Throws 403 with the reason when this person's approval cannot count.
 */
export async function countApproval(pool: Pool, approval: ApprovalInput): Promise<AppendedEvent[] | null> {
  const { sessionId, requestId, actor, policy, at } = approval;
  return transaction(pool, async (client) => {
    const { rows } = await client.query<LockedSession>(
      'SELECT status, last_seq, owner_sub, owner_name, owner_groups FROM sessions WHERE id = $1 FOR UPDATE',
      [sessionId],
    );
    const session = rows[0];
    if (!session) throw notFound(sessionId);
    if (session.status === 'archived') throw archivedConflict(sessionId);
    const planText = await openPlanText(client, sessionId, requestId);
    if (planText === null) return null;
    const owner: SessionOwner | null =
      session.owner_sub === null ? null : { sub: session.owner_sub, name: session.owner_name, groups: session.owner_groups };
    const rule = ruleFor(policy, owner);
    if (rule.required === 1 && rule.group === null && policy.creatorCounts) return null;

    const approved = approvedText(approval.input.stamped) ?? planText;
    const hash = planHash(approved);
    const earlier = await client.query<{ approver_sub: string; approver_name: string | null }>(
      'SELECT approver_sub, approver_name FROM plan_approvals WHERE session_id = $1 AND request_id = $2 AND plan_hash = $3 ORDER BY id',
      [sessionId, requestId, hash],
    );
    const refusal = approvalRefusal(
      policy,
      rule,
      owner,
      { sub: actor.sub, groups: actor.groups },
      earlier.rows.map((r) => r.approver_sub),
    );
    if (refusal !== null) throw new ApprovalRefusedError(refusal);

    await client.query(
      `INSERT INTO plan_approvals (session_id, request_id, plan_hash, approver_sub, approver_name, at, held_events)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [sessionId, requestId, hash, actor.sub, actor.name, at, JSON.stringify(approval.after.map(heldEvent))],
    );
    const approvers = [...earlier.rows.map((r) => ({ id: r.approver_sub, name: r.approver_name })), { id: actor.sub, name: actor.name }];
    const state: ApprovalState = {
      request_id: requestId,
      plan_hash: hash,
      approvers,
      required: rule.required,
      group: rule.group,
      released: approvers.length >= rule.required,
    };
    const seq = Number(session.last_seq) + 1;
    const event: StoredEvent = { id: formatEventId(seq), ...approvalEvent(state), uuid: randomUUID(), session_id: sessionId };
    await client.query(`INSERT INTO events (session_id, seq, uuid, origin, body, at) VALUES ($1, $2, $3, 'host', $4, $5)`, [
      sessionId,
      seq,
      event.uuid,
      JSON.stringify(event),
      at,
    ]);
    await client.query('UPDATE sessions SET last_seq = $2, updated_at = $3 WHERE id = $1', [sessionId, seq, at]);
    await client.query(
      `INSERT INTO audit (at, session_id, actor_sub, actor_name, action, request_id, seq, plan_hash) VALUES ($1, $2, $3, $4, 'approve', $5, $6, $7)`,
      [at, sessionId, actor.sub, actor.name, requestId, seq, hash],
    );
    if (!state.released) return [{ event, duplicate: false, approval: state }];
    // The quorum is reached: the `allow` goes to the agent now, in this transaction, followed by
    // every approver's notes in the order they approved.
    const held = await client.query<{ held_events: HeldEvent[] }>(
      'SELECT held_events FROM plan_approvals WHERE session_id = $1 AND request_id = $2 AND plan_hash = $3 ORDER BY id',
      [sessionId, requestId, hash],
    );
    const inputs = [approval.input, ...held.rows.flatMap((row) => row.held_events.map(heldInput))];
    const outputs = await appendInTransaction(client, { sessionId, inputs, actor }, at);
    const [output] = outputs;
    if (!output || !('seq' in output)) {
      throw new SessionsError('conflict', `control_request ${requestId} was already answered`, 409);
    }
    return outputs.flatMap((out, index): AppendedEvent[] => {
      const input = inputs[index];
      if (!input || !('seq' in out)) return [];
      const event: StoredEvent = { ...input.stamped, id: formatEventId(out.seq) };
      return [index === 0 ? { event, duplicate: false, approval: state } : { event, duplicate: false }];
    });
  });
}

/** A held user message: the event as it will be stored, and the uuid its client gave. */
interface HeldEvent {
  given: string | null;
  stamped: StoredEvent;
}

function heldEvent(input: AppendInput): HeldEvent {
  return { given: input.given, stamped: input.stamped };
}

function heldInput(held: HeldEvent): AppendInput {
  return { given: held.given, stamped: held.stamped, decision: null, audit: null };
}

/**
 * The plan text of the agent's open ExitPlanMode request `requestId`; null when that request is
 * not open or is not a plan (a tool permission): the usual append then answers or refuses it.
 */
async function openPlanText(client: PoolClient, sessionId: string, requestId: string): Promise<string | null> {
  const open = await client.query('SELECT 1 FROM control_requests WHERE session_id = $1 AND request_id = $2 AND state = $3', [
    sessionId,
    requestId,
    'open',
  ]);
  if (open.rowCount === 0) return null;
  const { rows } = await client.query<{ tool: string | null; plan: unknown }>(
    `SELECT b->'request'->>'tool_name' AS tool, b->'request'->'input'->'plan' AS plan
     FROM (SELECT body::jsonb AS b FROM events
           WHERE session_id = $1 AND origin <> 'client' AND body LIKE '%"control_request"%') e
     WHERE b->>'type' = 'control_request' AND b->>'request_id' = $2
     LIMIT 1`,
    [sessionId, requestId],
  );
  const row = rows[0];
  if (!row || row.tool !== EXIT_PLAN_MODE_TOOL) return null;
  return typeof row.plan === 'string' ? row.plan : '';
}

/** The text an `allow` approves: its updatedInput.plan (the edited text, or the one shown). */
function approvedText(event: StoredEvent): string | null {
  const response = (event as { response?: { response?: { updatedInput?: { plan?: unknown } } } }).response;
  const plan = response?.response?.updatedInput?.plan;
  return typeof plan === 'string' ? plan : null;
}

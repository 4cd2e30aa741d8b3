// A session created from a plan file on PostgreSQL (core/planFileSession.ts, docs/plans-on-disk.md):
// in the creation's own transaction the plan is written as the host's ExitPlanMode request after
// the creation's events, its request is open in control_requests (so the append function and the
// quorum's count take a decision on it as on any agent's plan), the session waits in
// requires_action, the creation counts as given (agent_cursor) and no agent state exists
// (checkpoint 'null'). A worker that claims it holds the plan without starting an agent
// (runtime/agentRuntime.ts); the stored decision starts the agent that carries it out or revises it.
import type { PoolClient } from 'pg';
import { SessionsError } from '../../../core/errors';
import { planFileEvents, readPlanFileField } from '../../../core/planFileSession';
import { newId } from '../../host/sessionHost';

type HostEvent = Record<string, unknown> & { type: string };

/** What the host writes for the plan, and the request a decision answers. */
export interface PlanFileRecords {
  events: HostEvent[];
  requestId: string;
  toolUseId: string;
}

/** The records for a creation request's `plan_file` (null: it has none); throws 400 with why it cannot be taken. */
export function planFileRecordsOf(field: unknown): PlanFileRecords | null {
  const read = readPlanFileField(field);
  if (!read.ok) throw new SessionsError('bad_request', read.reason, 400);
  if (!read.planFile) return null;
  const ids = { toolUseId: newId('toolu'), requestId: newId('req') };
  return { events: planFileEvents(read.planFile, ids), ...ids };
}

/**
 * After the events are inserted (the creation's, then the plan's, numbered up to `lastSeq`): the
 * plan's request opens and the session waits on it with no agent run.
 */
export async function holdPlanFile(
  client: PoolClient,
  sessionId: string,
  records: PlanFileRecords,
  seqs: { creation: number; last: number },
): Promise<void> {
  await client.query("INSERT INTO control_requests (session_id, request_id, tool_use_id, state) VALUES ($1, $2, $3, 'open')", [
    sessionId,
    records.requestId,
    records.toolUseId,
  ]);
  await client.query(
    "UPDATE sessions SET status = 'requires_action', last_seq = $2, agent_cursor = $3, checkpoint = 'null' WHERE id = $1",
    [sessionId, seqs.last, seqs.creation],
  );
}

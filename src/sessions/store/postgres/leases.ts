// What a worker does in the database: claim a session under a lease, keep the lease alive, write
// what its agent says, and read what clients sent. Every write checks the lease's epoch under the
// session's row lock: a worker that lost its lease (paused too long, cut off) and comes back
// writes nothing, because the session's epoch moved on when another worker claimed it.
import type { Pool } from 'pg';
import { SessionsError } from '../../../core/errors';
import type { SessionStatus } from '../../../core/protocol';
import type { SessionMeta, StoredEvent } from '../../store';
import { announce, query, transaction } from './database';
import { insertEvents, lockSession, seqOf, stamp } from './postgresStore';

export interface Lease {
  sessionId: string;
  epoch: number;
}

export interface ClaimedSession extends Lease {
  meta: SessionMeta;
  status: SessionStatus;
  /** The agent's saved state: undefined none yet, null reported lost. */
  checkpoint: unknown;
  /** The newest client event the agent was given. */
  agentCursor: number;
}

/** What a worker writes, in order, in one transaction. */
export type WorkerRecord =
  | { t: 'event'; event: Record<string, unknown> & { type: string }; origin: 'agent' | 'host' }
  | { t: 'status'; status: Exclude<SessionStatus, 'archived'> }
  | { t: 'checkpoint'; state: unknown }
  | { t: 'delivered'; seq: number }
  /** The agent's requests nobody can answer any more (its process went with a worker). */
  | { t: 'close_requests'; ids: readonly string[] };

export class LeaseLostError extends Error {
  constructor(readonly sessionId: string) {
    super(`the lease on session ${sessionId} was taken over by another worker`);
  }
}

export class SessionLeases {
  constructor(
    private readonly pool: Pool,
    private readonly workerId: string,
    private readonly leaseMs: number,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Claims one session that is not archived and whose lease is free or expired (oldest first).
   * SKIP LOCKED: workers claiming at once each take a different session instead of queueing.
   */
  async claim(): Promise<ClaimedSession | undefined> {
    const [row] = await query<{
      id: string;
      title: string;
      created_at: Date;
      environment_id: string | null;
      session_context: string | null;
      agent_label: string | null;
      status: SessionStatus;
      checkpoint: string | null;
      lease_epoch: string;
      agent_cursor: string;
    }>(
      this.pool,
      `UPDATE sessions SET worker_id = $1, lease_epoch = lease_epoch + 1, lease_until = now() + $2 * interval '1 millisecond'
       WHERE id = (SELECT id FROM sessions WHERE status <> 'archived' AND (lease_until IS NULL OR lease_until < now())
                   ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING id, title, created_at, environment_id, session_context, agent_label, status, checkpoint, lease_epoch, agent_cursor`,
      [this.workerId, this.leaseMs],
    );
    if (!row) return undefined;
    return {
      sessionId: row.id,
      epoch: Number(row.lease_epoch),
      meta: {
        id: row.id,
        title: row.title,
        created_at: row.created_at.toISOString(),
        environment_id: row.environment_id,
        session_context: row.session_context === null ? null : (JSON.parse(row.session_context) as SessionMeta['session_context']),
        ...(row.agent_label !== null ? { agent_label: row.agent_label } : {}),
      },
      status: row.status,
      checkpoint: row.checkpoint === null ? undefined : (JSON.parse(row.checkpoint) as unknown),
      agentCursor: Number(row.agent_cursor),
    };
  }

  /** Extends the leases still ours; returns the sessions whose lease was lost (or archived). */
  async renew(leases: readonly Lease[]): Promise<Set<string>> {
    if (leases.length === 0) return new Set();
    // Rows locked in session-id order, as a batch of appends locks them (appendFunction.ts), so
    // the two never wait for each other in a circle.
    const rows = await query<{ id: string }>(
      this.pool,
      `WITH locked AS MATERIALIZED (SELECT id FROM sessions WHERE id = ANY($3::text[]) ORDER BY id COLLATE "C" FOR UPDATE)
       UPDATE sessions s SET lease_until = now() + $2 * interval '1 millisecond'
       FROM unnest($3::text[], $4::bigint[]) AS l (id, epoch)
       WHERE s.id = l.id AND s.lease_epoch = l.epoch AND s.worker_id = $1 AND s.status <> 'archived'
         AND s.id IN (SELECT id FROM locked)
       RETURNING s.id`,
      [this.workerId, this.leaseMs, leases.map((l) => l.sessionId), leases.map((l) => l.epoch)],
    );
    const kept = new Set(rows.map((r) => r.id));
    return new Set(leases.filter((l) => !kept.has(l.sessionId)).map((l) => l.sessionId));
  }

  /** Lets go of a lease at once (a clean stop), so another worker need not wait for it to expire. */
  async release(lease: Lease): Promise<void> {
    await query(this.pool, 'UPDATE sessions SET lease_until = NULL, worker_id = NULL WHERE id = $1 AND lease_epoch = $2', [
      lease.sessionId,
      lease.epoch,
    ]);
  }

  /** Writes records in one transaction if the lease is still ours; returns the stored events. */
  async write(lease: Lease, records: readonly WorkerRecord[]): Promise<StoredEvent[]> {
    const id = lease.sessionId;
    const stored = await transaction(this.pool, async (client) => {
      const session = await lockSession(client, id);
      const { rows } = await client.query<{ lease_epoch: string }>('SELECT lease_epoch FROM sessions WHERE id = $1', [id]);
      if (Number(rows[0]?.lease_epoch) !== lease.epoch) throw new LeaseLostError(id);
      let seq = session.last_seq;
      const events: Array<{ event: StoredEvent; origin: 'agent' | 'host' }> = [];
      let status: string | undefined;
      let checkpoint: { state: unknown } | undefined;
      let delivered: number | undefined;
      const requests: Array<{ requestId: string; toolUseId: string }> = [];
      const closing: string[] = [];
      for (const record of records) {
        if (record.t === 'event') {
          const event = stamp(id, ++seq, record.event);
          events.push({ event, origin: record.origin });
          const request = canUseToolRequest(event);
          if (request) requests.push(request);
        } else if (record.t === 'status') status = record.status;
        else if (record.t === 'checkpoint') checkpoint = { state: record.state };
        else if (record.t === 'delivered') delivered = Math.max(delivered ?? 0, record.seq);
        else closing.push(...record.ids);
      }
      // An archived session takes nothing more from its agent (the archive won the race).
      if (session.status === 'archived') return [];
      const now = new Date();
      if (closing.length > 0) {
        await client.query(
          "UPDATE control_requests SET state = 'closed' WHERE session_id = $1 AND state = 'open' AND request_id = ANY($2::text[])",
          [id, closing],
        );
      }
      await insertEvents(client, id, events, now);
      for (const { requestId, toolUseId } of requests) {
        await client.query(
          "INSERT INTO control_requests (session_id, request_id, tool_use_id, state) VALUES ($1, $2, $3, 'open') ON CONFLICT DO NOTHING",
          [id, requestId, toolUseId],
        );
      }
      await client.query(
        `UPDATE sessions SET last_seq = $2,
           updated_at = CASE WHEN $3 OR $4::text IS NOT NULL THEN $5 ELSE updated_at END,
           status = COALESCE($4, status),
           checkpoint = CASE WHEN $6 THEN $7 ELSE checkpoint END,
           agent_cursor = GREATEST(agent_cursor, $8)
         WHERE id = $1`,
        [
          id,
          seq,
          events.length > 0,
          status ?? null,
          now,
          checkpoint !== undefined,
          checkpoint === undefined ? null : JSON.stringify(checkpoint.state ?? null),
          delivered ?? 0,
        ],
      );
      return events.map((e) => e.event);
    });
    if (stored.length > 0 || records.some((r) => r.t === 'status')) await announce(this.pool, id, this.log);
    return stored;
  }

  /** Client events after `afterSeq` (what the agent has not been given yet), in order. */
  async clientEventsAfter(sessionId: string, afterSeq: number): Promise<StoredEvent[]> {
    const rows = await query<{ body: string }>(
      this.pool,
      "SELECT body FROM events WHERE session_id = $1 AND seq > $2 AND origin = 'client' ORDER BY seq LIMIT 1000",
      [sessionId, afterSeq],
    );
    return rows.map((r) => JSON.parse(r.body) as StoredEvent);
  }

  /** Every event after `afterSeq`, whoever wrote it, in order (what a worker reads the log from). */
  async eventsAfter(sessionId: string, afterSeq: number): Promise<StoredEvent[]> {
    const rows = await query<{ body: string }>(this.pool, 'SELECT body FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq', [
      sessionId,
      afterSeq,
    ]);
    return rows.map((r) => JSON.parse(r.body) as StoredEvent);
  }

  /** The agent's requests still awaiting a decision: request_id -> tool_use_id. */
  async openRequests(sessionId: string): Promise<Map<string, string>> {
    const rows = await query<{ request_id: string; tool_use_id: string }>(
      this.pool,
      "SELECT request_id, tool_use_id FROM control_requests WHERE session_id = $1 AND state = 'open'",
      [sessionId],
    );
    return new Map(rows.map((r) => [r.request_id, r.tool_use_id]));
  }

  /** The session's status as stored (archived: stop the agent). */
  async status(sessionId: string): Promise<string> {
    const [row] = await query<{ status: string }>(this.pool, 'SELECT status FROM sessions WHERE id = $1', [sessionId]);
    if (!row) throw new SessionsError('not_found', `no session ${sessionId}`, 404);
    return row.status;
  }
}

function canUseToolRequest(event: StoredEvent): { requestId: string; toolUseId: string } | undefined {
  if (event.type !== 'control_request' || typeof event.request_id !== 'string') return undefined;
  const request = event.request as { subtype?: unknown; tool_use_id?: unknown } | undefined;
  if (request?.subtype !== 'can_use_tool') return undefined;
  return { requestId: event.request_id, toolUseId: typeof request.tool_use_id === 'string' ? request.tool_use_id : '' };
}

export { seqOf };

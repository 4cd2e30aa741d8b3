// What a worker does in the database: claim a session under a lease, keep the lease alive, write
// what its agent says, and read what clients sent. Every write checks the lease's epoch under the
// session's row lock: a worker that lost its lease (paused too long, cut off) and comes back
// writes nothing, because the session's epoch moved on when another worker claimed it.
import type { Pool } from 'pg';
import { SessionsError } from '../../../core/errors';
import type { SessionStatus } from '../../../core/protocol';
import type { SessionMeta, StoredEvent } from '../sessionStore';
import { announce, query, transaction } from './database';
import { storeChanges } from './storedChanges';
import type { ChangesOutcome } from '../../changes/approvalSnapshot';
import { insertEvents, lockSession, seqOf, stamp } from './postgresStore';
import type { RuntimeRecord } from '../../runtime/runtimeStore';

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

/** What a worker writes, in order, in one transaction: what its agent runtime writes. */
export type WorkerRecord = RuntimeRecord;

interface ClaimRow {
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
}

/** Serialises claims across workers, so a user's slot cap holds. */
const CLAIM_LOCK = 7_401_551_126;

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
   * Claims one session that is not archived and whose lease is free or expired, fairly between
   * users: a session some worker already started (its lease ran out) first, then the owner with
   * the fewest sessions running, then the owner whose last session was started longest ago (never
   * first), then the oldest. An owner already holding `slotsPerUser` running sessions (all workers
   * together) waits; sessions without an owner (the shared token) count as one owner's but are not
   * capped. Claims are serialised by an advisory lock, so the cap holds across workers.
   */
  async claim(slotsPerUser: number = Number.MAX_SAFE_INTEGER): Promise<ClaimedSession | undefined> {
    const row = await transaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [CLAIM_LOCK]);
      const { rows } = await client.query<ClaimRow>(
        `WITH running AS (
           SELECT COALESCE(owner_sub, '') AS owner, count(*) AS n FROM sessions
            WHERE status <> 'archived' AND lease_until >= now() GROUP BY 1),
         next AS (
           SELECT s.id, COALESCE(s.owner_sub, '') AS owner, s.first_claimed_at IS NULL AS fresh FROM sessions s
             LEFT JOIN running r ON r.owner = COALESCE(s.owner_sub, '')
             LEFT JOIN owner_turns t ON t.owner = COALESCE(s.owner_sub, '')
            WHERE s.status <> 'archived' AND (s.lease_until IS NULL OR s.lease_until < now())
              AND (s.owner_sub IS NULL OR COALESCE(r.n, 0) < $3)
            ORDER BY s.first_claimed_at IS NULL, COALESCE(r.n, 0), t.last_started_at NULLS FIRST, s.created_at, s.id
            LIMIT 1 FOR UPDATE OF s SKIP LOCKED),
         turn AS (
           INSERT INTO owner_turns (owner, last_started_at) SELECT owner, clock_timestamp() FROM next WHERE fresh
           ON CONFLICT (owner) DO UPDATE SET last_started_at = EXCLUDED.last_started_at)
         UPDATE sessions SET worker_id = $1, lease_epoch = lease_epoch + 1, lease_until = now() + $2 * interval '1 millisecond',
                first_claimed_at = COALESCE(first_claimed_at, now())
          WHERE id = (SELECT id FROM next)
         RETURNING id, title, created_at, environment_id, session_context, agent_label, status, checkpoint, lease_epoch, agent_cursor`,
        [this.workerId, this.leaseMs, slotsPerUser],
      );
      return rows[0];
    });
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

  /** Stores the session's latest changes since approval under `lease` (storedChanges.ts); false when the lease moved on. */
  storeChanges(lease: Lease, outcome: ChangesOutcome): Promise<boolean> {
    return storeChanges(this.pool, lease, outcome);
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

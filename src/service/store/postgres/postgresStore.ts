// The PostgreSQL store: what an API replica serves. Sessions, events and decisions live in the
// database only, so any replica answers for any session; agents run in workers (../../server/
// worker.ts) that write through the same tables.
//
// Why events are numbered under the session's row lock rather than by a global sequence: a
// sequence hands out numbers before commit, so a reader could see 8 committed while 7 is still
// in flight, move its cursor to 8 and never see 7. Under the row lock, the next number is taken
// only after the previous holder committed, so numbers become visible in order.
import { PostgresBrowserState } from './browserState';
import { PLAN_FILE_FIELD } from '../../../core/planFileSession';
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import * as z from 'zod';
import { SessionsError } from '../../../core/errors';
import { CreateSessionRequestSchema, type AnyEvent, type CreateSessionRequest, type SessionResource } from '../../../core/protocol';
import type { AgentFactory } from '../../../agents/agent';
import { checkEventBatch, parseClientEvent, parseCreationEvents } from '../../host/incomingEvents';
import {
  DEFAULT_EVENT_PAGE_SIZE,
  DEFAULT_HOST_LIMITS,
  MAX_EVENT_PAGE_SIZE,
  checkTitle,
  formatEventId,
  type SessionHostLimits,
  type StoredEvent,
  type StoredEventPage,
} from '../../host/sessionHost';
import { cursorSequence, notFound, unknownListCursor, type AppendedEvent, type ServerStore, type SessionListPage } from '../serverStore';
import { announce, announcementsSent, openPool, query, transaction } from './database';
import type { AppendInput } from './appendFunction';
import { AppendBatches } from './appendBatches';
import { checkSchema, migrate } from './migrations';
import { SessionNotifications } from './notifications';
import { readStoredChanges } from './storedChanges';
import type { ChangesOutcome } from '../../changes/approvalSnapshot';
import { auditEntryOf, type AuditEntry } from '../../identity/audit';
import { checkNewSession } from '../quotas';
import { heldCounts, sweepRetention } from './fairShares';
import { CREATE_LOCK } from './wakes';
import type { RetentionCutoffs, Sweepable, SweepResult } from '../retention';
import { publicOwner, type AuditActor, type SessionOwner, type Visibility } from '../../identity/sessionOwner';
import { DEFAULT_QUORUM_POLICY, quorumIsTrivial, type QuorumPolicy } from '../../identity/quorum';
import { countApproval } from './planApprovals';
import { holdPlanFile, planFileRecordsOf } from './planFileCreation';

export interface PostgresStoreOptions {
  connectionString: string;
  limits?: Partial<SessionHostLimits>;
  log?: (line: string) => void;
  /** Connections in this process's pool (default 10). */
  poolSize?: number;
  /** How many people approve a plan before its agent gets it (--require-approvals). */
  quorum?: QuorumPolicy;
}

const UNIQUE_VIOLATION = '23505';

interface SessionRow extends Record<string, unknown> {
  id: string;
  title: string;
  created_at: Date;
  updated_at: Date;
  environment_id: string | null;
  session_context: string | null;
  status: string;
  owner_sub: string | null;
  owner_name: string | null;
  owner_groups: string[];
}

const SESSION_COLUMNS = 'id, title, created_at, updated_at, environment_id, session_context, status, owner_sub, owner_name, owner_groups';

export class PostgresServerStore implements ServerStore, Sweepable {
  readonly limits: SessionHostLimits;
  readonly description: string;
  private closed = false;
  private readonly appends: AppendBatches;
  /** The review page's browser sessions, links and sign-ins, shared by every replica. */
  readonly browserState: PostgresBrowserState;

  private constructor(
    readonly pool: Pool,
    readonly notifications: SessionNotifications,
    limits: SessionHostLimits,
    private readonly log: (line: string) => void,
    where: string,
    private readonly quorum: QuorumPolicy,
  ) {
    this.limits = limits;
    this.description = `PostgreSQL at ${where}`;
    this.appends = new AppendBatches(pool, limits);
    this.browserState = new PostgresBrowserState(pool, log);
  }

  /** Connects, applies missing migrations (under a lock), and listens for commits. */
  static async open(options: PostgresStoreOptions): Promise<PostgresServerStore> {
    const log = options.log ?? (() => {});
    const pool = openPool(options.connectionString, log, options.poolSize);
    try {
      const applied = await migrate(pool);
      if (applied.length > 0) log(`postgres: applied schema migrations ${applied.join(', ')}`);
      const notifications = new SessionNotifications(options.connectionString, pool, log);
      await notifications.start();
      return new PostgresServerStore(
        pool,
        notifications,
        { ...DEFAULT_HOST_LIMITS, ...options.limits },
        log,
        describe(options.connectionString),
        options.quorum ?? DEFAULT_QUORUM_POLICY,
      );
    } catch (err) {
      await pool.end().catch(() => {});
      throw err;
    }
  }

  async createSession(request: CreateSessionRequest, agent?: AgentFactory, owner: SessionOwner | null = null): Promise<SessionResource> {
    this.refuseWhenClosed();
    if (agent !== undefined) {
      throw new SessionsError('bad_request', "this server's agents run in its workers; a session cannot bring its own", 400);
    }
    const parsed = CreateSessionRequestSchema.safeParse(request);
    if (!parsed.success) throw new SessionsError('bad_request', `invalid session: ${zodText(parsed.error)}`, 400);
    const body = parsed.data;
    const title = checkTitle(body.title);
    const raws = body.events.map((e) => e.data);
    checkEventBatch(raws, this.limits, 'events');
    const { events } = parseCreationEvents(raws);
    const held = planFileRecordsOf((body as Record<string, unknown>)[PLAN_FILE_FIELD]);
    const id = `session_${randomUUID().replace(/-/g, '')}`;
    const now = new Date();
    await transaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [CREATE_LOCK]);
      checkNewSession(await heldCounts(client, owner?.sub ?? null), this.limits.maxSessions, this.limits, owner !== null);
      await client.query(
        `INSERT INTO sessions (id, title, created_at, updated_at, environment_id, session_context, status, last_seq, owner_sub, owner_name, owner_groups)
         VALUES ($1, $2, $3, $3, $4, $5, 'running', $6, $7, $8, $9)`,
        [
          id,
          title,
          now,
          body.environment_id ?? null,
          body.session_context ? JSON.stringify(body.session_context) : null,
          events.length,
          owner?.sub ?? null,
          owner?.name ?? null,
          owner?.groups ?? [],
        ],
      );
      const written = held?.events ?? [];
      await insertEvents(
        client,
        id,
        [
          ...events.map((e, index) => ({ event: stamp(id, index + 1, e.event), origin: 'client' as const })),
          ...written.map((event, index) => ({ event: stamp(id, events.length + index + 1, event), origin: 'host' as const })),
        ],
        now,
      );
      if (held) await holdPlanFile(client, id, held, { creation: events.length, last: events.length + written.length });
    });
    await announce(this.pool, id, this.log);
    return this.getSession(id);
  }

  async getSession(id: string): Promise<SessionResource> {
    const [row] = await query<SessionRow>(this.pool, `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`, [id]);
    if (!row) throw notFound(id);
    return resource(row);
  }

  async getOwner(id: string): Promise<SessionOwner | null> {
    const [row] = await query<SessionRow>(this.pool, 'SELECT owner_sub, owner_name, owner_groups FROM sessions WHERE id = $1', [id]);
    if (!row) throw notFound(id);
    return ownerOf(row);
  }

  async listSessions(limit: number, cursor: string | null, visibility: Visibility = null): Promise<SessionListPage> {
    // $1 and $2: who may see; NULL sees all. The same condition bounds the cursor, so a cursor
    // naming a session this reader cannot see is as unknown as one never given.
    const visible = '($1::text IS NULL OR owner_sub = $1 OR owner_groups && $2::text[])';
    const who = [visibility?.sub ?? null, visibility ? [...visibility.reviewGroups] : []];
    let after: SessionRow | undefined;
    if (cursor !== null) {
      [after] = await query<SessionRow>(this.pool, `SELECT id, created_at FROM sessions WHERE id = $3 AND ${visible}`, [...who, cursor]);
      if (!after) throw unknownListCursor(cursor);
    }
    const rows = after
      ? await query<SessionRow>(
          this.pool,
          `SELECT ${SESSION_COLUMNS} FROM sessions WHERE ${visible} AND (created_at, id) < ($3, $4) ORDER BY created_at DESC, id DESC LIMIT $5`,
          [...who, after.created_at, after.id, limit + 1],
        )
      : await query<SessionRow>(
          this.pool,
          `SELECT ${SESSION_COLUMNS} FROM sessions WHERE ${visible} ORDER BY created_at DESC, id DESC LIMIT $3`,
          [...who, limit + 1],
        );
    const data = rows.slice(0, limit).map(resource);
    const last = data[data.length - 1];
    return { data, nextCursor: rows.length > limit && last ? last.id : null };
  }

  async readEvents(id: string, afterId: string | null, limit: number = DEFAULT_EVENT_PAGE_SIZE): Promise<StoredEventPage> {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_EVENT_PAGE_SIZE) {
      throw new SessionsError('bad_request', `limit must be an integer from 1 to ${MAX_EVENT_PAGE_SIZE}, got ${limit}`, 400);
    }
    const after = cursorSequence(afterId);
    const rows = await query<{ body: string; known: boolean }>(
      this.pool,
      // One statement, so the 404 and the page agree: the session row is read with its events.
      `SELECT s.id IS NOT NULL AS known, e.body FROM (SELECT id FROM sessions WHERE id = $1) s
       LEFT JOIN LATERAL (SELECT body FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3) e ON true`,
      [id, Math.min(after, Number.MAX_SAFE_INTEGER), limit + 1],
    );
    if (rows.length === 0) throw notFound(id);
    const events = rows.filter((r) => r.body !== null).map((r) => JSON.parse(r.body) as StoredEvent);
    const data = events.slice(0, limit);
    return {
      data,
      has_more: events.length > limit,
      first_id: data[0]?.id ?? null,
      last_id: data[data.length - 1]?.id ?? null,
    };
  }

  async appendEvents(id: string, events: AnyEvent[], actor?: AuditActor): Promise<AppendedEvent[]> {
    this.refuseWhenClosed();
    if (!Array.isArray(events) || events.length === 0) throw new SessionsError('bad_request', 'events must be a non-empty list', 400);
    checkEventBatch(events, this.limits, 'events');
    const routes = events.map((raw, index) => parseClientEvent(raw, `events[${index}]`, 'append'));
    const inputs = routes.map((route): AppendInput => {
      const given = typeof route.event.uuid === 'string' && route.event.uuid ? route.event.uuid : null;
      const stamped = stamp(id, 0, route.event);
      const audit = auditEntryOf(stamped);
      return {
        given,
        stamped,
        decision: route.kind === 'decision' ? route.requestId : null,
        audit: actor && audit ? { action: audit.action, requestId: audit.requestId } : null,
      };
    });
    const approval = await this.countApproval(id, inputs, actor);
    if (approval) {
      void announce(this.pool, id, this.log);
      return approval;
    }
    const outputs = await this.appends.append({ sessionId: id, inputs, actor }).catch((err: unknown) => {
      // Two replicas deciding the same request at once: the constraint lets one through.
      if ((err as { code?: unknown }).code === UNIQUE_VIOLATION) {
        throw new SessionsError('conflict', 'this control_request was already answered', 409);
      }
      throw err;
    });
    const stored = outputs.map((output, index) => ('seq' in output ? stamp(id, output.seq, (inputs[index] as AppendInput).stamped) : null));
    const answers = outputs.map((output, index): AppendedEvent => {
      const event = stored[index];
      if (event) return { event, duplicate: false };
      return {
        event: 'earlier' in output ? output.earlier : (stored[(output as { repeatOf: number }).repeatOf] as StoredEvent),
        duplicate: true,
      };
    });
    // Not awaited: the commit is what the caller is told of; readers that miss this wake-up
    // catch up by polling (notifications.ts), and close() waits for it.
    if (answers.some((a) => !a.duplicate)) void announce(this.pool, id, this.log);
    return answers;
  }

  /** The latest a worker stored (storedChanges.ts): the worker's checkout is not readable here. */
  async changesSinceApproval(id: string): Promise<ChangesOutcome> {
    await this.getSession(id);
    return readStoredChanges(this.pool, id);
  }

  /**
   * Under a quorum, an `allow` is counted (planApprovals.ts) rather than appended; null when the
   * append goes the usual way. An approval travels alone or followed by user messages only (Approve
   * with notes): those are held with the approval and reach the agent after the plan is released,
   * so a batch cannot carry anything else past the count.
   */
  private async countApproval(id: string, inputs: readonly AppendInput[], actor: AuditActor | undefined): Promise<AppendedEvent[] | null> {
    if (quorumIsTrivial(this.quorum)) return null;
    const allows = inputs.filter((input) => input.decision !== null && auditEntryOf(input.stamped)?.action === 'allow');
    const [only] = allows;
    if (!only || only.decision === null) return null;
    const [first, ...after] = inputs;
    if (first !== only || after.some((input) => input.stamped.type !== 'user')) {
      throw new SessionsError(
        'bad_request',
        'this server counts approvals by a quorum: send an approval first in its request, followed only by user messages (the notes)',
        400,
      );
    }
    return countApproval(this.pool, {
      sessionId: id,
      requestId: only.decision,
      input: only,
      after,
      actor: actor ?? { sub: 'shared_token', name: null },
      policy: this.quorum,
      at: new Date(),
    });
  }

  async archive(id: string, actor?: AuditActor): Promise<void> {
    this.refuseWhenClosed();
    await transaction(this.pool, async (client) => {
      const session = await lockSession(client, id);
      if (session.status === 'archived') throw new SessionsError('conflict', `session ${id} is already archived`, 409);
      await client.query("UPDATE sessions SET status = 'archived', updated_at = now(), archived_at = now() WHERE id = $1", [id]);
      if (actor) await insertAudit(client, id, actor, [{ action: 'archive', requestId: null, eventId: null }], new Date());
    });
    await announce(this.pool, id, this.log);
  }

  watch(id: string, wake: () => void): () => void {
    return this.notifications.watch(id, () => wake());
  }

  async checkReady(timeoutMs: number): Promise<void> {
    this.refuseWhenClosed();
    await checkSchema(this.pool, timeoutMs);
  }

  /** Retention (store/retention.ts); null when another replica holds the sweep. */
  sweep(cutoffs: RetentionCutoffs): Promise<SweepResult | null> {
    this.refuseWhenClosed();
    return sweepRetention(this.pool, cutoffs);
  }

  async countSessions(): Promise<number> {
    const [row] = await query<{ count: string }>(this.pool, 'SELECT count(*) AS count FROM sessions');
    return Number(row?.count ?? 0);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.browserState.stop();
    await announcementsSent(this.pool);
    await this.notifications.close();
    await this.pool.end();
  }

  private refuseWhenClosed(): void {
    if (this.closed) throw new SessionsError('transient', 'the server is shutting down; retry shortly', 503);
  }
}

/** The stored form of an event: the wire event with its id, uuid (kept when given) and session. */
export function stamp(sessionId: string, seq: number, event: AnyEvent | (Record<string, unknown> & { type: string })): StoredEvent {
  const { id: _ignored, ...rest } = event as Record<string, unknown> & { type: string };
  const uuid = typeof rest.uuid === 'string' && rest.uuid ? rest.uuid : randomUUID();
  return { id: formatEventId(seq), ...rest, uuid, session_id: sessionId };
}

export function seqOf(event: StoredEvent): number {
  return cursorSequence(event.id);
}

export async function insertEvents(
  client: PoolClient,
  sessionId: string,
  events: ReadonlyArray<{ event: StoredEvent; origin: 'client' | 'agent' | 'host' }>,
  at: Date,
): Promise<void> {
  if (events.length === 0) return;
  await client.query(
    `INSERT INTO events (session_id, seq, uuid, origin, body, at)
     SELECT $1, seq, uuid, origin, body, $2 FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[]) AS t (seq, uuid, origin, body)`,
    [
      sessionId,
      at,
      events.map(({ event }) => seqOf(event)),
      events.map(({ event }) => event.uuid as string),
      events.map(({ origin }) => origin),
      events.map(({ event }) => JSON.stringify(event)),
    ],
  );
}

/** Takes the session's row lock: every writer of a session queues here, in commit order. */
export async function lockSession(client: PoolClient, id: string): Promise<{ status: string; last_seq: number }> {
  const { rows } = await client.query<{ status: string; last_seq: string }>(
    'SELECT status, last_seq FROM sessions WHERE id = $1 FOR UPDATE',
    [id],
  );
  const row = rows[0];
  if (!row) throw notFound(id);
  return { status: row.status, last_seq: Number(row.last_seq) };
}

async function insertAudit(
  client: PoolClient,
  sessionId: string,
  actor: AuditActor,
  entries: readonly AuditEntry[],
  at: Date,
): Promise<void> {
  if (entries.length === 0) return;
  await client.query(
    `INSERT INTO audit (at, session_id, actor_sub, actor_name, action, request_id, seq)
     SELECT $1, $2, $3, $4, action, request_id, seq FROM unnest($5::text[], $6::text[], $7::bigint[]) AS t (action, request_id, seq)`,
    [
      at,
      sessionId,
      actor.sub,
      actor.name,
      entries.map((e) => e.action),
      entries.map((e) => e.requestId),
      entries.map((e) => (e.eventId === null ? null : cursorSequence(e.eventId))),
    ],
  );
}

function ownerOf(row: SessionRow): SessionOwner | null {
  return row.owner_sub === null ? null : { sub: row.owner_sub, name: row.owner_name, groups: row.owner_groups };
}

function resource(row: SessionRow): SessionResource {
  const owner = ownerOf(row);
  return {
    ...(owner ? { owner: publicOwner(owner) } : {}),
    type: 'session',
    id: row.id,
    title: row.title,
    session_status: row.status,
    environment_id: row.environment_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    session_context: row.session_context === null ? null : (JSON.parse(row.session_context) as SessionResource['session_context']),
  };
}

/** The database's place without its password, for the log. */
function describe(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
  } catch {
    return 'the configured database';
  }
}

function zodText(error: z.ZodError): string {
  return z.prettifyError(error).replace(/\s*\n\s*/g, '; ');
}

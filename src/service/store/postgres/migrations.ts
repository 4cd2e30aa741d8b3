// The PostgreSQL schema as numbered migrations, applied in order at start by whichever process
// gets there first: an advisory lock makes the others wait, then find nothing left to do. A
// migration is never edited once released; a change is a new number.
import type { Pool, PoolClient, QueryConfig } from 'pg';
import { APPEND_BATCH_FUNCTION_SQL, APPEND_FUNCTION_SQL } from './appendFunction';
import { holdConnection } from './database';
import { SESSION_CHANGES_MIGRATION_SQL } from './storedChanges';
import { NOTIFICATION_OUTBOX_SQL } from './notificationOutbox';
import { BROWSER_PRINCIPAL_RENEWAL_MIGRATION_SQL, BROWSER_STATE_MIGRATION_SQL } from './browserState';
import { APPEND_AT_WORK_FUNCTION_SQL } from './wakes';

export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'sessions, events, requests, decisions',
    sql: `
      CREATE TABLE sessions (
        id text PRIMARY KEY,
        title text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        environment_id text,
        session_context text,
        agent_label text,
        status text NOT NULL,
        -- The newest event's number. Events are numbered under this row's lock, per session, so
        -- an event is visible only once every lower number of its session is.
        last_seq bigint NOT NULL DEFAULT 0,
        -- The agent's resumable state (JSON text); 'null' once the agent was reported lost.
        checkpoint text,
        -- Workers: who runs the agent, until when, and the epoch that fences a worker out once
        -- its lease was taken over.
        worker_id text,
        lease_epoch bigint NOT NULL DEFAULT 0,
        lease_until timestamptz,
        -- The newest client event the agent was given (so a new worker does not give it twice).
        agent_cursor bigint NOT NULL DEFAULT 0
      );
      CREATE INDEX sessions_newest_first ON sessions (created_at DESC, id DESC);
      CREATE INDEX sessions_unleased ON sessions (lease_until) WHERE status <> 'archived';

      CREATE TABLE events (
        session_id text NOT NULL REFERENCES sessions (id),
        seq bigint NOT NULL,
        uuid text NOT NULL,
        -- client: sent through the API (delivered to the agent); agent or host: written by a worker.
        origin text NOT NULL CHECK (origin IN ('client', 'agent', 'host')),
        body text NOT NULL,
        at timestamptz NOT NULL,
        PRIMARY KEY (session_id, seq),
        UNIQUE (session_id, uuid)
      );

      -- The agent's can_use_tool requests: open until answered, or closed when the agent is lost.
      CREATE TABLE control_requests (
        session_id text NOT NULL REFERENCES sessions (id),
        request_id text NOT NULL,
        tool_use_id text NOT NULL,
        state text NOT NULL CHECK (state IN ('open', 'answered', 'closed')),
        PRIMARY KEY (session_id, request_id)
      );

      -- A decision counts once: whatever replica takes it, a second one cannot be stored.
      CREATE TABLE decisions (
        session_id text NOT NULL REFERENCES sessions (id),
        request_id text NOT NULL,
        seq bigint NOT NULL,
        PRIMARY KEY (session_id, request_id)
      );
    `,
  },
  {
    version: 2,
    name: 'session owners, audit',
    sql: `
      -- Who created the session (NULL: the shared token), with their groups as the token said then:
      -- review sharing compares those with the reader's.
      ALTER TABLE sessions
        ADD COLUMN owner_sub text,
        ADD COLUMN owner_name text,
        ADD COLUMN owner_groups text[] NOT NULL DEFAULT '{}';
      CREATE INDEX sessions_owner_newest_first ON sessions (owner_sub, created_at DESC, id DESC);
      CREATE INDEX sessions_owner_groups ON sessions USING gin (owner_groups);

      -- Who decided what: one row per reply, decision or archive, in the transaction that stores it.
      CREATE TABLE audit (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL,
        session_id text NOT NULL REFERENCES sessions (id),
        actor_sub text NOT NULL,
        actor_name text,
        action text NOT NULL CHECK (action IN ('reply', 'allow', 'deny', 'archive')),
        request_id text,
        seq bigint
      );
      CREATE INDEX audit_by_session ON audit (session_id, id);
    `,
  },
  {
    version: 3,
    name: "a client's append in one statement",
    sql: APPEND_FUNCTION_SQL,
  },
  {
    version: 4,
    name: 'several appends in one statement',
    sql: APPEND_BATCH_FUNCTION_SQL,
  },
  {
    version: 5,
    name: 'fair shares: archive times, per-owner counts, claim turns, retention',
    sql: `
      -- When it was archived (retention counts from it); when a worker first started it (a claim
      -- after that is a take-over, not a new turn).
      ALTER TABLE sessions
        ADD COLUMN archived_at timestamptz,
        ADD COLUMN first_claimed_at timestamptz;
      UPDATE sessions SET archived_at = updated_at WHERE status = 'archived';
      UPDATE sessions SET first_claimed_at = created_at WHERE worker_id IS NOT NULL OR lease_epoch > 0;
      CREATE INDEX sessions_archived_at ON sessions (archived_at) WHERE status = 'archived';
      CREATE INDEX sessions_held_by_owner ON sessions (owner_sub, status) WHERE status <> 'archived';

      -- Audit rows are kept as configured, after retention deleted their session.
      ALTER TABLE audit DROP CONSTRAINT audit_session_id_fkey;
      CREATE INDEX audit_at ON audit (at);

      -- When a worker last started a session of each owner ('' the shared token): the next claim
      -- goes to the owner served longest ago, round-robin.
      CREATE TABLE owner_turns (
        owner text PRIMARY KEY,
        last_started_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: 'changes since approval',
    sql: SESSION_CHANGES_MIGRATION_SQL,
  },
  {
    version: 7,
    name: 'approvals by a quorum',
    sql: `
      -- Each person's approval of one exact plan text (its SHA-256) answering one plan request.
      -- Counted under the session's row lock (planApprovals.ts); the key keeps a person to one.
      CREATE TABLE plan_approvals (
        id bigserial PRIMARY KEY,
        session_id text NOT NULL REFERENCES sessions (id),
        request_id text NOT NULL,
        plan_hash text NOT NULL,
        approver_sub text NOT NULL,
        approver_name text,
        at timestamptz NOT NULL,
        UNIQUE (session_id, request_id, plan_hash, approver_sub)
      );
      ALTER TABLE audit DROP CONSTRAINT audit_action_check;
      ALTER TABLE audit ADD CONSTRAINT audit_action_check CHECK (action IN ('reply', 'allow', 'deny', 'archive', 'approve'));
      ALTER TABLE audit ADD COLUMN plan_hash text;
    `,
  },
  {
    version: 8,
    name: 'notification outbox',
    sql: NOTIFICATION_OUTBOX_SQL,
  },
  {
    // What an approval short of the quorum carried after it (Approve with notes: the notes as a
    // user message), held until the quorum releases the plan and then appended after the allow.
    version: 9,
    name: 'approval notes held for the quorum',
    sql: `ALTER TABLE plan_approvals ADD COLUMN held_events jsonb NOT NULL DEFAULT '[]'::jsonb;`,
  },
  {
    // The review page's browser sessions, one-time links and sign-ins under way, shared by the
    // replicas (a browser signed in on one is signed in on all); digests of the secrets only.
    version: 10,
    name: 'review page browser sessions, links and sign-ins',
    sql: BROWSER_STATE_MIGRATION_SQL,
  },
  {
    // The group commit checks, under each session's row lock, that an append's session is still
    // at work; one that went idle is woken under the creation lock instead (wakes.ts).
    version: 11,
    name: 'appends checked to be to a session at work',
    sql: APPEND_AT_WORK_FUNCTION_SQL,
  },
  {
    // A signed-in browser's groups are read again from the issuer when its access token would expire.
    version: 12,
    name: 'browser sessions renew their principal',
    sql: BROWSER_PRINCIPAL_RENEWAL_MIGRATION_SQL,
  },
];

/** Any number (bigint) that is ours alone among advisory locks on this database. */
const MIGRATION_LOCK = 7_401_551_123;

/** Applies the migrations this database lacks; returns the versions applied now. */
export async function migrate(pool: Pool): Promise<number[]> {
  const { client, release } = await holdConnection(pool);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      return await applyMissing(client);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    release();
  }
}

/**
 * Rejects unless the database answers within `timeoutMs` and holds every migration this build
 * knows (a newer schema is fine for a process already running: migrations only add).
 */
export async function checkSchema(pool: Pool, timeoutMs: number): Promise<void> {
  // node-postgres reads query_timeout per query (its types list it only for a whole client).
  const probe: QueryConfig & { query_timeout: number } = {
    text: 'SELECT max(version) AS version FROM schema_migrations',
    query_timeout: timeoutMs,
  };
  const { rows } = await pool.query<{ version: number | null }>(probe);
  const have = rows[0]?.version ?? 0;
  const known = Math.max(...MIGRATIONS.map((m) => m.version));
  if (have < known)
    throw new Error(`the database's schema is version ${have}; this build needs ${known} (an API server applies it at start)`);
}

async function applyMissing(client: PoolClient): Promise<number[]> {
  await client.query(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
  const have = new Set(rows.map((r) => r.version));
  const newest = Math.max(0, ...have);
  const known = Math.max(...MIGRATIONS.map((m) => m.version));
  if (newest > known) {
    throw new Error(
      `the database's schema is version ${newest}, newer than this ultraplan-server knows (${known}); run the newer server, or a fresh database`,
    );
  }
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
    if (have.has(migration.version)) continue;
    await client.query('BEGIN');
    try {
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
    applied.push(migration.version);
  }
  return applied;
}

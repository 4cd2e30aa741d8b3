// The pool every PostgreSQL-backed process uses, and what a dropped database means to a caller:
// a 503 to retry, never a 500 and never a half-stored batch (every write is one transaction).
import { Pool, type PoolClient } from 'pg';
import { SessionsError, errorMessage } from '../../../core/errors';

/** The channel a commit is announced on; the payload is the session id. */
export const SESSION_CHANNEL = 'ultraplan_session';

export function openPool(connectionString: string, log: (line: string) => void, max = 10): Pool {
  const pool = new Pool({ connectionString, max, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000 });
  // An idle client whose connection drops (a database restart) reports here; without a listener
  // the process would crash. The next query takes a fresh connection.
  pool.on('error', (err) => log(`postgres: an idle connection failed: ${err.message}`));
  return pool;
}

// SQLSTATE classes of a database that went away or is starting: 08 connection exception,
// 57 operator intervention (shutdown, crash recovery), 53 insufficient resources.
const UNAVAILABLE_CLASSES = ['08', '57', '53'];
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN']);

export function isUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && (UNAVAILABLE_NODE_CODES.has(code) || UNAVAILABLE_CLASSES.includes(code.slice(0, 2)))) return true;
  const message = err instanceof Error ? err.message : '';
  // "timeout exceeded when trying to connect": every pooled connection busy for connectionTimeoutMillis.
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed/i.test(
    message,
  );
}

/**
 * A pooled connection held for several statements. pg emits 'error' on a client whose connection
 * drops (a database restart) even while the statement in flight fails with it, and an 'error'
 * with no listener ends the process: the pool listens only to idle clients, so we listen while
 * we hold one, and a client that failed is destroyed on release instead of pooled.
 */
export async function holdConnection(pool: Pool): Promise<{ client: PoolClient; release(broken?: boolean): void }> {
  const client = await pool.connect();
  let dropped = false;
  const onError = () => (dropped = true);
  client.on('error', onError);
  return {
    client,
    release(broken = false) {
      client.off('error', onError);
      client.release(broken || dropped);
    },
  };
}

/** Runs `work` in a transaction on one pooled connection; an unreachable database is a 503. */
export async function transaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  let held: Awaited<ReturnType<typeof holdConnection>>;
  try {
    held = await holdConnection(pool);
  } catch (err) {
    throw unavailable(err);
  }
  const { client } = held;
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    if (isUnavailable(err)) {
      broken = true;
      throw unavailable(err);
    }
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw err;
  } finally {
    held.release(broken);
  }
}

/**
 * A single statement outside a transaction; an unreachable database is a 503. `name`: prepare it
 * once per connection (for a statement run on every request), rather than parse and plan it each time.
 */
export async function query<R extends Record<string, unknown>>(
  pool: Pool,
  text: string,
  values: unknown[] = [],
  name?: string,
): Promise<R[]> {
  try {
    return (await pool.query<R>(name === undefined ? { text, values } : { name, text, values })).rows;
  } catch (err) {
    throw isUnavailable(err) ? unavailable(err) : err;
  }
}

export function unavailable(err: unknown): SessionsError {
  return new SessionsError('transient', 'the session database is unavailable; retry shortly', 503, 1_000, { cause: err });
}

interface Announcements {
  ids: Set<string>;
  sent: Array<() => void>;
  sending: Promise<void> | null;
}

const announcements = new WeakMap<Pool, Announcements>();

/**
 * Tells listeners that session `id` changed; resolves once told (or once telling failed, which is
 * logged). Sent after the commit, never inside it: a NOTIFY inside the writing transaction would
 * hold the database's one notification-queue lock through that commit's flush, so every writer
 * that announces would commit one after another.
 *
 * Grouped: while one announcement is on its way, the sessions announced meanwhile wait and go
 * together in the next statement (each pg_notify of it one notification; PostgreSQL folds repeats
 * within it). So under load a process spends one round trip on many commits' announcements.
 */
export function announce(pool: Pool, id: string, log: (line: string) => void): Promise<void> {
  let group = announcements.get(pool);
  if (!group) announcements.set(pool, (group = { ids: new Set(), sent: [], sending: null }));
  group.ids.add(id);
  const told = new Promise<void>((resolve) => group.sent.push(resolve));
  group.sending ??= sendAnnouncements(pool, group, log);
  return told;
}

/** Resolves when every announcement asked for so far has gone (before a pool is ended). */
export async function announcementsSent(pool: Pool): Promise<void> {
  await announcements.get(pool)?.sending;
}

async function sendAnnouncements(pool: Pool, group: Announcements, log: (line: string) => void): Promise<void> {
  while (group.ids.size > 0) {
    const ids = [...group.ids];
    const sent = group.sent.splice(0);
    group.ids.clear();
    // A lost announcement only delays readers until their next sweep (notifications.ts).
    await pool.query('SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id', [SESSION_CHANNEL, ids]).catch((err: unknown) => {
      log(`postgres: announcing a change of ${ids.join(', ')} failed (${errorMessage(err)}); readers catch up by polling`);
    });
    for (const resolve of sent) resolve();
  }
  group.sending = null;
}

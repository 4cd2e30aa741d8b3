// Notifications on PostgreSQL go through an outbox, so each event is posted by exactly one
// replica whoever wrote it (a worker writes plans, questions and results; a replica writes
// decisions and approvals). A trigger on `events` adds a row for each event a team may hear of,
// in the transaction that stores the event; replicas with --notify-webhook claim rows with
// DELETE … FOR UPDATE SKIP LOCKED, so two replicas never take the same row, and hand what they
// took to their notifier's queue (never holding up a write). Rows written while every replica
// is down wait in the table for the next one. The claim deletes the row: a replica that dies
// between the claim and the post loses that notification (at most once, never twice).
import type { Pool } from 'pg';
import { EXIT_PLAN_MODE_TOOL } from '../../../core/protocol';
import { noticeOf } from '../../notifications/sessionNotices';
import type { NotificationEvent } from '../../notifications/notificationEvents';
import { ruleFor, type QuorumPolicy } from '../../identity/quorum';
import { query } from './database';

export const NOTIFICATION_OUTBOX_SQL = `
  CREATE TABLE notification_outbox (
    id bigserial PRIMARY KEY,
    session_id text NOT NULL,
    seq bigint NOT NULL
  );
  -- One row: whether any replica posts notifications (set by a replica started with webhooks),
  -- so a database without them keeps no outbox.
  CREATE TABLE notification_settings (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    enabled boolean NOT NULL
  );
  INSERT INTO notification_settings (enabled) VALUES (false);
  -- A quote inside a JSON string is escaped, so "type":"result" matches only the event's own members.
  CREATE FUNCTION ultraplan_outbox_event() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF (SELECT enabled FROM notification_settings) AND (
      NEW.body LIKE '%"type":"control_request"%' OR NEW.body LIKE '%"type":"control_response"%'
      OR NEW.body LIKE '%"type":"result"%' OR NEW.body LIKE '%"subtype":"plan_approval"%'
    ) THEN
      INSERT INTO notification_outbox (session_id, seq) VALUES (NEW.session_id, NEW.seq);
    END IF;
    RETURN NULL;
  END
  $fn$;
  CREATE TRIGGER events_outbox AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION ultraplan_outbox_event();
`;

const CLAIM_BATCH = 50;
const POLL_MS = 500;

export interface OutboxOptions {
  pool: Pool;
  quorum: QuorumPolicy;
  /** The link a notification carries for a session id. */
  linkFor: (sessionId: string) => string;
  deliver: (event: NotificationEvent) => void;
  log: (line: string) => void;
  pollMs?: number;
}

interface EventRow extends Record<string, unknown> {
  body: string;
  title: string;
  owner_sub: string | null;
  owner_name: string | null;
  owner_groups: string[];
  at: Date;
  executing: boolean;
  answers_plan: boolean;
  decided_by: string | null;
}

/** Claims outbox rows on a timer and delivers their notifications, until closed. */
export class NotificationOutbox {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: OutboxOptions) {}

  async start(): Promise<void> {
    await query(this.options.pool, 'UPDATE notification_settings SET enabled = true');
    this.schedule();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.drain()
        .catch((err: unknown) => this.options.log(`notifications: the outbox could not be read (${String(err)}); retrying`))
        .finally(() => {
          this.running = undefined;
          this.schedule();
        });
    }, this.options.pollMs ?? POLL_MS);
    this.timer.unref();
  }

  /** Claims and delivers until the outbox is empty. */
  async drain(): Promise<void> {
    for (;;) {
      const claimed = await query<{ id: string; session_id: string; seq: string }>(
        this.options.pool,
        `DELETE FROM notification_outbox WHERE id IN (
           SELECT id FROM notification_outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING id, session_id, seq`,
        [CLAIM_BATCH],
      );
      claimed.sort((a, b) => Number(a.id) - Number(b.id));
      for (const row of claimed) {
        const notice = await this.noticeFor(row.session_id, Number(row.seq));
        if (notice) this.options.deliver(notice);
      }
      if (claimed.length < CLAIM_BATCH || this.closed) return;
    }
  }

  private async noticeFor(sessionId: string, seq: number): Promise<NotificationEvent | null> {
    const [row] = await query<EventRow>(
      this.options.pool,
      `SELECT e.body, e.at, s.title, s.owner_sub, s.owner_name, s.owner_groups,
         EXISTS (SELECT 1 FROM events p WHERE p.session_id = e.session_id AND p.seq < e.seq AND p.origin = 'client'
                 AND p.body LIKE '%"behavior":"allow"%') AS executing,
         (e.origin = 'client' AND EXISTS (
            SELECT 1 FROM events r WHERE r.session_id = e.session_id AND r.origin <> 'client' AND r.body LIKE '%"control_request"%'
              AND r.body::jsonb->>'request_id' = e.body::jsonb->'response'->>'request_id'
              AND r.body::jsonb->'request'->>'tool_name' = $3)) AS answers_plan,
         (SELECT coalesce(a.actor_name, a.actor_sub) FROM audit a
           WHERE a.session_id = e.session_id AND a.seq = e.seq AND a.action IN ('allow', 'deny') LIMIT 1) AS decided_by
       FROM events e JOIN sessions s ON s.id = e.session_id
       WHERE e.session_id = $1 AND e.seq = $2`,
      [sessionId, seq, EXIT_PLAN_MODE_TOOL],
    );
    if (!row) return null;
    const owner = row.owner_sub === null ? null : { sub: row.owner_sub, name: row.owner_name, groups: row.owner_groups };
    const rule = ruleFor(this.options.quorum, owner);
    const needed =
      rule.required > 1 || rule.group !== null
        ? [`${rule.required} approval${rule.required === 1 ? '' : 's'}${rule.group ? ` from ${rule.group}` : ''}`]
        : [];
    return noticeOf(JSON.parse(row.body) as unknown, {
      session: { id: sessionId, title: row.title },
      link: this.options.linkFor(sessionId),
      at: row.at.toISOString(),
      needed,
      executing: row.executing,
      answersPlan: row.answers_plan,
      decidedBy: row.decided_by,
    });
  }
}

// Audit: who decided what, on which session. Every event a person sends (a reply, an answer to a
// plan or a permission request) and every archive becomes one entry naming the user: a JSON line
// in the server's log (both stores), and a row of PostgreSQL's `audit` table in the transaction
// that stores the event.
import type { AuditActor } from './sessionOwner';
import type { StoredEvent } from '../store/sessionStore';

export type AuditAction = 'reply' | 'allow' | 'deny' | 'archive' | 'approve';

export interface AuditEntry {
  action: AuditAction;
  /** The control_request a decision answers. */
  requestId: string | null;
  /** The stored event's id (`e_…`); null for an archive. */
  eventId: string | null;
}

/** What a stored client event did, for the audit; null for an event that decides nothing. */
export function auditEntryOf(event: StoredEvent): AuditEntry | null {
  if (event.type === 'user') return { action: 'reply', requestId: null, eventId: event.id };
  if (event.type !== 'control_response') return null;
  const response = (event as { response?: { request_id?: unknown; response?: { behavior?: unknown } } }).response;
  const behavior = response?.response?.behavior;
  if (behavior !== 'allow' && behavior !== 'deny') return null;
  return { action: behavior, requestId: typeof response?.request_id === 'string' ? response.request_id : null, eventId: event.id };
}

/** The log line: one JSON object, so a log pipeline can index it by field. */
export function auditLine(sessionId: string, actor: AuditActor, entry: AuditEntry, at = new Date()): string {
  return JSON.stringify({
    audit: entry.action,
    at: at.toISOString(),
    session_id: sessionId,
    user: actor.sub,
    user_name: actor.name,
    request_id: entry.requestId,
    event_id: entry.eventId,
  });
}

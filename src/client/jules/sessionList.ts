// A Jules session as the extension lists it (our SessionResource and status), and the key's
// sessions read page by page through sessions.list, for "Attach to Session…": newest first and
// bounded. The reference says nothing of the order, so it is ours (createTime). Each session is
// parsed on its own: one the reference does not describe is skipped and counted, the rest listed.
// A page that is not a ListSessionsResponse ends the listing with an error that says which page
// and that nothing was changed: listing is a read, so the next try reads everything again. The
// inbox's Jules group (julesInbox.ts) reads the same list with each session's state whole.
import { SessionsError, errorMessage } from '../../core/errors';
import type { SessionResource, SessionStatus } from '../../core/protocol';
import type { JulesApi } from './api';
import { JulesSessionSchema, type JulesSession } from './schemas';

/** At most this many sessions are offered (the newest); an account with more is read no further. */
export const MAX_LISTED_JULES_SESSIONS = 300;

/** Our status for a Jules state: waiting on the person, working, or done. */
export function statusOf(state: string | undefined): SessionStatus {
  switch (state) {
    case 'AWAITING_PLAN_APPROVAL':
      return 'requires_action';
    case 'AWAITING_USER_FEEDBACK':
    case 'PAUSED':
    case 'COMPLETED':
    case 'FAILED':
      return 'idle';
    default:
      return 'running';
  }
}

export function resourceOf(session: JulesSession, title?: string): SessionResource {
  const now = new Date().toISOString();
  return {
    type: 'session',
    id: session.id,
    title: session.title ?? title ?? 'Jules session',
    session_status: statusOf(session.state),
    created_at: session.createTime ?? now,
    updated_at: session.updateTime ?? session.createTime ?? now,
  };
}

export interface ListedJulesSessions {
  sessions: SessionResource[];
  /** Sessions on the pages that the reference does not describe (skipped). */
  skipped: number;
}

/** The key's sessions as Jules describes them (their state whole), newest first, at most `max`. */
export interface ReadJulesSessions {
  sessions: JulesSession[];
  skipped: number;
}

/** When a session was made, for the newest-first order: one without a createTime is taken as made now. */
const madeAt = (session: JulesSession): number => (session.createTime ? Date.parse(session.createTime) : Date.now());

/** The key's sessions, newest first, at most `max`. Throws a SessionsError naming the page that failed. */
export async function readJulesSessions(
  api: JulesApi,
  signal?: AbortSignal,
  max: number = MAX_LISTED_JULES_SESSIONS,
): Promise<ReadJulesSessions> {
  const byId = new Map<string, JulesSession>();
  let skipped = 0;
  let token: string | undefined;
  for (let page = 1; byId.size < max; page++) {
    let answer;
    try {
      answer = await api.listSessions(token, signal);
    } catch (err) {
      if (signal?.aborted || !(err instanceof SessionsError)) throw err;
      const read = page === 1 ? '' : ` after ${byId.size} sessions on the pages before it`;
      throw new SessionsError(
        err.kind,
        `Listing the Jules sessions failed at page ${page}${read}: ${errorMessage(err)} Nothing was changed; listing again reads every page again.`,
        err.status,
        err.retryAfterMs,
        { cause: err },
      );
    }
    for (const raw of answer.sessions ?? []) {
      const parsed = JulesSessionSchema.safeParse(raw);
      if (!parsed.success) skipped++;
      // A session that moved between pages while they were read is listed once.
      else byId.set(parsed.data.id, parsed.data);
    }
    if (!answer.nextPageToken || answer.nextPageToken === token) break;
    token = answer.nextPageToken;
  }
  const sessions = [...byId.values()].sort((a, b) => madeAt(b) - madeAt(a)).slice(0, max);
  return { sessions, skipped };
}

/** The key's sessions as our SessionResources, newest first, at most `max` (Attach's picker). */
export async function listJulesSessions(
  api: JulesApi,
  signal?: AbortSignal,
  max: number = MAX_LISTED_JULES_SESSIONS,
): Promise<ListedJulesSessions> {
  const { sessions, skipped } = await readJulesSessions(api, signal, max);
  return { sessions: sessions.map((session) => resourceOf(session)), skipped };
}

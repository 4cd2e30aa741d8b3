// Sessions that another window on the same folder started, which this window follows too without
// being asked (docs/service.md, "Several windows"): the extension lists its service's sessions now
// and then and picks out the ones it should follow. What it picks is decided here, with no I/O.
import type { SessionResource } from '../../core/protocol';
import { workspaceOf } from '../../core/agentLaunch';
import { purposeOf } from '../../core/sessionPurpose';

export interface PickUpContext {
  /** This window's workspace folder. */
  folder: string;
  /** When this window started looking (ms since the epoch): sessions created since are new to it. */
  since: number;
  /** Whether this window already follows the session (or followed it and let it go). */
  known(sessionId: string): boolean;
}

/**
 * The listed sessions of this folder that this window does not know: every live one (its agent
 * works, or a plan waits), and any other one created since the window started looking (a question
 * that waits for a reply). A finished session from before is history, not news. Only planning
 * sessions: a review's finder and verifier runs belong to the review that started them.
 */
export function sessionsToPickUp(listed: readonly SessionResource[], context: PickUpContext): SessionResource[] {
  return listed.filter((session) => {
    if (session.session_status === 'archived' || context.known(session.id) || purposeOf(session) !== 'planning') return false;
    if (workspaceOf(session.session_context) !== context.folder) return false;
    const live = session.session_status === 'running' || session.session_status === 'requires_action';
    return live || Date.parse(session.created_at) >= context.since;
  });
}

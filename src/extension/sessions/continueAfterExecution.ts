// A message to the session that executed a plan (Continue on a step verification found missing,
// Fix on a verification's thread): while the execution is followed it goes as a reply; once the
// execution ended it goes straight to the backend, and the turn it starts is followed from the
// cursor read last to its result (FollowedSession.followContinued), so the surfaces show the
// session executing again and its end starts the verification again. A session restored finished
// after a reload has no live backend in this window: it is attached again to send the message and
// followed from the start of its log through the turn the message opened
// (FollowedSessions.sendReattached). No editor API: the command says the outcome.
import { errorMessage } from '../../core/errors';
import { userMessageEvent } from '../../core/protocol';
import type { SessionBackend } from '../../core/sessionBackend';
import type { FollowedSession } from './followedSession';

/** What a message to a session restored finished needs of FollowedSessions (no live backend here). */
export interface Reattaching {
  /** Whether the session is shown without a live backend (restored finished). */
  isDetached(session: FollowedSession): boolean;
  /** Attaches the session again; `send` runs through its live backend before it is followed. */
  sendReattached(key: string, send: (backend: SessionBackend) => Promise<unknown>): Promise<unknown>;
}

export type ContinueOutcome =
  /** followed: the new turn is followed here (false: this window did not read the execution, e.g. restored finished). */
  { sent: true; followed: boolean } | { sent: false; message: string };

export async function continueAfterExecution(session: FollowedSession, message: string, sessions: Reattaching): Promise<ContinueOutcome> {
  if (session.readOnly !== undefined)
    return { sent: false, message: `"${session.title}" is read-only here (${session.readOnly}); nothing was sent.` };
  if (!session.finished) return session.decisions.reply(message).then((r) => (r.sent ? { sent: true, followed: true } : r));
  const send = (backend: SessionBackend) => backend.sendEvents(session.sessionId, [userMessageEvent(message)]);
  // Counted before it goes out: the first result after it ends the turn it starts.
  const before = session.resultsRead;
  try {
    if (sessions.isDetached(session)) {
      await sessions.sendReattached(session.key, send);
      return { sent: true, followed: true };
    }
    await send(session.backend);
  } catch (err) {
    return { sent: false, message: `sending the message to "${session.title}" failed: ${errorMessage(err)}` };
  }
  return { sent: true, followed: session.followContinued(before) };
}

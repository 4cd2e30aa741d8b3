// What the poller needs from a session, whatever carries it: the HTTP client, the event stream,
// or a session host in the same process (the review command line's). Implementations throw
// SessionsError for classified failures.
import type { SessionStatus } from './protocol';

export interface EventRead {
  /** Raw items as read (already without skipped types); the scanner validates each one. */
  events: unknown[];
  /** The cursor to resume after these events; null when nothing has been read yet. */
  lastId: string | null;
}

export interface SessionTransport {
  /** Events after `afterId` (null: from the start), as many pages as the transport allows. */
  readEvents(sessionId: string, afterId: string | null, signal?: AbortSignal): Promise<EventRead>;
  /** The session's current status. */
  getStatus(sessionId: string, signal?: AbortSignal): Promise<SessionStatus | string>;
  /**
   * Optional: resolves when new events may be available, or after `timeoutMs`. A streaming
   * transport resolves as soon as an event or status frame arrives; without it the poller sleeps.
   */
  waitForActivity?(sessionId: string, timeoutMs: number, signal?: AbortSignal): Promise<void>;
}

// One face for every backend (the local session service, a self-hosted server, Claude Code on the
// web), so the extension drives them all with the same code; each is a client over HTTP
// (client/httpBackend.ts). The review command line drives a session host in its own process
// through the same face (service/inProcessBackend.ts).
import type { AnyEvent, CreateSessionRequest, SessionResource } from './protocol';
import type { BackendKind, BackendLifecycle } from './backendKinds';
import type { SessionTransport } from './transport';
import type { ApprovalState } from './planApprovals';

/** What a server said of events it took. */
export interface EventsSent {
  /** An approval under a quorum: the state after it (not `released`: counted, nothing went to the agent). */
  approval?: ApprovalState;
}

export interface SessionBackend {
  readonly kind: BackendKind;
  /** For people: "Embedded · Claude (ACP)", "Server http://127.0.0.1:8787", … */
  readonly label: string;
  /** The poller's view of a session (events after a cursor, status, optional stream wake-ups). */
  readonly transport: SessionTransport;
  createSession(request: CreateSessionRequest, signal?: AbortSignal): Promise<SessionResource>;
  getSession(sessionId: string, signal?: AbortSignal): Promise<SessionResource>;
  /** Sends events (user messages, control_responses) to the session. */
  sendEvents(sessionId: string, events: AnyEvent[], signal?: AbortSignal): Promise<EventsSent | void>;
  /** Archives the session; already archived counts as done. */
  archive(sessionId: string, signal?: AbortSignal): Promise<void>;
  /** When to archive; absent: the extension's defaults. */
  readonly lifecycle?: BackendLifecycle;
  /**
   * The sessions this backend knows, newest first and bounded (for "Attach to Session…"); absent
   * where the backend has no list.
   */
  listSessions?(signal?: AbortSignal): Promise<SessionResource[]>;
  /** A link a person can open, where the backend has one (claude.ai/code/<id>). */
  sessionLink?(sessionId: string): string | undefined;
  dispose(): Promise<void>;
}

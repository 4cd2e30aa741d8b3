// One face for every backend (embedded SessionHost, self-hosted server, Claude Code on the web),
// so the extension drives them all with the same code. HTTP backends implement it with
// SessionsClient; the embedded one with an in-process adapter over SessionHost.
import type { AnyEvent, CreateSessionRequest, SessionResource } from '../core/protocol';
import type { SessionTransport } from '../core/transport';

export type BackendKind = 'embedded' | 'server' | 'claude-web';

/**
 * When the extension archives a backend's sessions (docs/protocol.md section 9). A backend without one
 * leaves it to the extension's defaults.
 */
export interface BackendLifecycle {
  /** Approve hands the plan to the remote, which executes it: archiving would stop that. */
  readonly archiveOnApprove: boolean;
  readonly archiveOnTeleport: boolean;
  readonly archiveOnStop: boolean;
  readonly archiveOnFailure: boolean;
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
  sendEvents(sessionId: string, events: AnyEvent[], signal?: AbortSignal): Promise<void>;
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

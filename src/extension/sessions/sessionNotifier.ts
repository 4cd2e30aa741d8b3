// The ports a followed session speaks through: to the person (notifications with buttons, the
// permission prompt, whether its review is on screen) and, for what only one backend can say, that
// backend's voice. The session itself imports no editor API, so it runs in unit tests with
// recording stand-ins, and Claude Code on the web's wording lives in claudeWeb/, not here.
import type { DecisionBinding } from '../../core/panelMessages';
import type { ToolPermissionRequest } from '../../core/permissionRequests';
import type { SessionBackend } from '../../core/sessionBackend';

export interface NotifierAction {
  label: string;
  run(): unknown;
}

/** Where a session logs; a vscode.LogOutputChannel fits. */
export interface SessionLog {
  trace(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  show(): void;
}

export interface PermissionAsker {
  readonly key: string;
  readonly askerLabel: string;
  isPermissionOpen(requestId: string): boolean;
  answerPermission(binding: DecisionBinding, requestId: string, answer: 'allow' | 'deny'): Promise<unknown>;
}

/** Everything a session says to the person goes through here. */
export interface SessionNotifier {
  /** A notification ("Ultraplan: " is added) with buttons; a button runs its action. */
  say(level: 'info' | 'warning' | 'error', text: string, ...actions: NotifierAction[]): void;
  /** Opens the review of a session. */
  showReview(key: string): void;
  /** Copies a link to the session's review page on its server (absent: no such page here). */
  copyReviewLink?(key: string): void;
  openExternal(url: string): void;
  /** Whether the review panel is on screen showing this session (then it is the news itself). */
  isReviewShowing(key: string): boolean;
  /** Asks the person about a tool permission request; resolves when answered or dismissed. */
  askPermission(asker: PermissionAsker, request: ToolPermissionRequest, binding: DecisionBinding): Promise<void>;
}

/** What a session learns about a failure from the backend it runs on, in that backend's words. */
export interface FailureReading {
  /** The failure's own explanation (cause, fix); undefined: the error's message is all there is. */
  message: string | undefined;
  /** Our own login failed: the remote session is fine (not archived), and Retry follows it again. */
  ownLogin: boolean;
  /** A decision neither channel took: not sent, and the plan stays pending (the browser can decide it). */
  decisionNotDelivered: boolean;
}

export interface BackendVoice {
  read(err: unknown): FailureReading;
  /** Shows the failure with its own buttons; false when this voice has nothing particular to say. */
  show(err: unknown, options: { prefix?: string; retry?: () => unknown }): boolean;
  /** What the approved session reports at its end (pull request, branch), if anything. */
  executionReport(
    backend: SessionBackend,
    sessionId: string,
    texts: ReadonlyArray<string | null | undefined>,
  ): Promise<{ text: string; pullRequest?: string } | undefined>;
}

/** A backend with nothing to add: errors speak for themselves, executions report nothing extra. */
export const plainVoice: BackendVoice = {
  read: () => ({ message: undefined, ownLogin: false, decisionNotDelivered: false }),
  show: () => false,
  executionReport: async () => undefined,
};

// The review page's host: what ReviewPanel and FollowedSession are to the panel in VS Code, for a
// page in any browser. It follows one session with the core's poller and session model (the same
// reduce, snapshot and decision gate as the editor), sends the panel's decisions, replies and
// permission answers through the page's API with the editor's own acts (core/sessionActs.ts), and
// answers each request exactly once.
import { errorMessage } from '../../core/errors';
import type { DecisionBinding, PanelAnswer, WebviewToHostMessage } from '../../core/panelMessages';
import type { ToolPermissionRequest } from '../../core/permissionRequests';
import { followUntilResult, pollForApprovedPlan, type PollRead, type PollRetry } from '../../core/poller';
import type { PlanStepsReader } from '../../core/executionProgress';
import { PermissionReplies, PlanDecisions, silent, type DecisionOutcome, type DecisionPorts } from '../../core/sessionActs';
import { SessionModel, type SessionChange, type SessionInput } from '../../core/sessionModel';
import type { SessionSnapshot } from '../../core/sessionSnapshot';
import { PageApiError, type PageApi } from './pageApi';

const POLL_INTERVAL_MS = 2000;
const FOLLOW_TIMEOUT_MS = 12 * 60 * 60 * 1000;
const TELEPORT_HERE = 'Teleport brings the plan into a VS Code workspace: open this session in VS Code to teleport it.';

export interface PageSessionOptions {
  api: PageApi;
  title: string;
  serverLabel: string;
  onSnapshot: (snapshot: SessionSnapshot) => void;
  /** The open permission requests changed (the page lists them). */
  onPermissions: (open: readonly ToolPermissionRequest[]) => void;
  planSteps?: () => PlanStepsReader | undefined;
  now?: () => number;
}

export class PageSession {
  readonly model: SessionModel;
  readonly #o: PageSessionOptions;
  readonly #now: () => number;
  readonly #abort = new AbortController();
  readonly #decisions: PlanDecisions;
  readonly #permissions: PermissionReplies;

  constructor(options: PageSessionOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    const sessionId = options.api.sessionId;
    this.model = new SessionModel({
      identity: {
        key: `page:${sessionId}`,
        sessionId,
        title: options.title,
        createdAt: this.#now(),
        backendKind: 'server',
        backendLabel: options.serverLabel,
        demo: false,
      },
      initialPhase: 'planning',
      cursor: null,
      at: this.#now(),
      onSnapshot: options.onSnapshot,
      ...(options.planSteps ? { planSteps: options.planSteps } : {}),
    });
    // The page speaks through its answers; a server's refusal carries its reason on a PageApiError.
    const ports: DecisionPorts = {
      model: this.model,
      reduce: (input) => this.reduce(input),
      backend: { kind: 'server', sendEvents: (_sessionId, events) => options.api.sendEvents(events) },
      reasonOf: (err) => (err instanceof PageApiError ? err.reason : undefined),
      ...silent,
      now: this.#now,
    };
    this.#decisions = new PlanDecisions(ports);
    this.#permissions = new PermissionReplies(ports);
  }

  get #sessionId(): string {
    return this.#o.api.sessionId;
  }

  reduce(input: SessionInput): SessionChange {
    const change = this.model.reduce(input);
    if (change.opened.length > 0 || change.closed.length > 0) this.#o.onPermissions(change.state.permissions);
    return change;
  }

  /** Follows the session until its plan is carried out, fails or is ended elsewhere. */
  async follow(): Promise<void> {
    this.reduce({ type: 'restarted', at: this.#now() });
    const follow = {
      sessionId: this.#sessionId,
      transport: this.#o.api,
      pollIntervalMs: POLL_INTERVAL_MS,
      timeoutMs: FOLLOW_TIMEOUT_MS,
      signal: this.#abort.signal,
      onPoll: (poll: PollRead) => void this.reduce({ type: 'poll', poll, at: this.#now() }),
      onRetry: (retry: PollRetry) => void this.reduce({ type: 'connectionLost', retry, at: this.#now() }),
    };
    try {
      const approved = await pollForApprovedPlan({ ...follow, scanner: this.model.scanner });
      if (approved.executionTarget === 'local') {
        const outcome = { text: 'The plan was teleported from another review of this session.' };
        this.reduce({ type: 'ended', by: 'teleported_elsewhere', outcome, at: this.#now() });
        return;
      }
      const result = await followUntilResult({ ...follow, scanner: approved.scanner, initialCursor: approved.cursor });
      const summary = result.result?.trim() || approved.scanner.lastAssistantText?.trim();
      const text = summary || (result.isError ? `The execution ended with ${result.subtype}.` : 'The approved plan was executed.');
      this.reduce({ type: 'ended', by: result.isError ? 'execution_failed' : 'completed', outcome: { text }, at: this.#now() });
    } catch (err) {
      if (this.#abort.signal.aborted) return;
      this.reduce({ type: 'ended', by: 'failed', notice: { level: 'error', text: errorMessage(err) }, at: this.#now() });
    }
  }

  stop(): void {
    this.#abort.abort();
  }

  /** A message of the panel's; the answer for a request, undefined for the rest. */
  async handle(message: WebviewToHostMessage): Promise<PanelAnswer | undefined> {
    switch (message.type) {
      case 'approve':
        return answer(
          message.notes !== undefined
            ? await this.#decisions.approveWithNotes(message.binding, message.notes)
            : await this.#decisions.approve(message.binding),
        );
      case 'reject':
        return answer(await this.#decisions.reject(message.binding, message.feedback, message.comments));
      case 'teleport':
        return { result: 'refused', reason: TELEPORT_HERE };
      case 'reply':
        return answer(await this.#decisions.reply(message.text));
      case 'continue':
        return answer(await this.#decisions.continuePlanning(message.text));
      case 'saveDraft': {
        const { type: _type, sessionKey: _key, ...draft } = message;
        this.reduce({ type: 'draftSaved', draft, at: this.#now() });
        return undefined;
      }
      case 'saveReplyDraft': {
        const { type: _type, sessionKey: _key, ...draft } = message;
        this.reduce({ type: 'replyDraftSaved', draft, at: this.#now() });
        return undefined;
      }
      default:
        return undefined;
    }
  }

  /** Approves the pending plan as edited on the page. */
  async approveEdited(binding: DecisionBinding, editedPlan: string): Promise<PanelAnswer> {
    return answer(await this.#decisions.approveEdited(binding, editedPlan));
  }

  setEditing(toolUseId: string | undefined): void {
    this.reduce({ type: 'editing', toolUseId, at: this.#now() });
  }

  /** Refused now (nothing claimed), or undefined: a decision on `binding` would go out. */
  refusal(binding: DecisionBinding): string | undefined {
    return this.#decisions.refusal(binding);
  }

  /** A permission binding: the request and the input shown with it (an answer to a changed input is refused). */
  permissionBinding(request: ToolPermissionRequest): DecisionBinding {
    return this.#permissions.binding(request);
  }

  /** Answers a permission request at most once; the refusal's words, or undefined when sent. */
  async answerPermission(binding: DecisionBinding, requestId: string, answerWith: 'allow' | 'deny'): Promise<string | undefined> {
    const outcome = await this.#permissions.answerPermission(binding, requestId, answerWith);
    return outcome.sent ? undefined : outcome.message;
  }
}

function answer(outcome: DecisionOutcome): PanelAnswer {
  return outcome.sent ? { result: 'sent' } : { result: 'refused', reason: outcome.message };
}

// A followed session's tool permission requests, each one a person's decision and never answered
// automatically: asked once per request (the prompt is the notification), asked again from the
// status bar, and answered at most once through the core's PermissionReplies (its own gate,
// src/core/sessionActs.ts). The session model holds which requests are open; each answer is a
// reduce input of the followed session, so the change reaches every surface like any other.
import { PermissionReplies, type ActsPorts } from '../../core/sessionActs';
import type { ToolPermissionRequest } from '../../core/permissionRequests';
import type { SessionBackend } from '../../core/sessionBackend';
import type { BackendVoice, PermissionAsker, SessionLog, SessionNotifier } from './sessionNotifier';

export type { DecisionOutcome } from '../../core/sessionActs';

/** What a followed session's I/O parts work with: its model, its backend, and how it speaks. */
export interface SessionPorts extends ActsPorts {
  backend: SessionBackend;
  log: SessionLog;
  notifier: SessionNotifier;
  voice: BackendVoice;
}

export class PermissionAnswers extends PermissionReplies implements PermissionAsker {
  readonly key: string;
  /** Who asks for permission, in the prompt: the agent, else the backend it runs on. */
  readonly askerLabel: string;
  readonly #notifier: SessionNotifier;
  /** Requests whose prompt is up (so a new batch does not show the same one twice). */
  readonly #prompting = new Set<string>();

  constructor(ports: SessionPorts) {
    super(ports);
    this.#notifier = ports.notifier;
    const identity = ports.model.identity;
    this.key = identity.key;
    this.askerLabel = identity.agentLabel ?? `the agent on ${ports.backend.label}`;
  }

  override ask(request: ToolPermissionRequest): void {
    if (this.#prompting.has(request.requestId)) return;
    this.#prompting.add(request.requestId);
    void this.#notifier.askPermission(this, request, this.binding(request)).finally(() => this.#prompting.delete(request.requestId));
  }

  /** Shows every open request again (the status bar's click: a notification may have gone). */
  askAgain(): void {
    for (const request of this.open) {
      this.#prompting.delete(request.requestId);
      this.ask(request);
    }
  }
}

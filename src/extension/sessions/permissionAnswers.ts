// A followed session's tool permission requests, each one a person's decision and never answered
// automatically: asked once per request (the prompt is the notification), asked again from the
// status bar, and answered at most once through its own gate. The session model holds which
// requests are open; this sends the answers and records them there.
import { DecisionGate, planHash, type DecisionBinding, type PendingPlanRef } from '../../core/decision';
import { SessionsError } from '../../core/errors';
import { clip } from '../../core/panelMessages';
import { permissionRefusalMessage, permissionResponseEvent, type ToolPermissionRequest } from '../../core/permissionRequests';
import type { SessionModel } from '../../core/sessionModel';
import type { SessionBackend } from '../../sessions/backend';
import type { BackendVoice, PermissionAsker, SessionLog, SessionNotifier } from './sessionNotifier';

/** The one answer to a decision, reply or permission answer: it went out, or it was refused and why. */
export type DecisionOutcome = { sent: true } | { sent: false; message: string };

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The gate key of a tool permission request (plans are keyed by their tool_use id). */
function permissionGateRef(sessionId: string, request: ToolPermissionRequest): PendingPlanRef {
  return { sessionId, toolUseId: `permission:${request.requestId}`, plan: JSON.stringify(request.input ?? null) };
}

/** What a followed session's I/O parts work with: its model, its backend, and how it speaks. */
export interface SessionPorts {
  model: SessionModel;
  backend: SessionBackend;
  log: SessionLog;
  notifier: SessionNotifier;
  voice: BackendVoice;
  now: () => number;
}

export class PermissionAnswers implements PermissionAsker {
  readonly key: string;
  /** Who asks for permission, in the prompt: the agent, else the backend it runs on. */
  readonly askerLabel: string;
  readonly #p: SessionPorts;
  readonly #gate = new DecisionGate();
  /** Requests whose prompt is up (so a new batch does not show the same one twice). */
  readonly #prompting = new Set<string>();

  constructor(ports: SessionPorts) {
    this.#p = ports;
    const identity = ports.model.identity;
    this.key = identity.key;
    this.askerLabel = identity.agentLabel ?? `the agent on ${ports.backend.label}`;
  }

  get #sessionId(): string {
    return this.#p.model.identity.sessionId;
  }

  /** Open tool permission requests, oldest first. */
  get open(): readonly ToolPermissionRequest[] {
    return this.#p.model.state.permissions;
  }

  /** An answer's binding: this session, the request, and the input shown with it. */
  binding(request: ToolPermissionRequest): DecisionBinding {
    const ref = permissionGateRef(this.#sessionId, request);
    return { sessionId: this.#sessionId, toolUseId: ref.toolUseId, planHash: planHash(ref.plan) };
  }

  ask(request: ToolPermissionRequest): void {
    if (this.#prompting.has(request.requestId)) return;
    this.#prompting.add(request.requestId);
    void this.#p.notifier.askPermission(this, request, this.binding(request)).finally(() => this.#prompting.delete(request.requestId));
  }

  /** Shows every open request again (the status bar's click: a notification may have gone). */
  askAgain(): void {
    for (const request of this.open) {
      this.#prompting.delete(request.requestId);
      this.ask(request);
    }
  }

  isPermissionOpen(requestId: string): boolean {
    return this.open.some((r) => r.requestId === requestId);
  }

  /**
   * Answers a permission request the person decided on, at most once: a repeated click, a request
   * already closed (answered elsewhere, the turn ended) or one for another session is refused with
   * a message. Allow sends the input unchanged; deny a fixed message.
   */
  async answerPermission(binding: DecisionBinding, requestId: string, answer: 'allow' | 'deny'): Promise<DecisionOutcome> {
    const { log, notifier, model } = this.#p;
    const refuse = (message: string): DecisionOutcome => {
      log.warn(`[${this.key}] permission ${answer} for ${requestId} refused: ${message}`);
      notifier.say('warning', message);
      return { sent: false, message };
    };
    if (model.identity.readOnly !== undefined) return refuse(model.identity.readOnly);
    if (model.state.ended !== undefined) return refuse('This session is no longer followed; the answer was not sent.');
    const request = this.open.find((r) => r.requestId === requestId);
    const checked = this.#gate.claim(binding, request ? permissionGateRef(this.#sessionId, request) : undefined, this.#sessionId);
    if (!checked.ok) return refuse(permissionRefusalMessage(checked.reason));
    if (!request) return refuse(permissionRefusalMessage('no_pending_plan'));
    log.info(`[${this.key}] permission ${answer} for ${requestId} (${clip(request.toolName, 80)})`);
    try {
      await this.#p.backend.sendEvents(this.#sessionId, [permissionResponseEvent(request, answer)]);
    } catch (err) {
      if (err instanceof SessionsError && err.kind === 'conflict') {
        // The session took another answer first (the browser, another window) or has ended.
        model.reduce({ type: 'permissionAnswered', requestId, at: this.#p.now() });
        const message = 'This permission request was already answered elsewhere (or the session ended); your answer was not sent.';
        log.warn(`[${this.key}] permission ${answer} for ${requestId}: 409, ${message}`);
        notifier.say('info', message);
        return { sent: false, message };
      }
      // Not delivered: the request stays open and may be answered again.
      this.#gate.release(binding);
      const message = `Sending your answer failed: ${this.#p.voice.read(err).message ?? errorText(err)}`;
      log.error(`[${this.key}] ${message}`);
      notifier.say('error', message, {
        label: 'Ask Again',
        run: () => {
          if (this.isPermissionOpen(requestId)) this.ask(request);
        },
      });
      return { sent: false, message };
    }
    model.reduce({ type: 'permissionAnswered', requestId, at: this.#p.now() });
    return { sent: true };
  }
}

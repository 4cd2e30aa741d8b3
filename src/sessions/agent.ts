// The seam between a session and whatever plans in it (scripted scenario, ACP agent, …).
// The SessionHost owns the event log and the status; an agent only emits events and reacts.
import type { AnyEvent, PermissionDecision, SessionStatus } from '../core/protocol';

export interface AgentContext {
  readonly sessionId: string;
  /** Appends an event to the session's log. The host stamps id, uuid and session_id. */
  emit(event: AnyEvent): void;
  setStatus(status: Exclude<SessionStatus, 'archived'>): void;
  /** Aborted when the session is archived or the host shuts down. */
  readonly signal: AbortSignal;
  /** A diagnostic line for the host's log (never a token). */
  log(line: string): void;
  /**
   * Optional: records the agent's resumable state (JSON) in the session log, in order with the
   * events emitted before it, so a restarted host can hand it back through `Agent.resume`.
   */
  checkpoint?(state: unknown): void;
}

export interface Agent {
  /** A short label for people: "Scripted demo (examples/demo.json)", "Claude (ACP)". */
  readonly label: string;
  /** Starts planning `prompt`. Resolves once the agent has started; work continues in the background. */
  start(ctx: AgentContext, prompt: string): Promise<void>;
  /** A user message for the agent (a reply to its question, or feedback). Already in the log. */
  onUserMessage(text: string): void;
  /**
   * The reviewer's decision on the agent's control_request `requestId`. The host has already
   * checked that the request exists and is unanswered; the response is in the log.
   */
  onDecision(requestId: string, decision: PermissionDecision): void;
  /** Ends the agent and every process it started. Idempotent. */
  stop(): Promise<void>;
  /**
   * Optional: continues from the last `checkpoint` after a host restart. Resolves false when the
   * state cannot be resumed (e.g. the scenario changed); the host then reports the agent as lost.
   */
  resume?(ctx: AgentContext, checkpoint: unknown): Promise<boolean>;
}

/** Creates the agent for a new session. */
export type AgentFactory = (options: { sessionId: string; title: string }) => Agent;

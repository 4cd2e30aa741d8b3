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

/** How an agent starts. */
export interface AgentStartOptions {
  /**
   * Carry out a plan the reviewer approved (a fresh turn after the planning agent stopped): start
   * out of plan mode, as `ultraplan.afterApproval` says, instead of planning.
   */
  carryOut?: boolean;
  /**
   * With carryOut: the SHA-256 of the approved plan as the log records it, so the agent's progress
   * is reported bound to it (core/executionProgress.ts) as after an approval it answered itself.
   */
  approvedPlanHash?: string;
}

/** What a resume gave back (see Agent.resume). */
export type ResumeOutcome =
  /** The agent continues where it was, its open requests included. */
  | 'continued'
  /** The agent has its conversation back (ACP session/load), but the requests it had open went with its old process. */
  | 'reloaded'
  /** It cannot continue; the reason says why, for the person. */
  | { lost: string };

export interface Agent {
  /** A short label for people: "Scripted demo (examples/demo.json)", "Claude (ACP)". */
  readonly label: string;
  /** Starts planning `prompt` (or carrying a plan out). Resolves once the agent has started; work continues in the background. */
  start(ctx: AgentContext, prompt: string, options?: AgentStartOptions): Promise<void>;
  /**
   * Optional, for an agent that was `reloaded`: leaves plan mode as `ultraplan.afterApproval`
   * says and sends `prompt` (the approved plan, to carry out). Without it the prompt is sent as a
   * user message.
   */
  carryOut?(prompt: string): void;
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
   * Optional: true once the agent ended of its own accord with its work done (the local service
   * ends an agent with its approved plan's outcome) and takes no more messages: the host then
   * starts a fresh turn for the next message, as for an agent that stopped.
   */
  readonly ended?: boolean;
  /**
   * Optional: continues from the last `checkpoint` after a host restart. `false` (or `lost`): the
   * state cannot be resumed (e.g. the scenario changed); the host then reports the agent as lost.
   */
  resume?(ctx: AgentContext, checkpoint: unknown): Promise<boolean | ResumeOutcome>;
}

/** What an agent is created for. */
export interface AgentFactoryOptions {
  sessionId: string;
  title: string;
  /** The session's agent must not read files the review's secret rule withholds (core/withheldFiles.ts). */
  withholdSecrets?: boolean;
}

/** Creates the agent for a new session. */
export type AgentFactory = (options: AgentFactoryOptions) => Agent;

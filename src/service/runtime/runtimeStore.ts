// What the agent runtime (agentRuntime.ts) needs of the store a session lives in: the session's log
// as this process knows it, the agent's requests awaiting a decision, and one ordered write path.
// The journal (host/hostedSession.ts) and PostgreSQL (workers/workerLog.ts) each supply one; what
// else differs between them (leases, LISTEN/NOTIFY, in-memory subscribers) stays on their side.
import type { SessionStatus } from '../../core/protocol';
import type { StoredEvent } from '../store/sessionStore';

export type RuntimeEvent = Record<string, unknown> & { type: string };

/** What the runtime writes for a session, in order. */
export type RuntimeRecord =
  /** An event the agent emitted, or one the runtime writes itself (agent lost, failed to start). */
  | { t: 'event'; event: RuntimeEvent; origin: 'agent' | 'host' }
  | { t: 'status'; status: Exclude<SessionStatus, 'archived'> }
  | { t: 'checkpoint'; state: unknown }
  /**
   * The cursor: the newest client event the agent was given. Written before the agent hears of
   * the event, so what the agent does about it (and every checkpoint after) follows it in the log.
   */
  | { t: 'delivered'; seq: number }
  /** The agent's requests nobody can answer any more (its process went with a restart). */
  | { t: 'close_requests'; ids: readonly string[] };

export interface RuntimeStore {
  /** The session's log as stored, in order (the runtime reads it for recaps and lost plans). */
  readonly events: readonly StoredEvent[];
  /** The agent's saved state: undefined none, null reported lost. */
  readonly checkpoint: unknown;
  /** The agent's can_use_tool requests awaiting a decision: request_id -> tool_use_id. */
  readonly outstanding: Map<string, string>;
  /** Requests a decision answered (or a restart closed). */
  readonly answered: Set<string>;
  /** Reads what the store holds of the session before its agent starts (again, after a failure). */
  load?(): Promise<void>;
  /** Queues records in order; resolves once they are stored (rejects when they were not). */
  write(records: readonly RuntimeRecord[]): Promise<void>;
  /**
   * The client events (user messages, decisions; the creation's too) after sequence `seq`, in
   * order, once `events` holds everything up to them.
   */
  clientEventsAfter(seq: number): Promise<readonly StoredEvent[]>;
}

/** Registers an agent's can_use_tool request, or a decision that answered one. */
export function trackControl(store: Pick<RuntimeStore, 'outstanding' | 'answered'>, event: RuntimeEvent): void {
  if (event.type === 'control_request') {
    const request = event.request as { subtype?: unknown; tool_use_id?: unknown } | undefined;
    if (request?.subtype === 'can_use_tool' && typeof event.request_id === 'string') {
      store.outstanding.set(event.request_id, typeof request.tool_use_id === 'string' ? request.tool_use_id : '');
    }
  } else if (event.type === 'control_response') {
    const requestId = (event.response as { request_id?: unknown } | undefined)?.request_id;
    if (typeof requestId === 'string') {
      store.outstanding.delete(requestId);
      store.answered.add(requestId);
    }
  }
}

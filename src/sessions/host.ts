// SessionHost: sessions in one process. Holds each session (hostedSession.ts: its append-only
// event log, status and write pipeline), drives its agent, and routes what reviewers send (user
// messages, control_response decisions) to that agent. The embedded backend uses it in memory;
// the server persists it (store.ts).
//
// Durability rule: an event, status or checkpoint becomes visible (readEvents, getSession,
// subscribers) only after the store has made it durable. So nothing a client has seen can be
// lost by a crash, and an acknowledged append survives one. Ids are assigned when an event is
// queued, so the log order is the order events were emitted or received.
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import {
  AGENT_LOST_SUBTYPE,
  AnyEventSchema,
  CreateSessionRequestSchema,
  type AnyEvent,
  type CreateSessionRequest,
  type PermissionDecision,
  type SessionResource,
} from '../core/protocol';
import { SessionsError } from '../core/errors';
import type { Agent, AgentContext, AgentFactory, AgentStartOptions } from './agent';
import { AgentRestarts } from './agentRestarts';
import { checkEventBatch, isClientEvent, parseClientEvent, parseCreationEvents } from './clientEvents';
import {
  DEFAULT_EVENT_PAGE_SIZE,
  HostedSession,
  errorText,
  parseEventSeq,
  type SessionListener,
  type StoredEventPage,
} from './hostedSession';
import { MemorySessionStore, type LogRecord, type SessionMeta, type SessionStore, type StoredEvent } from './store';
import type { SessionOwner } from './sessionOwner';

export type { StoredEvent } from './store';
export {
  DEFAULT_EVENT_PAGE_SIZE,
  MAX_EVENT_PAGE_SIZE,
  formatEventId,
  type SessionListener,
  type SessionNotice,
  type StoredEventPage,
} from './hostedSession';

export interface SessionHostLimits {
  /** Sessions held at once, archived ones included (they stay readable). */
  maxSessions: number;
  /** Events in one append (and in one creation request). */
  maxEventsPerAppend: number;
  /** One event's JSON size in bytes. */
  maxEventBytes: number;
}

export const DEFAULT_HOST_LIMITS: SessionHostLimits = {
  maxSessions: 10_000,
  maxEventsPerAppend: 100,
  maxEventBytes: 1024 * 1024,
};

export interface SessionHostOptions {
  agentFactory: AgentFactory;
  /** Default: in memory (nothing outlives the process). */
  store?: SessionStore;
  log?: (line: string) => void;
  limits?: Partial<SessionHostLimits>;
}

/** The system event a session gets when a restarted host cannot continue its agent. */
export { AGENT_LOST_SUBTYPE };
/** The system event a session gets when lines of its journal were skipped as damaged. */
export const JOURNAL_DAMAGED_SUBTYPE = 'journal_damaged';

export class SessionHost {
  private readonly sessions = new Map<string, HostedSession>();
  private readonly agentFactory: AgentFactory;
  private readonly store: SessionStore;
  private readonly log: (line: string) => void;
  /** Agents across restarts of this host: resumed, or lost and restarted by a decision (agentRestarts.ts). */
  private readonly restarts: AgentRestarts<HostedSession>;
  readonly limits: SessionHostLimits;
  private creating = 0;
  private closing = false;
  private loaded = false;

  constructor(options: SessionHostOptions) {
    this.agentFactory = options.agentFactory;
    this.store = options.store ?? new MemorySessionStore();
    this.log = options.log ?? (() => {});
    this.limits = { ...DEFAULT_HOST_LIMITS, ...options.limits };
    this.restarts = new AgentRestarts<HostedSession>({
      agentFactory: this.agentFactory,
      contextFor: (session) => this.contextFor(session),
      startAgent: (session, agent, prompt, startOptions) => this.startAgent(session, agent, prompt, startOptions),
      log: this.log,
    });
  }

  /** A host with its stored sessions loaded and their agents resumed. */
  static async open(options: SessionHostOptions): Promise<SessionHost> {
    const host = new SessionHost(options);
    await host.load();
    return host;
  }

  /**
   * Loads stored sessions and resumes their agents (once; a no-op for the memory store). An
   * agent that cannot resume (no checkpoint, or it refuses) leaves its session `idle` with a
   * `system` event of subtype `agent_lost`; a decision on the plan it left, or a message, starts
   * a fresh agent turn (agentRestarts.ts).
   */
  async load(): Promise<void> {
    if (this.loaded) return;
    this.loaded = true;
    for (const { meta, records, damagedLines } of await this.store.load()) {
      const session = new HostedSession(meta, 'running', this.store, this.log);
      for (const record of records) {
        if (record.t === 'event') {
          session.seq = Math.max(session.seq, parseEventSeq(record.event.id));
          session.trackControl(record.event);
          if (isClientEvent(record.event))
            session.clientUuids.set(record.event.uuid as string, { event: record.event, stored: Promise.resolve() });
        }
        session.apply(record, false);
      }
      session.intendedStatus = session.status;
      session.archived = session.status === 'archived';
      this.sessions.set(meta.id, session);
      const damaged = damagedLines.length > 0 ? this.reportDamage(session, damagedLines) : false;
      if (!session.archived) await this.restarts.resume(session, damaged ? 'its journal is damaged' : undefined);
    }
    // What loading wrote (notices, lost agents) is stored before the first reader can ask.
    await Promise.all([...this.sessions.values()].map((s) => s.flushed()));
  }

  /**
   * A skipped journal line may have held anything, a decision included: no request from before
   * it stays answerable (answering it again could act on a plan twice, or on the wrong one), and
   * the agent does not resume from a state that may be missing a step. Said once in the log, as
   * a system event. Returns whether this is news (not reported by an earlier start).
   */
  private reportDamage(session: HostedSession, lines: number[]): boolean {
    session.outstanding.clear();
    const known = session.events.some(
      (e) => e.type === 'system' && e.subtype === JOURNAL_DAMAGED_SUBTYPE && JSON.stringify(e.lines) === JSON.stringify(lines),
    );
    if (known) return false;
    const list = lines.join(', ');
    this.log(`session ${session.meta.id}: journal line(s) ${list} are damaged; open requests are closed`);
    session.queueEvents([
      {
        type: 'system',
        subtype: JOURNAL_DAMAGED_SUBTYPE,
        lines,
        message: `Line(s) ${list} of this session's journal were damaged on disk and skipped. Requests made before them can no longer be answered; send a message to continue.`,
      },
    ]);
    return true;
  }

  // -------------------------------------------------------------------------------------------
  // Reading

  getSession(id: string): SessionResource {
    return this.require(id).resource();
  }

  /** Who created the session (null: the shared token); 404 when there is none. */
  ownerOf(id: string): SessionOwner | null {
    return this.require(id).meta.owner ?? null;
  }

  listSessions(): SessionResource[] {
    return [...this.sessions.values()].map((s) => s.resource());
  }

  readEvents(id: string, afterId: string | null, limit: number = DEFAULT_EVENT_PAGE_SIZE): StoredEventPage {
    return this.require(id).readEvents(afterId, limit);
  }

  /** The id of the session's newest committed event, or null. */
  lastEventId(id: string): string | null {
    return this.require(id).lastEventId();
  }

  subscribe(id: string, listener: SessionListener): () => void {
    return this.require(id).subscribe(listener);
  }

  // -------------------------------------------------------------------------------------------
  // Writing

  async createSession(request: CreateSessionRequest, agentFactory?: AgentFactory, owner?: SessionOwner | null): Promise<SessionResource> {
    this.refuseWhenClosing();
    const parsed = CreateSessionRequestSchema.safeParse(request);
    if (!parsed.success) throw badRequest('invalid session', parsed.error);
    const body = parsed.data;
    const title = checkTitle(body.title);
    const raws = body.events.map((e) => e.data);
    checkEventBatch(raws, this.limits, 'events');
    const { events: creation, prompt } = parseCreationEvents(raws);
    const events = creation.map((e) => e.event);
    if (this.sessions.size + this.creating >= this.limits.maxSessions) {
      throw new SessionsError(
        'conflict',
        `this host holds its limit of ${this.limits.maxSessions} sessions; raise the limit or use a new data directory`,
        409,
      );
    }
    this.creating++;
    try {
      const id = `session_${randomUUID().replace(/-/g, '')}`;
      const agent = (agentFactory ?? this.agentFactory)({ sessionId: id, title });
      const meta: SessionMeta = {
        id,
        title,
        created_at: new Date().toISOString(),
        environment_id: body.environment_id ?? null,
        session_context: body.session_context ?? null,
        agent_label: agent.label,
        ...(owner ? { owner } : {}),
      };
      await this.store.create(meta);
      const session = new HostedSession(meta, 'running', this.store, this.log);
      session.agent = agent;
      this.sessions.set(id, session);
      const stamped = events.map((e) => session.stamp(stripId(e)));
      await session.queue([
        ...stamped.map((event): LogRecord => ({ t: 'event', event, at: new Date().toISOString() })),
        session.statusRecord('running'),
      ]);
      await this.startAgent(session, agent, prompt);
      return session.resource();
    } finally {
      this.creating--;
    }
  }

  private async startAgent(session: HostedSession, agent: Agent, prompt: string, options?: AgentStartOptions): Promise<void> {
    try {
      await agent.start(this.contextFor(session), prompt, options);
    } catch (err) {
      this.log(`session ${session.meta.id}: agent failed to start: ${errorText(err)}`);
      session.agent = null;
      session.queueEvents([
        { type: 'system', subtype: 'agent_error', message: `The agent failed to start: ${errorText(err)}` },
        { type: 'result', subtype: 'error_during_execution', is_error: true, num_turns: 0, errors: [errorText(err)] },
      ]);
      session.queueStatus('idle');
    }
  }

  /**
   * Appends events a client sent (user messages, control_responses) and routes them to the
   * agent once they are durable. The batch is checked whole first: any refusal appends nothing.
   */
  async appendEvents(id: string, events: AnyEvent[]): Promise<StoredEvent[]> {
    return (await this.appendClientEvents(id, events)).map((appended) => appended.event);
  }

  /**
   * appendEvents, telling which events were already stored: an event whose uuid the session
   * holds from a client (a retried POST) is answered with the stored event and not delivered again.
   */
  async appendClientEvents(id: string, events: AnyEvent[]): Promise<Array<{ event: StoredEvent; duplicate: boolean }>> {
    this.refuseWhenClosing();
    const session = this.require(id);
    if (session.archived) throw new SessionsError('conflict', `session ${id} is archived; it takes no more events`, 409);
    if (!Array.isArray(events) || events.length === 0) {
      throw new SessionsError('bad_request', 'events must be a non-empty list', 400);
    }
    checkEventBatch(events, this.limits, 'events');

    const parsed = events.map((raw, index) => parseClientEvent(raw, `events[${index}]`, 'append'));
    // Earlier copies: stored before (by uuid), or the first copy inside this batch (its index).
    const firstInBatch = new Map<string, number>();
    const earlier = parsed.map((route, index) => {
      const uuid = typeof route.event.uuid === 'string' && route.event.uuid ? route.event.uuid : undefined;
      if (uuid === undefined) return undefined;
      const known = session.clientUuids.get(uuid);
      if (known) return known;
      const first = firstInBatch.get(uuid);
      if (first === undefined) firstInBatch.set(uuid, index);
      return first;
    });
    const routes = parsed.filter((_, index) => earlier[index] === undefined);
    const answering = new Set<string>();
    const decisions: Array<{ requestId: string; decision: PermissionDecision; at: string }> = [];
    for (const [index, route] of parsed.entries()) {
      if (earlier[index] !== undefined || route.kind !== 'decision') continue;
      const at = `events[${index}]`;
      if (session.answered.has(route.requestId) || answering.has(route.requestId)) {
        throw new SessionsError('conflict', `${at}: control_request ${route.requestId} was already answered`, 409);
      }
      answering.add(route.requestId);
      decisions.push({ requestId: route.requestId, decision: route.decision, at });
    }
    // Plans whose agent stopped with a restart are still decided here (agentRestarts.ts).
    const claimed = this.restarts.claim(
      session,
      decisions,
      routes.some((route) => route.kind === 'user'),
    );
    if (claimed.unknown !== undefined) {
      claimed.undo();
      const at = decisions.find((d) => d.requestId === claimed.unknown)?.at ?? 'events';
      throw new SessionsError('bad_request', `${at}: no control_request ${claimed.unknown} awaits an answer in session ${id}`, 400);
    }

    // Decided synchronously, before any await, so a concurrent duplicate is refused above.
    const toolUseIds = new Map<string, string>();
    for (const requestId of answering) {
      if (!claimed.taken.has(requestId)) toolUseIds.set(requestId, session.outstanding.get(requestId) ?? '');
      session.outstanding.delete(requestId);
      session.answered.add(requestId);
    }
    for (const requestId of claimed.closedRequests) session.answered.add(requestId);
    // In log order: the plans a message closes before it, a decision's effect after it.
    const before = claimed.before.map((event) => session.stamp(event));
    const stamped = routes.map((route) => session.stamp(stripId(route.event)));
    const after = claimed.after.map((event) => session.stamp(event));
    const all = [...before, ...stamped, ...after];
    const stored =
      all.length === 0
        ? Promise.resolve()
        : session.queue(all.map((event): LogRecord => ({ t: 'event', event, at: new Date().toISOString() })));
    for (const event of stamped) session.clientUuids.set(event.uuid as string, { event, stored });
    try {
      await stored;
      // A retry of an event another request is still storing is answered once it is stored.
      await Promise.all(earlier.map((known) => (typeof known === 'object' ? known.stored : undefined)));
    } catch (err) {
      for (const event of stamped) session.clientUuids.delete(event.uuid as string);
      for (const [requestId, toolUseId] of toolUseIds) {
        session.answered.delete(requestId);
        session.outstanding.set(requestId, toolUseId);
      }
      for (const requestId of claimed.taken.keys()) session.answered.delete(requestId);
      claimed.undo();
      throw err;
    }
    for (const route of routes) {
      if (session.archived || this.closing) continue;
      try {
        if (route.kind === 'user') this.deliverUserMessage(session, route.text);
        else if (route.kind === 'decision') {
          const taken = claimed.taken.get(route.requestId);
          if (taken) this.restarts.act(session, taken);
          else session.agent?.onDecision(route.requestId, route.decision);
        }
      } catch (err) {
        this.log(`session ${id}: agent failed on a ${route.kind}: ${errorText(err)}`);
      }
    }
    const storedAt = new Map<number, StoredEvent>();
    parsed.forEach((_, index) => {
      if (earlier[index] === undefined) storedAt.set(index, stamped[storedAt.size] as StoredEvent);
    });
    return parsed.map((_, index) => {
      const known = earlier[index];
      if (known === undefined) return { event: storedAt.get(index) as StoredEvent, duplicate: false };
      return { event: typeof known === 'number' ? (storedAt.get(known) as StoredEvent) : known.event, duplicate: true };
    });
  }

  private deliverUserMessage(session: HostedSession, text: string): void {
    if (session.agent) session.agent.onUserMessage(text);
    else this.restarts.messageWithoutAgent(session);
  }

  /** Archives a session: stops its agent; later appends get 409. Already archived: 409. */
  async archive(id: string): Promise<void> {
    this.refuseWhenClosing();
    const session = this.require(id);
    if (session.archived) throw new SessionsError('conflict', `session ${id} is already archived`, 409);
    session.archived = true;
    this.restarts.forget(id);
    session.agentAbort.abort();
    const agent = session.agent;
    session.agent = null;
    await Promise.all([
      session.queue([session.statusRecord('archived')]),
      agent?.stop().catch((err: unknown) => this.log(`session ${id}: agent stop failed: ${errorText(err)}`)),
    ]);
  }

  /**
   * Stops every agent and flushes what is queued. Status is left as it was, so a persisted
   * host resumes these sessions on its next start.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const stops: Promise<unknown>[] = [];
    for (const session of this.sessions.values()) {
      session.agentAbort.abort();
      if (session.agent) {
        const id = session.meta.id;
        stops.push(session.agent.stop().catch((err: unknown) => this.log(`session ${id}: agent stop failed: ${errorText(err)}`)));
      }
    }
    await Promise.all(stops);
    await Promise.all([...this.sessions.values()].map((s) => s.flushed()));
    for (const session of this.sessions.values()) session.unsubscribeAll();
    await this.store.close();
  }

  get isClosing(): boolean {
    return this.closing;
  }

  // -------------------------------------------------------------------------------------------
  // Internals

  private contextFor(session: HostedSession): AgentContext {
    const id = session.meta.id;
    const signal = session.agentAbort.signal;
    const live = () => !signal.aborted && !session.archived && !this.closing;
    return {
      sessionId: id,
      signal,
      emit: (event) => {
        if (!live()) return;
        const parsed = AnyEventSchema.safeParse(event);
        if (!parsed.success) {
          this.log(`session ${id}: dropped an agent event that is not an object with a type`);
          return;
        }
        const stamped = session.stamp(stripId(parsed.data));
        session.trackControl(stamped);
        session.queue([{ t: 'event', event: stamped, at: new Date().toISOString() }]).catch(() => {});
      },
      setStatus: (status) => {
        if (live()) session.queueStatus(status);
      },
      log: (line) => this.log(`session ${id}: ${line}`),
      checkpoint: (state) => {
        if (live()) session.queue([{ t: 'checkpoint', state }]).catch(() => {});
      },
    };
  }

  private require(id: string): HostedSession {
    const session = this.sessions.get(id);
    if (!session) throw new SessionsError('not_found', `no session ${JSON.stringify(id)}`, 404);
    return session;
  }

  private refuseWhenClosing(): void {
    if (this.closing) throw new SessionsError('transient', 'the session host is shutting down; retry shortly', 503);
  }
}

// The set_permission_mode request and the prompt are recorded as sent; the host assigns the id.
function stripId(event: AnyEvent): Record<string, unknown> & { type: string } {
  const { id: _ignored, ...rest } = event;
  return rest;
}

/** Sessions newest first: by creation time, then by id (the list order of every backend). */
export function newestFirst(sessions: SessionResource[]): SessionResource[] {
  return [...sessions].sort((a, b) =>
    a.created_at === b.created_at ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.created_at < b.created_at ? 1 : -1,
  );
}

/** A title people can read in a list: trimmed, 1-500 characters, one line, no control characters. */
export function checkTitle(title: string): string {
  const trimmed = title.trim();
  if (!trimmed) throw new SessionsError('bad_request', 'title must not be blank', 400);
  if (trimmed.length > 500) throw new SessionsError('bad_request', `title may hold at most 500 characters, got ${trimmed.length}`, 400);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) {
    throw new SessionsError('bad_request', 'title must be one line without control characters', 400);
  }
  return trimmed;
}

function badRequest(at: string, error: z.ZodError): SessionsError {
  return new SessionsError('bad_request', `${at}: ${z.prettifyError(error).replace(/\s*\n\s*/g, '; ')}`, 400);
}

// SessionHost: sessions in one process. Holds each session (hostedSession.ts: its append-only
// event log, status and write pipeline) and its agent (runtime/agentRuntime.ts, the runtime a
// worker uses too), checks what reviewers send (user messages, control_response decisions) and
// has the runtime feed it to the agent once stored. The embedded backend uses it in memory; the
// server persists it (store/sessionStore.ts).
//
// Durability rule: an event, status or checkpoint becomes visible (readEvents, getSession,
// subscribers) only after the store has made it durable. So nothing a client has seen can be
// lost by a crash, and an acknowledged append survives one. Ids are assigned when an event is
// queued, so the log order is the order events were emitted or received.
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import {
  AGENT_LOST_SUBTYPE,
  CreateSessionRequestSchema,
  type AnyEvent,
  type CreateSessionRequest,
  type PermissionDecision,
  type SessionResource,
} from '../../core/protocol';
import { SessionsError } from '../../core/errors';
import type { AgentFactory } from '../../agents/agent';
import { AgentRuntime, type ApprovalHooks } from '../runtime/agentRuntime';
import { checkEventBatch, parseClientEvent, parseCreationEvents } from './incomingEvents';
import { DEFAULT_EVENT_PAGE_SIZE, HostedSession, stripId, type SessionListener, type StoredEventPage } from './hostedSession';
import { MemorySessionStore, type LogRecord, type SessionMeta, type SessionStore, type StoredEvent } from '../store/sessionStore';
import type { SessionOwner } from '../identity/sessionOwner';
import { checkNewSession, checkWake, DEFAULT_USER_QUOTAS, LIVE_STATUSES, type HeldCounts, type UserQuotas } from '../store/quotas';
import { withholdsSecrets } from '../../core/withheldFiles';
import { PLAN_FILE_FIELD, planFileEvents, readPlanFileField } from '../../core/planFileSession';
import { PROGRESS_LOG_MS, withProgressLog } from '../runtime/progressLog';

export type { StoredEvent } from '../store/sessionStore';
export {
  DEFAULT_EVENT_PAGE_SIZE,
  MAX_EVENT_PAGE_SIZE,
  formatEventId,
  type SessionListener,
  type SessionNotice,
  type StoredEventPage,
} from './hostedSession';

export interface SessionHostLimits extends UserQuotas {
  /** Sessions held at once; archived ones do not count (they stay readable until retention removes them). */
  maxSessions: number;
  /** Events in one append (and in one creation request). */
  maxEventsPerAppend: number;
  /** One event's JSON size in bytes. */
  maxEventBytes: number;
}

export const DEFAULT_HOST_LIMITS: SessionHostLimits = {
  maxSessions: 10_000,
  ...DEFAULT_USER_QUOTAS,
  maxEventsPerAppend: 100,
  maxEventBytes: 1024 * 1024,
};

export interface SessionHostOptions {
  agentFactory: AgentFactory;
  /** Default: in memory (nothing outlives the process). */
  store?: SessionStore;
  log?: (line: string) => void;
  limits?: Partial<SessionHostLimits>;
  /** Told of each session's plan approvals (the record of what changed: changes/sessionWorkspace.ts). */
  approvals?: (session: SessionMeta) => ApprovalHooks | undefined;
  /** How often an agent's resume that takes long says so in the log (progressLog.ts). */
  progressLogMs?: number;
}

/** The system event a session gets when a restarted host cannot continue its agent. */
export { AGENT_LOST_SUBTYPE };
/** The system event a session gets when lines of its journal were skipped as damaged. */
export const JOURNAL_DAMAGED_SUBTYPE = 'journal_damaged';

export class SessionHost {
  private readonly sessions = new Map<string, HostedSession>();
  /** Each live session's agent: started, resumed after a restart, or lost and restarted by a decision. */
  private readonly agents = new Map<string, AgentRuntime>();
  /** Per owner (`sub`): wakes being stored and handed to their agent, counted live meanwhile. */
  readonly #wakes = new Map<string, number>();
  private readonly agentFactory: AgentFactory;
  private readonly store: SessionStore;
  private readonly log: (line: string) => void;
  private readonly approvals: SessionHostOptions['approvals'];
  readonly #progressLogMs: number;
  readonly limits: SessionHostLimits;
  /** The owners (null: none) of sessions being created, counted toward the limits until stored. */
  private readonly creating: Array<string | null> = [];
  private closing = false;
  private loaded = false;

  constructor(options: SessionHostOptions) {
    this.agentFactory = options.agentFactory;
    this.store = options.store ?? new MemorySessionStore();
    this.log = options.log ?? (() => {});
    this.approvals = options.approvals;
    this.#progressLogMs = options.progressLogMs ?? PROGRESS_LOG_MS;
    this.limits = { ...DEFAULT_HOST_LIMITS, ...options.limits };
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
   * a fresh agent turn (agentRestarts.ts). Client events stored after the agent's cursor (the
   * host stopped before handing them over) are handed to it then.
   */
  async load(): Promise<void> {
    if (this.loaded) return;
    this.loaded = true;
    for (const loaded of await this.store.load()) {
      const { session, cursor } = HostedSession.load(loaded, this.store, this.log);
      this.sessions.set(session.id, session);
      const damaged = loaded.damagedLines.length > 0 ? this.reportDamage(session, loaded.damagedLines) : false;
      if (session.archived) continue;
      const begin = () => this.runtimeFor(session, cursor).begin(damaged ? { lostBecause: 'its journal is damaged' } : {});
      await withProgressLog(this.log, `session ${session.id}: resuming its agent`, begin, this.#progressLogMs);
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
    const { events: creation } = parseCreationEvents(raws);
    const events = creation.map((e) => e.event);
    const planFile = readPlanFileField((body as Record<string, unknown>)[PLAN_FILE_FIELD]);
    if (!planFile.ok) throw new SessionsError('bad_request', planFile.reason, 400);
    checkNewSession(this.held(owner ?? null), this.limits.maxSessions, this.limits, Boolean(owner));
    this.creating.push(owner?.sub ?? null);
    try {
      const id = `session_${randomUUID().replace(/-/g, '')}`;
      const agent = (agentFactory ?? this.agentFactory)({
        sessionId: id,
        title,
        withholdSecrets: withholdsSecrets(request.session_context),
      });
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
      this.sessions.set(id, session);
      const stamped = events.map((e) => session.stamp(stripId(e)));
      const at = new Date().toISOString();
      if (planFile.planFile) {
        // The plan waits for a decision and no agent runs before it (core/planFileSession.ts): the
        // creation counts as given, and no agent state exists to resume after a restart.
        const written = planFileEvents(planFile.planFile, { toolUseId: newId('toolu'), requestId: newId('req') }).map((e) =>
          session.stamp(e),
        );
        for (const event of written) session.trackControl(event);
        const runtime = this.runtimeFor(session, stamped.length);
        await session.queue([
          ...[...stamped, ...written].map((event): LogRecord => ({ t: 'event', event, at })),
          { t: 'delivered', seq: stamped.length },
          { t: 'checkpoint', state: null },
        ]);
        // The agent made above only named the session's agent (meta.agent_label); the decision starts one.
        await runtime.begin({ awaitingDecision: true });
        await session.flushed();
        return session.resource();
      }
      const runtime = this.runtimeFor(session, 0);
      await session.queue([
        ...stamped.map((event): LogRecord => ({ t: 'event', event, at })),
        session.statusRecord('running'),
        // The agent has been given nothing yet: a restart before it starts starts it then.
        { t: 'delivered', seq: 0 },
      ]);
      await runtime.begin({ agent });
      return session.resource();
    } finally {
      this.creating.splice(this.creating.indexOf(owner?.sub ?? null), 1);
    }
  }

  /** What is held now, sessions being created included (archived ones count toward nothing). */
  private held(owner: SessionOwner | null): HeldCounts {
    const counts: HeldCounts = { total: 0, owned: 0, live: 0 };
    for (const session of this.sessions.values()) {
      if (session.archived) continue;
      counts.total++;
      if (owner === null || session.meta.owner?.sub !== owner.sub) continue;
      counts.owned++;
      if (LIVE_STATUSES.includes(session.intendedStatus)) counts.live++;
    }
    for (const sub of this.creating) {
      counts.total++;
      if (owner !== null && sub === owner.sub) {
        counts.owned++;
        counts.live++;
      }
    }
    return counts;
  }

  /** Removes sessions archived before `before` (journal, memory, store); answers how many. Their readers get 404. */
  async removeArchived(before: Date): Promise<number> {
    const cutoff = before.toISOString();
    let removed = 0;
    for (const session of [...this.sessions.values()]) {
      if (!session.archived || this.closing) continue;
      await session.flushed();
      if (session.updatedAt >= cutoff) continue;
      this.sessions.delete(session.id);
      session.unsubscribeAll();
      await this.store.remove(session.id);
      removed++;
    }
    return removed;
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
    const runtime = this.agents.get(id) as AgentRuntime;
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
    // Waking an idle session makes one more live: the owner's live limit holds here as at creation.
    const owner = session.meta.owner;
    const waking = owner && routes.length > 0 && !LIVE_STATUSES.includes(session.intendedStatus) ? owner.sub : undefined;
    if (waking !== undefined) {
      // Counted with the wakes not yet handed to their agent (decided before any await), so
      // concurrent wakes cannot each find room for one more.
      checkWake(this.held(owner as SessionOwner).live + (this.#wakes.get(waking) ?? 0), this.limits);
      this.#wakes.set(waking, (this.#wakes.get(waking) ?? 0) + 1);
    }
    try {
      return await this.#append(session, runtime, parsed, earlier, routes);
    } finally {
      if (waking !== undefined) {
        const left = (this.#wakes.get(waking) ?? 1) - 1;
        if (left > 0) this.#wakes.set(waking, left);
        else this.#wakes.delete(waking);
      }
    }
  }

  /** The rest of appendEvents, once the wake (if it is one) is counted: stored, then handed to the agent. */
  async #append(
    session: HostedSession,
    runtime: AgentRuntime,
    parsed: ReturnType<typeof parseClientEvent>[],
    earlier: Array<number | { event: StoredEvent; stored: Promise<void> } | undefined>,
    routes: ReturnType<typeof parseClientEvent>[],
  ): Promise<Array<{ event: StoredEvent; duplicate: boolean }>> {
    const id = session.meta.id;
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
    const claimed = runtime.claim(
      decisions,
      routes.some((route) => route.kind === 'user'),
    );
    if (claimed.unknown !== undefined) {
      claimed.undo();
      const at = decisions.find((d) => d.requestId === claimed.unknown)?.at ?? 'events';
      throw new SessionsError('bad_request', `${at}: no control_request ${claimed.unknown} awaits an answer in session ${id}`, 400);
    }

    // Decided synchronously, before any await, so a concurrent duplicate is refused above.
    for (const requestId of answering) session.answered.add(requestId);
    for (const requestId of claimed.closedRequests) session.answered.add(requestId);
    // In log order: the plans a message closes before it, a decision's effect after it.
    const before = claimed.before.map((event) => session.stamp(event));
    const stamped = routes.map((route) => session.stamp(stripId(route.event)));
    const after = claimed.after.map((event) => session.stamp(event));
    const all = [...before, ...stamped, ...after];
    const records = all.map((event): LogRecord => ({ t: 'event', event, at: new Date().toISOString() }));
    const stored = records.length === 0 ? Promise.resolve() : session.queue(records);
    for (const [index, event] of stamped.entries()) {
      session.clientUuids.set(event.uuid as string, { event, stored });
      const route = routes[index] as (typeof routes)[number];
      runtime.claimed(event.uuid as string, route.kind === 'decision' ? { taken: claimed.taken.get(route.requestId) } : {});
    }
    try {
      await stored;
      // A retry of an event another request is still storing is answered once it is stored.
      await Promise.all(earlier.map((known) => (typeof known === 'object' ? known.stored : undefined)));
    } catch (err) {
      for (const event of stamped) {
        session.clientUuids.delete(event.uuid as string);
        runtime.unclaimed(event.uuid as string);
      }
      for (const requestId of answering) session.answered.delete(requestId);
      claimed.undo();
      throw err;
    }
    if (!this.closing) await runtime.feed();
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

  /** Archives a session: stops its agent; later appends get 409. Already archived: 409. */
  async archive(id: string): Promise<void> {
    this.refuseWhenClosing();
    const session = this.require(id);
    if (session.archived) throw new SessionsError('conflict', `session ${id} is already archived`, 409);
    session.archived = true;
    const runtime = this.agents.get(id);
    this.agents.delete(id);
    await Promise.all([session.queue([session.statusRecord('archived')]), runtime?.stop()]);
  }

  /**
   * Stops every agent and flushes what is queued. Status is left as it was, so a persisted
   * host resumes these sessions on its next start.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await Promise.all([...this.agents.values()].map((runtime) => runtime.stop()));
    await Promise.all([...this.sessions.values()].map((s) => s.flushed()));
    for (const session of this.sessions.values()) session.unsubscribeAll();
    await this.store.close();
  }

  get isClosing(): boolean {
    return this.closing;
  }

  // -------------------------------------------------------------------------------------------
  // Internals

  /** The runtime that runs `session`'s agent; `cursor`: the newest client event it was given. */
  private runtimeFor(session: HostedSession, cursor: number): AgentRuntime {
    const approvals = this.approvals?.(session.meta);
    const runtime = new AgentRuntime({
      ...(approvals ? { approvals } : {}),
      meta: session.meta,
      store: session,
      agentFactory: async () => this.agentFactory,
      cursor,
      log: this.log,
    });
    this.agents.set(session.meta.id, runtime);
    return runtime;
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

/** A fresh id for a tool use or request the host writes itself: `toolu_…`, `req_…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

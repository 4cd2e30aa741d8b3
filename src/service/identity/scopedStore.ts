// The store as one principal sees it: every route of a request talks to this, never to the store
// itself. Sessions it may not see are refused (403) on read, stream, send and archive, and left
// out of lists; a session it creates is owned by it; what it sends is audited under its name.
// Ownership never changes after creation, so checking it before the operation (two statements)
// cannot let a request through that the operation's moment would refuse.
import { SessionsError } from '../../core/errors';
import type { AnyEvent, CreateSessionRequest, SessionResource } from '../../core/protocol';
import type { AgentFactory } from '../../agents/agent';
import { auditEntryOf, auditLine, type AuditEntry } from './audit';
import type { StoredEventPage } from '../host/sessionHost';
import { actorOf, isVisible, ownerFor, visibilityOf, type AuditActor, type Principal, type Visibility } from './sessionOwner';
import type { ChangesOutcome } from '../changes/approvalSnapshot';
import type { AppendedEvent, ServerStore, SessionListPage, StoreNotice } from '../store/serverStore';

export class ScopedStore implements ServerStore {
  private readonly visibility: Visibility;
  private readonly actor: AuditActor;
  /** Sessions already found visible: ownership never changes, so a stream's reads ask once. */
  private readonly seen = new Set<string>();

  constructor(
    private readonly store: ServerStore,
    private readonly principal: Principal,
    private readonly log: (line: string) => void,
  ) {
    this.visibility = visibilityOf(principal);
    this.actor = actorOf(principal);
  }

  get description(): string {
    return this.store.description;
  }

  get limits() {
    return this.store.limits;
  }

  createSession(request: CreateSessionRequest, agent?: AgentFactory): Promise<SessionResource> {
    return this.store.createSession(request, agent, ownerFor(this.principal));
  }

  async getSession(id: string): Promise<SessionResource> {
    await this.check(id);
    return this.store.getSession(id);
  }

  async getOwner(id: string) {
    await this.check(id);
    return this.store.getOwner(id);
  }

  listSessions(limit: number, cursor: string | null): Promise<SessionListPage> {
    return this.store.listSessions(limit, cursor, this.visibility);
  }

  async readEvents(id: string, afterId: string | null, limit?: number): Promise<StoredEventPage> {
    await this.check(id);
    return this.store.readEvents(id, afterId, limit);
  }

  async appendEvents(id: string, events: AnyEvent[]): Promise<AppendedEvent[]> {
    await this.check(id);
    const appended = await this.store.appendEvents(id, events, this.actor);
    for (const { event, duplicate, approval } of appended) {
      if (approval) this.audit(id, { action: 'approve', requestId: approval.request_id, eventId: event.id });
      const entry = duplicate ? null : auditEntryOf(event);
      if (entry) this.audit(id, entry);
    }
    return appended;
  }

  async changesSinceApproval(id: string): Promise<ChangesOutcome> {
    await this.check(id);
    return this.store.changesSinceApproval(id);
  }

  async archive(id: string): Promise<void> {
    await this.check(id);
    await this.store.archive(id, this.actor);
    this.audit(id, { action: 'archive', requestId: null, eventId: null });
  }

  /** Callers read the session (checked) before they watch it. */
  watch(id: string, wake: (notice?: StoreNotice) => void): () => void {
    return this.store.watch(id, wake);
  }

  checkReady(timeoutMs: number): Promise<void> {
    return this.store.checkReady(timeoutMs);
  }

  countSessions(): Promise<number> {
    return this.store.countSessions();
  }

  /** The shared store outlives every request. */
  async close(): Promise<void> {}

  private async check(id: string): Promise<void> {
    if (this.visibility === null || this.seen.has(id)) return;
    const owner = await this.store.getOwner(id);
    if (!isVisible(this.visibility, owner)) {
      throw new SessionsError('unauthorized', `session ${id} belongs to another user, and you share no review group with them`, 403);
    }
    this.seen.add(id);
  }

  private audit(id: string, entry: AuditEntry): void {
    this.log(auditLine(id, this.actor, entry));
  }
}

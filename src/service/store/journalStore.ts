// The default store: one process, its sessions in a SessionHost over the JSONL journal (store.ts),
// agents run by that host. Every read is answered from memory. Audit entries go to the server's
// log only (server/scopedStore.ts writes them); the journal itself keeps no audit record.
import { constants, promises as fs } from 'node:fs';
import type { AgentFactory } from '../../agents/agent';
import type { AnyEvent, CreateSessionRequest, SessionResource } from '../../core/protocol';
import { newestFirst, type SessionHost, type StoredEventPage } from '../host/sessionHost';
import { isVisible, type SessionOwner, type Visibility } from '../identity/sessionOwner';
import { changesSinceApproval, type ChangesOutcome } from '../changes/approvalSnapshot';
import type { WorkspaceOf } from '../changes/sessionWorkspace';
import { unknownListCursor, type AppendedEvent, type ServerStore, type SessionListPage, type StoreNotice } from './serverStore';
import type { RetentionCutoffs, Sweepable, SweepResult } from './retention';

export class JournalServerStore implements ServerStore, Sweepable {
  readonly description: string;

  constructor(
    readonly host: SessionHost,
    private readonly dataDir: string,
    /** Where each session's agent works (this process runs them); without it, no session has a record of changes. */
    private readonly workspaceOf?: WorkspaceOf,
  ) {
    this.description = dataDir;
  }

  get limits() {
    return this.host.limits;
  }

  async createSession(request: CreateSessionRequest, agent?: AgentFactory, owner?: SessionOwner | null): Promise<SessionResource> {
    return this.host.createSession(request, agent, owner);
  }

  async getSession(id: string): Promise<SessionResource> {
    return this.host.getSession(id);
  }

  async getOwner(id: string): Promise<SessionOwner | null> {
    return this.host.ownerOf(id);
  }

  async listSessions(limit: number, cursor: string | null, visibility: Visibility = null): Promise<SessionListPage> {
    const all = newestFirst(this.host.listSessions()).filter((s) => isVisible(visibility, this.host.ownerOf(s.id)));
    let start = 0;
    if (cursor !== null) {
      const at = all.findIndex((s) => s.id === cursor);
      if (at < 0) throw unknownListCursor(cursor);
      start = at + 1;
    }
    const data = all.slice(start, start + limit);
    const last = data[data.length - 1];
    return { data, nextCursor: start + data.length < all.length && last ? last.id : null };
  }

  async readEvents(id: string, afterId: string | null, limit?: number): Promise<StoredEventPage> {
    return this.host.readEvents(id, afterId, limit);
  }

  appendEvents(id: string, events: AnyEvent[]): Promise<AppendedEvent[]> {
    return this.host.appendClientEvents(id, events);
  }

  async changesSinceApproval(id: string): Promise<ChangesOutcome> {
    const workspace = this.workspaceOf?.(this.host.getSession(id));
    if (workspace === undefined)
      return { kind: 'no_record', reason: "this server does not know the folder this session's agent works in: no record of changes" };
    return changesSinceApproval(workspace, id);
  }

  archive(id: string): Promise<void> {
    return this.host.archive(id);
  }

  watch(id: string, wake: (notice?: StoreNotice) => void): () => void {
    return this.host.subscribe(id, (notice) => wake(notice));
  }

  async checkReady(): Promise<void> {
    // Every read is answered from memory; a write needs the folder (a volume unmounted under us).
    await fs.access(this.dataDir, constants.W_OK);
  }

  /** Retention: the journal keeps no audit rows (they go to the server's log). */
  async sweep(cutoffs: RetentionCutoffs): Promise<SweepResult> {
    const sessions = cutoffs.archivedBefore === null ? 0 : await this.host.removeArchived(cutoffs.archivedBefore);
    return { sessions, auditRows: 0 };
  }

  async countSessions(): Promise<number> {
    return this.host.listSessions().length;
  }

  close(): Promise<void> {
    return this.host.close();
  }
}

// `ultraplan-server worker`: runs the agents of a PostgreSQL-backed server, apart from the API
// replicas. It claims sessions under leases (store/postgres/leases.ts), renews them with a
// heartbeat, and runs each session (workerSession.ts: its agent read-only as the single-process
// server runs it, what the agent says written through the same database, what clients sent handed
// to it). A worker killed mid-turn stops renewing; once its lease runs out another worker claims
// the session and resumes the agent (its checkpoint, or ACP session/load), or says truthfully that
// the agent stopped: the plan it left can still be decided, and a message continues.
import { randomUUID } from 'node:crypto';
import { openPool } from '../store/postgres/database';
import { checkSchema } from '../store/postgres/migrations';
import { SessionLeases, type ClaimedSession } from '../store/postgres/leases';
import { SessionNotifications } from '../store/postgres/notifications';
import { WorkerSession, type PreparedAgent } from './workerSession';
import { errorMessage } from '../../core/errors';
import { startRetention } from '../store/retention';
import { SessionFolderSweep } from './folderRetention';

export interface WorkerOptions {
  connectionString: string;
  /** The agent for a session, and the folder prepared from its source it works in; throws a reason the person can act on. */
  agentFor(session: ClaimedSession): Promise<PreparedAgent>;
  workerId?: string;
  /** How long a claim holds without a heartbeat (default 5 s). */
  leaseMs?: number;
  /** Sessions this worker runs at once (default 20). */
  maxSessions?: number;
  /** Sessions of one user all workers together run at once (default: half of maxSessions, rounded up). */
  maxSlotsPerUser?: number;
  /** The folders this worker keeps per session (its scratch, its sandboxes), deleted `archivedDays` after the archive. */
  folderRetention?: { parents: readonly string[]; archivedDays: number };
  log: (line: string) => void;
}

export const DEFAULT_LEASE_MS = 5_000;
const CLAIM_INTERVAL_MS = 250;

export class SessionWorker {
  readonly id: string;
  private readonly leaseMs: number;
  private readonly maxSessions: number;
  private readonly maxSlotsPerUser: number;
  private readonly pool;
  private readonly leases: SessionLeases;
  private readonly notifications: SessionNotifications;
  private readonly running = new Map<string, WorkerSession>();
  private readonly timers: NodeJS.Timeout[] = [];
  private claiming = false;
  private closed = false;
  private stopRetention: () => void = () => {};

  constructor(private readonly options: WorkerOptions) {
    this.id = options.workerId ?? `worker_${randomUUID().slice(0, 8)}`;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.maxSessions = options.maxSessions ?? 20;
    this.maxSlotsPerUser = options.maxSlotsPerUser ?? defaultSlotsPerUser(this.maxSessions);
    this.pool = openPool(options.connectionString, options.log);
    this.leases = new SessionLeases(this.pool, this.id, this.leaseMs, options.log);
    this.notifications = new SessionNotifications(options.connectionString, this.pool, options.log);
  }

  async start(): Promise<void> {
    await this.notifications.start();
    // A new session is announced: claim at once rather than at the next tick.
    this.notifications.onAnnouncement((id) => {
      const session = this.running.get(id);
      if (session) void session.catchUp();
      else void this.claimAll();
    });
    this.timers.push(setInterval(() => void this.claimAll(), CLAIM_INTERVAL_MS));
    this.timers.push(setInterval(() => void this.heartbeat(), Math.max(200, Math.floor(this.leaseMs / 3))));
    await this.claimAll();
    const retention = this.options.folderRetention;
    if (retention) {
      this.stopRetention = startRetention(
        new SessionFolderSweep(this.pool, retention.parents),
        { archivedDays: retention.archivedDays, auditDays: null },
        this.options.log,
        { describe: (result) => `${this.id}: deleted the folders of ${result.sessions} archived or deleted session(s)` },
      );
    }
  }

  /** Readiness (health.ts): this worker's own pool reaches the database, which holds our schema. */
  async checkReady(timeoutMs: number): Promise<void> {
    if (this.closed) throw new Error('stopping');
    await checkSchema(this.pool, timeoutMs);
  }

  get sessionCount(): number {
    return this.running.size;
  }

  /** Stops every agent and lets go of the leases (another worker claims them at once). */
  async close(): Promise<void> {
    this.closed = true;
    this.stopRetention();
    for (const timer of this.timers) clearInterval(timer);
    await Promise.all([...this.running.values()].map((s) => s.stop(true)));
    await this.notifications.close();
    await this.pool.end();
  }

  private async claimAll(): Promise<void> {
    if (this.claiming || this.closed) return;
    this.claiming = true;
    try {
      while (!this.closed && this.running.size < this.maxSessions) {
        const claimed = await this.leases.claim(this.maxSlotsPerUser);
        if (!claimed) break;
        this.options.log(`${this.id}: claimed session ${claimed.sessionId} (epoch ${claimed.epoch})`);
        const session = new WorkerSession(claimed, this.leases, this.options.agentFor, this.options.log, () =>
          this.running.delete(claimed.sessionId),
        );
        this.running.set(claimed.sessionId, session);
        void session.begin();
      }
    } catch (err) {
      this.options.log(`${this.id}: claiming failed (${errorMessage(err)}); trying again`);
    } finally {
      this.claiming = false;
    }
  }

  private async heartbeat(): Promise<void> {
    const held = [...this.running.values()].map((s) => s.lease);
    try {
      const lost = await this.leases.renew(held);
      for (const id of lost) {
        this.options.log(`${this.id}: session ${id} is no longer ours (archived, or its lease was taken over); stopping its agent`);
        await this.running.get(id)?.stop(false);
      }
      // Announcements can be lost (a dropped LISTEN connection): what clients sent is read anyway.
      for (const session of this.running.values()) void session.catchUp();
    } catch (err) {
      this.options.log(`${this.id}: renewing leases failed (${errorMessage(err)})`);
    }
  }
}

/** One user may hold half of a worker's slots by default, so another always finds one. */
export function defaultSlotsPerUser(maxSessions: number): number {
  return Math.ceil(maxSessions / 2);
}

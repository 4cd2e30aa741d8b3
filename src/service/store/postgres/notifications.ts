// Wakes whoever reads a session when something of it commits, across processes: one LISTEN
// connection per process. NOTIFY is fast but not a guarantee (the connection can drop; a
// committer can die between its COMMIT and its NOTIFY), so a sweep once a second compares each
// watched session's newest event number and status with what it last saw, and wakes the ones
// that moved. Readers are therefore never more than about a second behind, whatever is lost.
import { Client, type Pool } from 'pg';
import { SESSION_CHANNEL } from './database';
import { errorMessage } from '../../../core/errors';

export const SWEEP_INTERVAL_MS = 500;
const RECONNECT_MAX_MS = 2_000;

type Wake = () => void;

export class SessionNotifications {
  private readonly watchers = new Map<string, Set<Wake>>();
  /** Called for every announced session, watched or not (a worker looking for work). */
  private readonly everything = new Set<(id: string) => void>();
  private readonly seen = new Map<string, string>();
  private client: Client | null = null;
  private connected = false;
  private closed = false;
  private reconnectDelay = 100;
  private readonly sweepTimer: NodeJS.Timeout;
  private sweeping = false;

  constructor(
    private readonly connectionString: string,
    private readonly pool: Pool,
    private readonly log: (line: string) => void,
  ) {
    this.sweepTimer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  /** Connects the LISTEN connection (and keeps reconnecting it until close). */
  async start(): Promise<void> {
    await this.connect();
  }

  get listening(): boolean {
    return this.connected;
  }

  watch(id: string, wake: Wake): () => void {
    let set = this.watchers.get(id);
    if (!set) this.watchers.set(id, (set = new Set()));
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.watchers.get(id) === set) {
        this.watchers.delete(id);
        this.seen.delete(id);
      }
    };
  }

  onAnnouncement(listener: (id: string) => void): () => void {
    this.everything.add(listener);
    return () => this.everything.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweepTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private wake(id: string): void {
    for (const wake of [...(this.watchers.get(id) ?? [])]) wake();
    for (const listener of [...this.everything]) listener(id);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.connectionString, connectionTimeoutMillis: 5_000 });
    client.on('notification', (message) => {
      if (message.channel === SESSION_CHANNEL && message.payload) this.wake(message.payload);
    });
    const lost = (why: string) => {
      if (this.client !== client) return;
      this.client = null;
      this.connected = false;
      client.end().catch(() => {});
      if (this.closed) return;
      this.log(`postgres: the notification connection dropped (${why}); reconnecting, readers poll meanwhile`);
      this.scheduleReconnect();
    };
    client.on('error', (err) => lost(err.message));
    client.on('end', () => lost('closed'));
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${SESSION_CHANNEL}`);
    } catch (err) {
      lost(errorMessage(err));
      throw err;
    }
    this.connected = true;
    this.reconnectDelay = 100;
    // Whatever was announced while nobody listened is read now.
    for (const id of [...this.watchers.keys()]) this.wake(id);
  }

  private scheduleReconnect(): void {
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(RECONNECT_MAX_MS, delay * 2);
    setTimeout(() => {
      if (this.closed || this.client) return;
      this.connect().catch(() => {});
    }, delay).unref();
  }

  /** One query for every watched session: wakes those whose newest event or status moved. */
  private async sweep(): Promise<void> {
    if (this.sweeping || this.closed || this.watchers.size === 0) return;
    this.sweeping = true;
    try {
      const ids = [...this.watchers.keys()];
      const { rows } = await this.pool.query<{ id: string; mark: string }>(
        "SELECT id, last_seq::text || ' ' || status AS mark FROM sessions WHERE id = ANY($1::text[])",
        [ids],
      );
      for (const { id, mark } of rows) {
        const before = this.seen.get(id);
        if (!this.watchers.has(id)) continue;
        this.seen.set(id, mark);
        // A first sighting wakes too: something may have committed, unannounced, since the reader last read.
        if (before !== mark) this.wake(id);
      }
    } catch {
      // The database is away; the next sweep tries again.
    } finally {
      this.sweeping = false;
    }
  }
}

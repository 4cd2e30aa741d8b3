// Where a SessionHost keeps its sessions. Two stores, one interface:
//  - MemorySessionStore: nothing outlives the process (the embedded backend: the extension host
//    owns its sessions and re-attaches by cursor, it never needs to re-read them from disk).
//  - FileSessionStore: the self-hosted server. One folder per session holding
//      meta.json   the creation data, written once atomically (tmp file + fsync + rename),
//      log.jsonl   an append-only journal of records: events, status changes, agent checkpoints
//                  and the agent's cursor (the newest client event it was given).
//    Why this and not an embedded database: the data is exactly an append-only log per session
//    that is read back whole at start, so a JSONL journal is the simplest thing that is durable
//    (fsync per append batch), inspectable with `cat`, and needs no native module (sqlite would
//    need a native build or Node 22). Everything that changes after creation is a journal record,
//    so one file is the single source of truth and its order is the order things happened; no
//    second file can disagree with it. A crash can only tear the last line: on load a torn tail
//    is cut off with a log line, never fatal. Each line carries a checksum; a damaged line in the
//    middle (unreadable, or failing its checksum) is skipped with a log line and reported to the
//    host, which closes what it may have decided.
import { createHash, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { errorMessage } from '../../core/errors';
import { SessionContextSchema, SessionStatusSchema, type SessionStatus } from '../../core/protocol';
import { SessionOwnerSchema } from '../identity/sessionOwner';

/** An event as stored: the wire event plus its server-assigned id. */
export type StoredEvent = { type: string; id: string } & Record<string, unknown>;

/** The creation data of a session; never changes once written. */
export const SessionMetaSchema = z.looseObject({
  id: z.string().min(1),
  title: z.string(),
  created_at: z.string(),
  environment_id: z.string().nullable(),
  session_context: SessionContextSchema.nullable(),
  /** For people: which agent runs the session ("Scripted demo (examples/demo.json)"). */
  agent_label: z.string().optional(),
  /** Who created it (absent: the shared token, or a journal older than identity). */
  owner: SessionOwnerSchema.nullable().optional(),
});
export type SessionMeta = z.infer<typeof SessionMetaSchema>;

/** One line of a session's journal. */
export type LogRecord =
  | { t: 'event'; event: StoredEvent; at?: string }
  | { t: 'status'; status: SessionStatus; at: string }
  | { t: 'checkpoint'; state: unknown }
  /** The newest client event the session's agent was given (runtime/agentRuntime.ts). */
  | { t: 'delivered'; seq: number };

const LogRecordSchema = z.discriminatedUnion('t', [
  z.object({ t: z.literal('event'), event: z.looseObject({ type: z.string(), id: z.string() }), at: z.string().optional() }),
  z.object({ t: z.literal('status'), status: SessionStatusSchema, at: z.string() }),
  z.object({ t: z.literal('checkpoint'), state: z.unknown() }),
  z.object({ t: z.literal('delivered'), seq: z.number().int().nonnegative() }),
]);

export interface LoadedSession {
  meta: SessionMeta;
  records: LogRecord[];
  /** Journal lines (1-based) that were skipped: unreadable, or failing their checksum. */
  damagedLines: number[];
}

export interface SessionStore {
  /** Every stored session with its journal, in creation order. Never fails on a damaged file. */
  load(): Promise<LoadedSession[]>;
  /** Stores a new session's creation data (durable when it resolves). */
  create(meta: SessionMeta): Promise<void>;
  /** Appends records to a session's journal (durable when it resolves). */
  append(sessionId: string, records: readonly LogRecord[]): Promise<void>;
  /** Deletes a session and its journal for good (retention of archived sessions). */
  remove(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

export class MemorySessionStore implements SessionStore {
  async load(): Promise<LoadedSession[]> {
    return [];
  }
  async create(): Promise<void> {}
  async append(): Promise<void> {}
  async remove(): Promise<void> {}
  async close(): Promise<void> {}
}

export interface FileSessionStoreOptions {
  /** fsync every append batch (default true). Off only for throwaway data. */
  fsync?: boolean;
  log?: (line: string) => void;
}

const SESSION_DIR_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;

export class FileSessionStore implements SessionStore {
  private readonly sessionsDir: string;
  private readonly fsync: boolean;
  private readonly log: (line: string) => void;

  constructor(dataDir: string, options: FileSessionStoreOptions = {}) {
    this.sessionsDir = path.join(dataDir, 'sessions');
    this.fsync = options.fsync ?? true;
    this.log = options.log ?? (() => {});
  }

  async load(): Promise<LoadedSession[]> {
    await fs.mkdir(this.sessionsDir, { recursive: true });
    const names = await fs.readdir(this.sessionsDir);
    const loaded: LoadedSession[] = [];
    for (const name of names) {
      if (!SESSION_DIR_PATTERN.test(name)) continue;
      const session = await this.loadOne(name);
      if (session) loaded.push(session);
    }
    loaded.sort((a, b) => (a.meta.created_at < b.meta.created_at ? -1 : a.meta.created_at > b.meta.created_at ? 1 : 0));
    return loaded;
  }

  private async loadOne(name: string): Promise<LoadedSession | undefined> {
    const dir = path.join(this.sessionsDir, name);
    let meta: SessionMeta;
    try {
      meta = SessionMetaSchema.parse(JSON.parse(await fs.readFile(path.join(dir, 'meta.json'), 'utf8')));
    } catch (err) {
      // A session folder without a readable meta.json was never acknowledged to a client
      // (create() writes meta.json before it resolves), so skipping it loses nothing promised.
      this.log(`store: skipping ${name}: unreadable meta.json (${oneLineError(err)})`);
      return undefined;
    }
    if (meta.id !== name) {
      this.log(`store: skipping ${name}: meta.json names session ${meta.id}`);
      return undefined;
    }
    const logPath = path.join(dir, 'log.jsonl');
    let text: string;
    try {
      text = await fs.readFile(logPath, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      text = '';
    }
    const lastNewline = text.lastIndexOf('\n');
    if (lastNewline !== text.length - 1) {
      // A crash tore the last append. Its batch was never acknowledged (we answer after fsync),
      // so cut it off; otherwise the next append would glue a record onto the torn line.
      const keep = lastNewline + 1;
      this.log(`store: ${name}: dropping a torn last line (${text.length - keep} bytes) left by a crash`);
      await fs.truncate(logPath, Buffer.byteLength(text.slice(0, keep), 'utf8'));
      text = text.slice(0, keep);
    }
    const records: LogRecord[] = [];
    const damagedLines: number[] = [];
    const lines = text.split('\n');
    // Lines written before journals had checksums carry none; from the first one that does, a
    // line without one is as damaged as a line whose checksum fails.
    let checksummed = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (!line) continue;
      try {
        const decoded = decodeLine(line, checksummed);
        checksummed ||= decoded.checksummed;
        records.push(LogRecordSchema.parse(JSON.parse(decoded.json)) as LogRecord);
      } catch (err) {
        damagedLines.push(i + 1);
        this.log(`store: ${name}: skipping damaged line ${i + 1} (${oneLineError(err)})`);
      }
    }
    return { meta, records, damagedLines };
  }

  async create(meta: SessionMeta): Promise<void> {
    if (!SESSION_DIR_PATTERN.test(meta.id)) throw new Error(`store: unusable session id ${JSON.stringify(meta.id)}`);
    const dir = path.join(this.sessionsDir, meta.id);
    await fs.mkdir(dir, { recursive: true });
    await writeFileAtomic(path.join(dir, 'meta.json'), JSON.stringify(meta, null, 2) + '\n');
    await fs.writeFile(path.join(dir, 'log.jsonl'), '', { flag: 'a' });
    if (this.fsync) await fsyncDir(dir);
    if (this.fsync) await fsyncDir(this.sessionsDir);
  }

  async append(sessionId: string, records: readonly LogRecord[]): Promise<void> {
    if (records.length === 0) return;
    let text = records.map(encodeLine).join('\n') + '\n';
    // 'a+': appends, and lets us read the last byte.
    const handle = await fs.open(path.join(this.sessionsDir, sessionId, 'log.jsonl'), 'a+');
    try {
      const { size } = await handle.stat();
      // A batch starts on a fresh line even if an earlier failure could not be cut back: the
      // leftover then stays a line of its own (skipped at load) instead of swallowing this one.
      if (size > 0 && !(await endsWithNewline(handle, size))) text = `\n${text}`;
      try {
        await handle.writeFile(text, 'utf8');
        if (this.fsync) await handle.datasync();
      } catch (err) {
        // A failed write (a full disk) can leave part of the batch behind; the next acknowledged
        // batch would be glued onto it and lost at load. Cut back to where this batch began.
        await handle
          .truncate(size)
          .catch((cut: unknown) => this.log(`store: ${sessionId}: cannot cut a failed append back (${oneLineError(cut)})`));
        throw err;
      }
    } finally {
      await handle.close();
    }
  }

  async remove(sessionId: string): Promise<void> {
    if (!SESSION_DIR_PATTERN.test(sessionId)) throw new Error(`store: unusable session id ${JSON.stringify(sessionId)}`);
    // Renamed out of the sessions' name pattern first (one atomic step), so a crash during the
    // removal leaves a folder load() skips, never half a session.
    const doomed = path.join(this.sessionsDir, `.removing-${sessionId}-${randomUUID().slice(0, 8)}`);
    await fs.rename(path.join(this.sessionsDir, sessionId), doomed);
    if (this.fsync) await fsyncDir(this.sessionsDir);
    await fs.rm(doomed, { recursive: true, force: true });
  }

  async close(): Promise<void> {}
}

// Each journal line ends with a checksum of the rest: `{…,"sum":"<16 hex>"}`, the record's own
// JSON with one more field, so the file stays JSON lines. A line damaged on disk that is still
// valid JSON (a flipped digit in a request_id) would otherwise be read as a different truth.
const SUM_SUFFIX = /,"sum":"([0-9a-f]{16})"\}$/;

function lineSum(json: string): string {
  return createHash('sha256').update(json, 'utf8').digest('hex').slice(0, 16);
}

export function encodeLine(record: LogRecord): string {
  const json = JSON.stringify(record);
  return `${json.slice(0, -1)},"sum":"${lineSum(json)}"}`;
}

/** The record's JSON from a journal line, checked against its checksum; throws when damaged. */
export function decodeLine(line: string, checksumRequired: boolean): { json: string; checksummed: boolean } {
  const match = SUM_SUFFIX.exec(line);
  if (!match) {
    if (checksumRequired) throw new Error('no checksum, after lines that have one');
    return { json: line, checksummed: false };
  }
  const json = `${line.slice(0, match.index)}}`;
  if (lineSum(json) !== match[1]) throw new Error('checksum mismatch');
  return { json, checksummed: true };
}

async function endsWithNewline(handle: fs.FileHandle, size: number): Promise<boolean> {
  const last = Buffer.alloc(1);
  const { bytesRead } = await handle.read(last, 0, 1, size - 1);
  return bytesRead === 1 && last[0] === 0x0a;
}

async function writeFileAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}.${randomUUID()}.tmp`;
  const handle = await fs.open(tmp, 'w');
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.rename(tmp, file);
}

async function fsyncDir(dir: string): Promise<void> {
  // Makes a new file or rename durable. Some platforms refuse to open a directory; that only
  // weakens durability there, it must not fail the write.
  try {
    const handle = await fs.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    /* best effort */
  }
}

/** One line for the store's log: a parse error's issues, else the error's first line. */
function oneLineError(err: unknown): string {
  if (err instanceof z.ZodError) return z.prettifyError(err).replace(/\s*\n\s*/g, ' ');
  const [first = ''] = errorMessage(err).split('\n');
  return first;
}

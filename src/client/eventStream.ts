// The streaming transport: one live stream per session (`GET /v1/code/sessions/{id}/events/stream`,
// docs/protocol.md section 9), opened lazily after the first HTTP read, buffering `client_event` frames
// so the poller's reads cost no request and its waits end on each frame. The stream carries no
// session status, so status reads stay on HTTP. After a drop it resumes from the last sequence
// number it saw; where the server has no stream (404/405) or a session's stream keeps failing it
// falls back to plain polling (3 s). The poller is fed the same batches either way: the buffer is
// only served when it provably continues the poller's cursor, otherwise the read goes over HTTP.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { STREAM_EVENT_FRAME, readEventItem, sequenceAfter, sortEventItems } from '../core/codeSessions';
import { SessionsError } from '../core/errors';
import type { SessionStatus } from '../core/protocol';
import type { SessionTransport } from '../core/transport';
import type { EventsReadResult, SessionsClient } from './sessionsClient';

export interface StreamingTransportOptions {
  client: SessionsClient;
  /** Connections in a row that fail (no event and not open long) before a session falls back to polling. */
  maxConsecutiveFailures?: number;
  /** Delay before the first reconnect; doubles with each failure up to maxBackoffMs. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** A stream silent this long (no frame, no keep-alive) is treated as dropped. Server keep-alive: 15 s. */
  idleTimeoutMs?: number;
  /** A connection open this long counts as healthy even if it brought no event. */
  stableAfterMs?: number;
  /** Unread events kept per session; beyond it the stream is closed and reads go over HTTP. */
  maxBufferedEvents?: number;
  log?: (line: string) => void;
}

export type StreamMode =
  | 'idle' // not opened yet (or closed by its reader's abort; reopens lazily)
  | 'connecting'
  | 'open'
  | 'backoff' // dropped; reconnecting after a delay
  | 'polling' // fell back to polling for good
  | 'closed'; // transport disposed

export interface StreamStats {
  mode: StreamMode;
  /** Connections whose headers arrived. */
  connects: number;
  /** Connections that ended or failed while the stream was wanted. */
  drops: number;
  /** Failures in a row right now. */
  consecutiveFailures: number;
  /** Reads answered from the stream's buffer / over HTTP. */
  readsFromStream: number;
  readsOverHttp: number;
  /** Event frames dropped because their id was at or before one already seen (resume overlap). */
  duplicateFrames: number;
  /** Why the session fell back to polling, for people. */
  fallbackReason?: string;
}

interface BufferedFrame {
  id: string;
  /** The parsed event; undefined when the frame's data was not JSON (counted as invalid on read). */
  item: unknown;
}

/** One session's stream: connection loop, buffer and waiters. */
class SessionEventStream {
  mode: StreamMode = 'idle';
  readonly stats: StreamStats = {
    mode: 'idle',
    connects: 0,
    drops: 0,
    consecutiveFailures: 0,
    readsFromStream: 0,
    readsOverHttp: 0,
    duplicateFrames: 0,
  };
  /** The cursor the buffer continues from. */
  private base: string | null = null;
  private frames: BufferedFrame[] = [];
  /** The newest id received (or the base); where a reconnect resumes. */
  private lastSeenId: string | null = null;
  private readonly waiters = new Set<() => void>();
  private controller: AbortController | undefined;

  constructor(
    private readonly sessionId: string,
    private readonly transport: StreamingTransport,
    private readonly settings: Required<Omit<StreamingTransportOptions, 'client' | 'log'>>,
    private readonly log: (line: string) => void,
  ) {}

  /** Serving from the buffer is only right while connected. */
  get live(): boolean {
    return this.mode === 'open';
  }

  canServe(afterId: string | null): boolean {
    return this.live && (afterId === this.base || (afterId !== null && this.indexOf(afterId) >= 0));
  }

  /** The buffered events after `afterId` (which canServe accepted); trims what was read. */
  take(afterId: string | null): EventsReadResult {
    const from = afterId === this.base ? 0 : this.indexOf(afterId as string) + 1;
    const taken = this.frames.slice(from);
    this.frames = [];
    const lastId = taken.length > 0 ? (taken[taken.length - 1] as BufferedFrame).id : afterId;
    this.base = lastId;
    const sorted = sortEventItems(taken.map((f) => f.item));
    if (sorted.invalid > 0)
      this.log(`session ${this.sessionId}: left out ${sorted.invalid} streamed item(s) that are not objects with a string type`);
    this.stats.readsFromStream++;
    return { events: sorted.events, lastId, pages: 0, hasMore: false, skipped: sorted.skipped, invalid: sorted.invalid };
  }

  /** After an HTTP read reached `cursor`: start the stream there, or move an outdated buffer up to it. */
  afterHttpRead(cursor: string | null): void {
    this.stats.readsOverHttp++;
    if (this.mode === 'idle') {
      this.base = cursor;
      this.lastSeenId = cursor;
      this.frames = [];
      this.start();
      return;
    }
    // Sequence numbers grow: a cursor past everything buffered means the buffer is stale;
    // continuing from the cursor drops the overlap the stream will resend.
    if (cursor !== null && sequenceAfter(cursor, this.lastSeenId)) {
      this.base = cursor;
      this.lastSeenId = cursor;
      this.frames = [];
    }
  }

  /**
   * Resolves at once if events are buffered (whatever order the reader
   * reads them in), else on the next frame, after timeoutMs, or when signal aborts.
   */
  waitForActivity(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.frames.length > 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      this.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Stops the connection. `to` 'idle' lets a later read reopen it. */
  stop(to: 'idle' | 'polling' | 'closed', reason?: string): void {
    this.controller?.abort(new DOMException('stream closed', 'AbortError'));
    this.controller = undefined;
    this.frames = [];
    this.setMode(to);
    if (to === 'polling' && reason) {
      this.stats.fallbackReason = reason;
      this.log(`session ${this.sessionId}: falling back to polling: ${reason}`);
    }
  }

  private start(): void {
    const controller = new AbortController();
    this.controller = controller;
    this.setMode('connecting');
    void this.run(controller.signal);
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const openedAt = Date.now();
      let gotEvent = false;
      let failure: unknown;
      this.setMode('connecting');
      try {
        const response = await this.transport.client.openEventStream(this.sessionId, this.lastSeenId, signal);
        if (signal.aborted) break;
        this.stats.connects++;
        this.setMode('open');
        await this.consume(response, signal, () => {
          gotEvent = true;
        });
      } catch (err) {
        failure = err;
      }
      if (signal.aborted) return;
      this.stats.drops++;
      if (failure instanceof SessionsError && (failure.status === 404 || failure.status === 405)) {
        this.transport.markStreamUnavailable(`the server has no event stream (HTTP ${failure.status})`);
        this.stop('polling', `the server has no event stream (HTTP ${failure.status})`);
        return;
      }
      const healthy = gotEvent || Date.now() - openedAt >= this.settings.stableAfterMs;
      this.stats.consecutiveFailures = healthy ? 0 : this.stats.consecutiveFailures + 1;
      if (this.stats.consecutiveFailures >= this.settings.maxConsecutiveFailures) {
        const why = failure instanceof Error ? failure.message : 'the stream ended without events';
        this.stop('polling', `the stream failed ${this.stats.consecutiveFailures} times in a row (last: ${why})`);
        return;
      }
      this.setMode('backoff');
      const delay = healthy
        ? this.settings.initialBackoffMs
        : Math.min(this.settings.maxBackoffMs, this.settings.initialBackoffMs * 2 ** this.stats.consecutiveFailures);
      await abortableSleep(delay, signal);
    }
  }

  private async consume(response: Response, signal: AbortSignal, onEvent: () => void): Promise<void> {
    const body = response.body;
    if (!body) throw new SessionsError('bad_response', 'The event stream answered without a body.');
    const idle = new AbortController();
    let idleTimer = setTimeout(() => idle.abort(), this.settings.idleTimeoutMs);
    const touch = (): void => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => idle.abort(), this.settings.idleTimeoutMs);
    };
    const parser = createParser({
      onEvent: (message) => {
        if (this.onFrame(message)) onEvent();
      },
      onError: (err) => this.log(`session ${this.sessionId}: unreadable stream line (${err.type})`),
    });
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    const cancel = (): void => void reader.cancel().catch(() => {});
    idle.signal.addEventListener('abort', cancel, { once: true });
    signal.addEventListener('abort', cancel, { once: true });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        touch();
        parser.feed(value);
      }
      if (idle.signal.aborted) throw new SessionsError('transient', `The event stream was silent for ${this.settings.idleTimeoutMs} ms.`);
    } finally {
      clearTimeout(idleTimer);
      signal.removeEventListener('abort', cancel);
      cancel();
    }
  }

  /** Handles one SSE message; true when it was a new event. */
  private onFrame(message: EventSourceMessage): boolean {
    if (message.event !== STREAM_EVENT_FRAME) return false;
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      data = undefined;
    }
    const frame = readEventItem(data);
    const id = message.id || (frame?.sequence ?? '');
    if (id === '') {
      this.log(`session ${this.sessionId}: ignored a stream event without a sequence number (it could not be resumed)`);
      return false;
    }
    if (!sequenceAfter(id, this.lastSeenId)) {
      this.stats.duplicateFrames++;
      return false;
    }
    // A frame without a payload is kept as an invalid item, so the cursor still moves past it.
    const item: unknown = frame?.payload;
    this.frames.push({ id, item });
    this.lastSeenId = id;
    if (this.frames.length > this.settings.maxBufferedEvents) {
      // Nobody is reading: stop buffering; the next read catches up over HTTP and reopens.
      this.log(`session ${this.sessionId}: more than ${this.settings.maxBufferedEvents} unread streamed events; closing the stream`);
      this.stop('idle');
      return true;
    }
    this.wake();
    return true;
  }

  private indexOf(id: string): number {
    for (let i = this.frames.length - 1; i >= 0; i--) if ((this.frames[i] as BufferedFrame).id === id) return i;
    return -1;
  }

  private setMode(mode: StreamMode): void {
    if (this.mode === 'closed') return;
    this.mode = mode;
    this.stats.mode = mode;
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** SessionTransport over SSE with polling fallback. One instance serves many sessions. */
export class StreamingTransport implements SessionTransport {
  readonly client: SessionsClient;
  private readonly sessions = new Map<string, SessionEventStream>();
  private readonly settings: Required<Omit<StreamingTransportOptions, 'client' | 'log'>>;
  private readonly log: (line: string) => void;
  private unavailableReason: string | undefined;
  private readonly boundSignals = new WeakMap<AbortSignal, Set<string>>();
  private disposed = false;

  constructor(options: StreamingTransportOptions) {
    this.client = options.client;
    this.log = options.log ?? (() => {});
    this.settings = {
      maxConsecutiveFailures: options.maxConsecutiveFailures ?? 5,
      initialBackoffMs: options.initialBackoffMs ?? 100,
      maxBackoffMs: options.maxBackoffMs ?? 5_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 45_000,
      stableAfterMs: options.stableAfterMs ?? 10_000,
      maxBufferedEvents: options.maxBufferedEvents ?? 10_000,
    };
  }

  async readEvents(sessionId: string, afterId: string | null, signal?: AbortSignal): Promise<EventsReadResult> {
    const stream = this.streamFor(sessionId, signal);
    if (stream?.canServe(afterId)) return stream.take(afterId);
    const read = await this.client.readEventsPages(sessionId, afterId, { signal });
    if (stream && !signal?.aborted) stream.afterHttpRead(read.lastId);
    return read;
  }

  async getStatus(sessionId: string, signal?: AbortSignal): Promise<SessionStatus | string> {
    // The stream carries no status: it is read over HTTP, where the service keeps it.
    return this.client.getStatus(sessionId, signal);
  }

  async waitForActivity(sessionId: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const stream = this.streamFor(sessionId, signal);
    if (stream) return stream.waitForActivity(timeoutMs, signal);
    await abortableSleep(timeoutMs, signal);
  }

  /** How a session's stream is doing (tests, bench, diagnostics). */
  streamStats(sessionId: string): StreamStats | undefined {
    const stats = this.sessions.get(sessionId)?.stats;
    return stats ? { ...stats } : undefined;
  }

  /** Closes one session's stream (e.g. after archive); a later read may reopen it. */
  closeSession(sessionId: string): void {
    const stream = this.sessions.get(sessionId);
    if (!stream) return;
    stream.stop('closed');
    this.sessions.delete(sessionId);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    for (const id of [...this.sessions.keys()]) this.closeSession(id);
  }

  /** A 404/405 on the stream route means the server has none: stop trying for every session. */
  markStreamUnavailable(reason: string): void {
    if (this.unavailableReason === undefined) this.log(`event stream unavailable at ${this.client.baseUrl}: ${reason}`);
    this.unavailableReason = reason;
  }

  /** The session's stream, created lazily; undefined when streaming is off for it. */
  private streamFor(sessionId: string, signal: AbortSignal | undefined): SessionEventStream | undefined {
    if (this.disposed || signal?.aborted) return undefined;
    let stream = this.sessions.get(sessionId);
    if (!stream) {
      if (this.unavailableReason !== undefined) return undefined;
      stream = new SessionEventStream(sessionId, this, this.settings, this.log);
      this.sessions.set(sessionId, stream);
    }
    if (stream.mode === 'polling') return undefined;
    if (signal) this.closeOnAbort(sessionId, signal);
    return stream;
  }

  /** The reader's abort closes the stream it was following (once per signal and session). */
  private closeOnAbort(sessionId: string, signal: AbortSignal): void {
    let ids = this.boundSignals.get(signal);
    if (!ids) {
      ids = new Set();
      this.boundSignals.set(signal, ids);
    }
    if (ids.has(sessionId)) return;
    ids.add(sessionId);
    signal.addEventListener(
      'abort',
      () => {
        const stream = this.sessions.get(sessionId);
        if (stream && stream.mode !== 'polling') stream.stop('idle');
      },
      { once: true },
    );
  }
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}

// Feeds an event stream from the store: read after the cursor, write, and again whenever the store
// says something of the session committed. The watch starts before the first read, so nothing
// committed in between is missed; the cursor skips what was already written, so nothing is sent
// twice. The same loop serves the journal (woken in process) and PostgreSQL (woken by NOTIFY or
// the sweep, on whichever replica the client reached).
import type { StoredEvent } from '../host/sessionHost';
import type { ServerStore, StoreNotice } from '../store/serverStore';
import { errorMessage } from '../../core/errors';

/** One open event stream: frames are written until it ends. */
export interface EventStreamWriter {
  write(frame: string): void;
  end(): void;
  readonly ended: boolean;
}

export interface FollowHandlers {
  event(event: StoredEvent): void;
  /** The session's status, on the first read and whenever it changed since. */
  status(status: string): void;
}

const PAGE = 1000;
/** After a failed read (the database away), try again this soon even if nothing wakes us. */
const RETRY_MS = 500;

/** Follows session `id` from `cursor` until the stream ends; returns the stop (call it from onEnd). */
export function followSession(
  store: ServerStore,
  id: string,
  cursor: string | null,
  stream: EventStreamWriter,
  handlers: FollowHandlers,
  log: (line: string) => void,
): () => void {
  // One item at a time, in arrival order: a read of everything after the cursor, or a change the
  // store pushed itself (the journal pushes each commit, so every status change is seen in order
  // with the events around it; PostgreSQL only says "read again").
  const queue: Array<StoreNotice | undefined> = [undefined];
  let draining = false;
  let lastStatus: string | undefined;
  let retry: NodeJS.Timeout | undefined;
  let failing = false;

  const writeEvent = (event: StoredEvent): void => {
    if (cursor !== null && event.id <= cursor) return;
    cursor = event.id;
    handlers.event(event);
  };
  const writeStatus = (status: string): void => {
    if (status === lastStatus) return;
    lastStatus = status;
    handlers.status(status);
  };
  const readAll = async (): Promise<void> => {
    for (let guard = 0; guard < 1_000_000 && !stream.ended; guard++) {
      const page = await store.readEvents(id, cursor, PAGE);
      for (const event of page.data) writeEvent(event);
      if (!page.has_more) break;
    }
    if (!stream.ended) writeStatus((await store.getSession(id)).session_status);
  };
  const drain = async (): Promise<void> => {
    if (draining) return;
    draining = true;
    try {
      while (queue.length > 0 && !stream.ended) {
        const item = queue[0];
        if (item === undefined) await readAll();
        else {
          if (item.event) writeEvent(item.event);
          if (item.status) writeStatus(item.status);
        }
        queue.shift();
      }
      failing = false;
    } catch (err) {
      // The item stays queued and is tried again (the database may be restarting).
      if (!failing) log(`stream ${id}: reading failed (${errorMessage(err)}); retrying`);
      failing = true;
      clearTimeout(retry);
      retry = setTimeout(() => void drain(), RETRY_MS);
    } finally {
      draining = false;
    }
  };
  const unwatch = store.watch(id, (notice) => {
    if (notice === undefined && queue.at(-1) === undefined && queue.length > 1) return; // a read is queued already
    queue.push(notice);
    void drain();
  });
  void drain();
  return () => {
    clearTimeout(retry);
    unwatch();
  };
}

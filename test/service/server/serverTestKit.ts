// HTTP helpers for tests against the real server process (plain fetch, no client library, so
// these tests check the wire itself).
import { strict as assert } from 'node:assert';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { ServerProcess } from '../../support/serverProcess';
import { createRequest } from '../hostTestKit';
import { waitFor } from '../../support/wait';

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

export async function call(
  server: ServerProcess,
  method: string,
  path: string,
  body?: unknown,
  init: { headers?: Record<string, string>; raw?: string } = {},
): Promise<Answer> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: init.headers ?? server.headers(),
    ...(init.raw !== undefined ? { body: init.raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* keep the text */
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

/** An error answer in the protocol's shape, with its status, type and message. */
export function assertError(answer: { status: number; body: any }, status: number, type: string, message: RegExp): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.equal(answer.body?.type, 'error');
  assert.equal(answer.body.error.type, type);
  assert.match(answer.body.error.message, message);
}

export async function createSession(server: ServerProcess, prompt = 'Plan it'): Promise<string> {
  const answer = await call(server, 'POST', '/v1/sessions', createRequest(prompt));
  if (answer.status !== 200) throw new Error(`create failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.id as string;
}

/** Every stored event, page by page. */
export async function allEvents(server: ServerProcess, id: string, limit = 1000): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const query: string = cursor ? `?after_id=${encodeURIComponent(cursor)}&limit=${limit}` : `?limit=${limit}`;
    const answer = await call(server, 'GET', `/v1/sessions/${id}/events${query}`);
    if (answer.status !== 200) throw new Error(`events failed: ${answer.status} ${JSON.stringify(answer.body)}`);
    out.push(...answer.body.data);
    cursor = answer.body.last_id ?? cursor;
    if (!answer.body.has_more) break;
  }
  return out;
}

/** Polls GET /v1/sessions/{id} until the status is reached (bounded). */
export async function waitForStatus(server: ServerProcess, id: string, status: string, timeoutMs = 8000): Promise<void> {
  await waitFor(async () => (await call(server, 'GET', `/v1/sessions/${id}`)).body?.session_status, {
    message: `session ${id} to reach ${status}`,
    timeoutMs,
    until: (now) => now === status,
  });
}

export interface StreamFrame {
  kind: 'event' | 'status' | 'comment';
  id?: string;
  data?: any;
  comment?: string;
}

/** Opens the SSE stream and collects frames until `until` says stop, the stream ends, or timeout. */
export async function readStream(
  server: ServerProcess,
  id: string,
  options: { afterId?: string; lastEventId?: string; until?: (frames: StreamFrame[]) => boolean; timeoutMs?: number } = {},
): Promise<{ frames: StreamFrame[]; status: number; contentType: string | null; ended: boolean }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 5000);
  const headers = server.headers(options.lastEventId ? { 'last-event-id': options.lastEventId } : {});
  const query = options.afterId ? `?after_id=${encodeURIComponent(options.afterId)}` : '';
  const frames: StreamFrame[] = [];
  let ended = false;
  let status = 0;
  let contentType: string | null = null;
  try {
    const response = await fetch(`${server.url}/v1/sessions/${id}/events/stream${query}`, { headers, signal: controller.signal });
    status = response.status;
    contentType = response.headers.get('content-type');
    if (!response.ok || !response.body) return { frames, status, contentType, ended: true };
    const parser = createParser({
      onEvent: (e: EventSourceMessage) => {
        if (e.event === 'status') frames.push({ kind: 'status', data: JSON.parse(e.data) });
        else frames.push({ kind: 'event', ...(e.id !== undefined ? { id: e.id } : {}), data: JSON.parse(e.data) });
      },
      onComment: (comment) => frames.push({ kind: 'comment', comment }),
    });
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      parser.feed(decoder.decode(value, { stream: true }));
      if (options.until?.(frames)) break;
    }
    await reader.cancel().catch(() => {});
  } catch (err) {
    if (!controller.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return { frames, status, contentType, ended };
}

/** Polls the event log until `done(events)` holds (bounded); returns those events. */
export async function waitForEvents(server: ServerProcess, id: string, done: (events: any[]) => boolean, timeoutMs = 8000): Promise<any[]> {
  return waitFor(() => allEvents(server, id), {
    message: `the awaited events of session ${id}`,
    timeoutMs,
    until: done,
  });
}

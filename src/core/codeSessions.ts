// The current Sessions wire, `/v1/code/sessions` (docs/protocol.md section 9), as Claude Code 2.1.332
// sends and reads it: wrapped event payloads with sequence numbers and a cursor, the session in a
// `{session}` envelope with `status` and `worker_status`. Our own server serves the same shapes,
// so one client speaks to both. Pure: schemas and conversions only.
import * as z from 'zod';
import {
  AnyEventSchema,
  SKIPPED_EVENT_TYPES,
  SessionContextSchema,
  type AnyEvent,
  type CreateSessionRequest,
  type SessionResource,
} from './protocol';

/** `anthropic-client-platform` names the calling product (Claude Code sends `claude_code_vscode`). */
export const CLIENT_PLATFORM = 'ultraplan_vscode';
/** The User-Agent's product name; the version follows a slash. */
export const USER_AGENT_PRODUCT = 'ultraplan-vscode';

// ---------------------------------------------------------------------------------------------
// Ids: `session_X` and `cse_X` name the same session; the current wire uses `cse_`, links `session_`.

export function toCodeSessionId(id: string): string {
  return id.startsWith('session_') ? `cse_${id.slice('session_'.length)}` : id;
}

export function toLinkSessionId(id: string): string {
  return id.startsWith('cse_') ? `session_${id.slice('cse_'.length)}` : id;
}

// ---------------------------------------------------------------------------------------------
// Sessions

export const CodeSessionSchema = z.looseObject({
  id: z.string().min(1),
  title: z.string().nullable().optional(),
  /** active, archived, paused, …; only `archived` changes the phase. */
  status: z.string().optional(),
  worker_status: z.string().nullable().optional(),
  environment_id: z.string().nullable().optional(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
  last_event_at: z.string().optional(),
  config: SessionContextSchema.nullable().optional(),
});
export type CodeSession = z.infer<typeof CodeSessionSchema>;

export const CodeSessionEnvelopeSchema = z.looseObject({ session: CodeSessionSchema });

/**
 * GET /v1/code/sessions: a page of sessions, newest first, as Claude Code reads it (`?limit=` and
 * `&cursor=<next_cursor>`). Items are kept loosely: one malformed item is left out by the reader,
 * not fatal to the list.
 */
/** The session list Claude Code reads: pages of 100, at most 10 of them; we stop at 100 sessions. */
export const LIST_PAGE_SIZE = 100;
export const MAX_LIST_PAGES = 10;
export const MAX_LISTED_SESSIONS = 100;

export const CodeSessionListSchema = z.looseObject({
  data: z.array(z.unknown()),
  next_cursor: z.string().nullable().optional(),
});
export type CodeSessionList = z.infer<typeof CodeSessionListSchema>;

/** A listed session: the session, plus where the service runs it (`bridge`: someone's own machine). */
export const ListedCodeSessionSchema = CodeSessionSchema.extend({ environment_kind: z.string().nullable().optional() });
export type ListedCodeSession = z.infer<typeof ListedCodeSessionSchema>;

/** The phase input, as Claude Code derives it: archived, else the worker's status (idle when absent). */
export function codeSessionStatus(session: Pick<CodeSession, 'status' | 'worker_status'>): string {
  return session.status === 'archived' ? 'archived' : (session.worker_status ?? 'idle');
}

/** The session as the rest of the product sees it (the resource of the older wire). */
export function toSessionResource(session: CodeSession): SessionResource {
  const at = session.created_at ?? new Date(0).toISOString();
  return {
    type: 'session',
    id: session.id,
    title: session.title ?? '',
    session_status: codeSessionStatus(session),
    environment_id: session.environment_id ?? null,
    created_at: at,
    updated_at: session.updated_at ?? session.last_event_at ?? at,
    session_context: session.config ?? null,
  };
}

/** POST /v1/code/sessions. The model is always sent; events are wrapped as `{payload}`. */
export const CodeCreateRequestSchema = z.looseObject({
  title: z.string().min(1).max(500),
  environment_id: z.string().min(1).optional(),
  events: z.array(z.looseObject({ payload: AnyEventSchema })),
  config: SessionContextSchema.optional(),
});
export type CodeCreateRequest = z.infer<typeof CodeCreateRequestSchema>;

/** The older create body made into the current one (same title, events, context, environment). */
export function toCodeCreateRequest(request: CreateSessionRequest, newUuid: () => string): CodeCreateRequest {
  const { session_context: context, environment_id: environmentId, events, title, ...rest } = request;
  return {
    ...rest,
    title,
    ...(environmentId ? { environment_id: environmentId } : {}),
    events: events.map((e) => ({ payload: withUuid(e.data, newUuid) })),
    ...(context ? { config: context } : {}),
  };
}

/** The current create body made into the older one: `{type:"event", data}` and `session_context`. */
export function toV1CreateRequest(request: CodeCreateRequest): CreateSessionRequest {
  const { config, events, title, environment_id: environmentId, ...rest } = request;
  return {
    ...rest,
    title,
    events: events.map((e) => ({ type: 'event' as const, data: e.payload })),
    ...(config ? { session_context: config } : {}),
    ...(environmentId ? { environment_id: environmentId } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Events

/**
 * One event item as the wire carries it, `{sequence_num, payload}`: its sequence number (the
 * cursor) and its payload as it came. Checked by hand, not by a schema: the payload is validated
 * once, where the batch leaves the transport (eventBatch.ts), and nowhere before it.
 */
export function readEventItem(raw: unknown): { sequence: string; payload: unknown } | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const item = raw as { sequence_num?: unknown; payload?: unknown };
  const n = item.sequence_num;
  const sequence =
    typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? String(n) : typeof n === 'string' && /^\d+$/.test(n) ? n : undefined;
  return sequence === undefined ? undefined : { sequence, payload: item.payload };
}

/**
 * Splits payloads into the events kept and counts of the skipped (types a reader skips) and the
 * invalid (not an object with a string `type`). Routing only: the events are validated once, by
 * parseEventBatch, where the poller reads them.
 */
export function sortEventItems(items: readonly unknown[]): { events: unknown[]; skipped: number; invalid: number } {
  const events: unknown[] = [];
  let skipped = 0;
  let invalid = 0;
  for (const item of items) {
    const event = item as { type?: unknown; id?: unknown } | null;
    if (event === null || typeof event !== 'object' || Array.isArray(event) || typeof event.type !== 'string') invalid++;
    else if (event.id !== undefined && typeof event.id !== 'string') invalid++;
    else if (SKIPPED_EVENT_TYPES.has(event.type)) skipped++;
    else events.push(item);
  }
  return { events, skipped, invalid };
}

export const CodeEventPageSchema = z.looseObject({
  data: z.array(z.unknown()),
  next_cursor: z.string().nullable().optional(),
});
export type CodeEventPage = z.infer<typeof CodeEventPageSchema>;

export const CodeSendRequestSchema = z.looseObject({
  events: z.array(z.looseObject({ payload: AnyEventSchema })).min(1),
});

/** Every event we send carries a uuid; a fresh one unless the event already has its own. */
export function withUuid(event: AnyEvent, newUuid: () => string): AnyEvent & { uuid: string } {
  const uuid = (event as { uuid?: unknown }).uuid;
  return { ...event, uuid: typeof uuid === 'string' && uuid !== '' ? uuid : newUuid() };
}

/** Cursor order: sequence numbers compare as numbers ("10" is after "9"). */
export function sequenceAfter(a: string, b: string | null): boolean {
  if (b === null) return true;
  const x = Number(a);
  const y = Number(b);
  if (Number.isFinite(x) && Number.isFinite(y)) return x > y;
  return a > b;
}

/** An SSE frame of the live stream: `event: client_event`, `id: <sequence_num>`, data `{sequence_num, payload}`. */
export const STREAM_EVENT_FRAME = 'client_event';

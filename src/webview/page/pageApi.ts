// The review page's way to its session: the server's own session routes, on the page's origin,
// with the browser session's cookie (sent by the browser, never readable here) and the CSRF token
// the page was given on every POST. Every answer is parsed before it is used.
import * as z from 'zod';
import { SessionsError, type SessionsErrorKind } from '../../core/errors';
import { ApprovalStateSchema } from '../../core/planApprovals';
import { SKIPPED_EVENT_TYPES, type AnyEvent, type SessionStatus } from '../../core/protocol';
import type { EventsSent } from '../../core/sessionBackend';
import type { EventRead, SessionTransport } from '../../core/transport';

const EventPageSchema = z.looseObject({
  data: z.array(z.unknown()).max(1000),
  has_more: z.boolean(),
  last_id: z.string().nullable().optional(),
});
const SessionSchema = z.looseObject({ id: z.string().min(1), title: z.string(), session_status: z.string() });
export type PageSessionResource = z.infer<typeof SessionSchema>;
const ErrorSchema = z.looseObject({ error: z.looseObject({ message: z.string(), reason: z.string().optional() }) });
const SendAnswerSchema = z.looseObject({ approval: ApprovalStateSchema.optional() });
const SignedOutSchema = z.looseObject({ signed_out: z.literal(true) });

/** Pages read at most per poll: a long session's history comes over a few polls. */
const MAX_PAGES_PER_READ = 20;
export const CSRF_HEADER = 'X-CSRF-Token';
/** Where the page ends its browser session (reviewPageRoutes.ts): the cookie and the CSRF token, as every POST. */
export const SIGN_OUT_PATH = '/review/auth/sign-out';

/** A refused call, with the server's machine-readable reason (csrf_refused, approval_refused, …). */
export class PageApiError extends SessionsError {
  constructor(
    kind: SessionsErrorKind,
    message: string,
    status: number,
    readonly reason: string | undefined,
  ) {
    super(kind, message, status);
  }
}

function kindOf(status: number): SessionsErrorKind {
  if (status === 400 || status === 413 || status === 415) return 'bad_request';
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  if (status === 429 || status >= 500) return 'transient';
  return 'bad_response';
}

export class PageApi implements SessionTransport {
  readonly #base: string;

  constructor(
    readonly sessionId: string,
    readonly csrfToken: string,
    readonly fetchFn: typeof fetch = (input, init) => fetch(input, init),
  ) {
    this.#base = `/v1/sessions/${encodeURIComponent(sessionId)}`;
  }

  async #call(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<unknown> {
    let res: Response;
    try {
      res = await this.fetchFn(path, {
        method,
        credentials: 'same-origin',
        cache: 'no-store',
        redirect: 'error',
        headers: method === 'POST' ? { 'content-type': 'application/json', [CSRF_HEADER]: this.csrfToken } : {},
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new SessionsError('transient', `the server could not be reached (${err instanceof Error ? err.message : String(err)})`);
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      /* not JSON: reported below */
    }
    if (!res.ok) {
      const error = ErrorSchema.safeParse(parsed);
      const message = error.success ? error.data.error.message : `the server answered ${res.status}`;
      throw new PageApiError(kindOf(res.status), message, res.status, error.success ? error.data.error.reason : undefined);
    }
    if (parsed === undefined) throw new SessionsError('bad_response', `the server's answer to ${method} ${path} is not JSON`);
    return parsed;
  }

  async getSession(signal?: AbortSignal): Promise<PageSessionResource> {
    const parsed = SessionSchema.safeParse(await this.#call('GET', this.#base, undefined, signal));
    if (!parsed.success) throw new SessionsError('bad_response', 'the session the server sent is not a session');
    return parsed.data;
  }

  async readEvents(_sessionId: string, afterId: string | null, signal?: AbortSignal): Promise<EventRead> {
    const events: unknown[] = [];
    let cursor = afterId;
    for (let page = 0; page < MAX_PAGES_PER_READ; page++) {
      const query = cursor === null ? '' : `?after_id=${encodeURIComponent(cursor)}`;
      const parsed = EventPageSchema.safeParse(await this.#call('GET', `${this.#base}/events${query}`, undefined, signal));
      if (!parsed.success) throw new SessionsError('bad_response', 'the event page the server sent is not one');
      for (const item of parsed.data.data) {
        const type = (item as { type?: unknown } | null)?.type;
        if (typeof type === 'string' && SKIPPED_EVENT_TYPES.has(type)) continue;
        events.push(item);
      }
      const last = parsed.data.last_id ?? null;
      if (last !== null) cursor = last;
      if (!parsed.data.has_more || last === null) break;
    }
    return { events, lastId: cursor };
  }

  async getStatus(_sessionId: string, signal?: AbortSignal): Promise<SessionStatus | string> {
    return (await this.getSession(signal)).session_status;
  }

  /** Ends this browser's session on the server (on every replica); the server clears the cookie. */
  async signOut(): Promise<void> {
    const parsed = SignedOutSchema.safeParse(await this.#call('POST', SIGN_OUT_PATH, {}));
    if (!parsed.success) throw new SessionsError('bad_response', 'the server did not say this browser is signed out');
  }

  /** Sends events in one batch; under a quorum the server answers with the approvals so far. */
  async sendEvents(events: AnyEvent[]): Promise<EventsSent> {
    const parsed = SendAnswerSchema.safeParse(await this.#call('POST', `${this.#base}/events`, { events }));
    if (!parsed.success) throw new SessionsError('bad_response', 'the answer to the decision is not one the server gives');
    return parsed.data.approval ? { approval: parsed.data.approval } : {};
  }
}

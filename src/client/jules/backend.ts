// Google's Jules as a SessionBackend: a session is created with requirePlanApproval, followed by
// reading its activities (ActivityEvents makes them our events), and decided through the calls
// the API has: Approve is sessions.approvePlan; Reject and line comments are a message
// (sessions.sendMessage), for the API has no reject; an edited plan or a teleport it cannot take
// is refused before anything is sent. Reads back off while nothing changes (2 s doubling to 30 s)
// and start again at once after a decision.
import { SessionsError, errorMessage } from '../../core/errors';
import {
  ControlResponseEventSchema,
  ULTRAPLAN_TELEPORT_SENTINEL,
  UserEventSchema,
  contentText,
  type AnyEvent,
  type CreateSessionRequest,
  type SessionResource,
  type SessionStatus,
} from '../../core/protocol';
import { BACKENDS, type BackendLifecycle } from '../../core/backendKinds';
import { PLAN_FILE_FIELD } from '../../core/planFileSession';
import type { SessionBackend } from '../../core/sessionBackend';
import type { EventRead, SessionTransport } from '../../core/transport';
import { ActivityEvents } from './activityEvents';
import { JulesApi, type JulesApiOptions } from './api';
import type { JulesSession } from './schemas';
import { listJulesSessions, resourceOf, statusOf } from './sessionList';

export { statusOf };

export interface JulesRepository {
  /** GitHub owner and name: the source is `sources/github/<owner>/<name>`. */
  owner: string;
  name: string;
  /** The branch Jules starts from. */
  branch: string;
}

export interface JulesBackendOptions extends JulesApiOptions {
  /** Where new sessions work; undefined for a backend that only follows existing sessions. */
  repository?: JulesRepository;
  /** Reads back off from this (default 2 s) … */
  minPollMs?: number;
  /** … to this (default 30 s) while nothing changes. */
  maxPollMs?: number;
  now?: () => number;
}

export const EDITED_PLAN_REFUSAL =
  "Jules approves the plan as it proposed it: the API takes no edited plan. Nothing was sent. Send your changes as comments (Reject) and approve Jules's revision.";
export const PLAN_FILE_REFUSAL =
  'Jules plans only what its own agent proposes: its API takes no plan to review. Nothing was sent. Review the plan on the embedded backend or a server.';
export const TELEPORT_REFUSAL =
  'Jules cannot hand a plan over: its API has no way to stop a session. Nothing was sent. Copy the plan, or approve it and let Jules carry it out.';

interface Followed {
  events: ActivityEvents;
  /** The token of the last page read: new activities are on it or after it. */
  pageToken: string | undefined;
  session: JulesSession | undefined;
  nextReadAt: number;
  backoffMs: number;
  reading: Promise<void> | undefined;
  /** The activities were read at least once. */
  read: boolean;
}

/** The prompt of a create request: its user message (the plan-mode request is Jules's default). */
function promptOf(request: CreateSessionRequest): string {
  for (const { data } of request.events) {
    const user = UserEventSchema.safeParse(data);
    if (user.success) return contentText(user.data.message.content, '\n');
  }
  throw new SessionsError('bad_request', 'A Jules session needs a prompt; the request had no user message.');
}

export class JulesBackend implements SessionBackend, SessionTransport {
  readonly kind = 'jules' as const;
  readonly label = BACKENDS.jules.label;
  readonly transport: SessionTransport = this;
  readonly lifecycle: BackendLifecycle = BACKENDS.jules.lifecycle;
  readonly api: JulesApi;
  readonly #o: JulesBackendOptions;
  readonly #followed = new Map<string, Followed>();
  readonly #now: () => number;

  constructor(options: JulesBackendOptions) {
    this.#o = options;
    this.api = new JulesApi(options);
    this.#now = options.now ?? Date.now;
  }

  async createSession(request: CreateSessionRequest, signal?: AbortSignal): Promise<SessionResource> {
    if ((request as Record<string, unknown>)[PLAN_FILE_FIELD] !== undefined) throw new SessionsError('bad_request', PLAN_FILE_REFUSAL);
    const repository = this.#o.repository;
    if (!repository)
      throw new SessionsError('bad_request', 'No GitHub repository is known for this Jules backend: open the repository folder first.');
    const session = await this.api.createSession(
      {
        prompt: promptOf(request),
        title: request.title,
        sourceContext: {
          source: `sources/github/${repository.owner}/${repository.name}`,
          githubRepoContext: { startingBranch: repository.branch },
        },
        requirePlanApproval: true,
      },
      signal,
    );
    this.#state(session.id).session = session;
    return resourceOf(session, request.title);
  }

  async getSession(sessionId: string, signal?: AbortSignal): Promise<SessionResource> {
    const session = await this.api.getSession(sessionId, signal);
    this.#state(sessionId).session = session;
    return resourceOf(session);
  }

  async readEvents(sessionId: string, afterId: string | null, signal?: AbortSignal): Promise<EventRead> {
    const followed = await this.#refresh(sessionId, signal);
    const all = followed.events.events;
    const at = afterId === null ? -1 : all.findIndex((e) => e.id === afterId);
    const events = all.slice(at + 1);
    return { events, lastId: all.length > 0 ? (all[all.length - 1]!.id ?? null) : afterId };
  }

  async getStatus(sessionId: string, signal?: AbortSignal): Promise<SessionStatus> {
    const followed = await this.#refresh(sessionId, signal);
    return statusOf(followed.session?.state);
  }

  /** Sleeps until the next read is due (the backoff), at most `timeoutMs`. */
  async waitForActivity(sessionId: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const due = this.#state(sessionId).nextReadAt - this.#now();
    const ms = Math.max(0, Math.min(due, timeoutMs));
    if (ms === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }

  async sendEvents(sessionId: string, events: AnyEvent[], signal?: AbortSignal): Promise<void> {
    let followed = this.#state(sessionId);
    // A decision is checked against the activities: read them first if this backend has not yet.
    if (!followed.read) followed = await this.#refresh(sessionId, signal, true);
    // Check every event before sending any, so a batch is taken whole or not at all.
    const calls: Array<() => Promise<void>> = [];
    for (const event of events) calls.push(this.#callFor(sessionId, followed, event, signal));
    followed.backoffMs = this.#minPoll();
    followed.nextReadAt = 0;
    for (const [i, call] of calls.entries()) {
      try {
        await call();
      } catch (err) {
        if (i === 0) throw err;
        // The decision went through and what followed it (the approval's notes) did not: the
        // decision stands, and the person is told what to send again.
        throw new SessionsError(
          'conflict',
          `Jules took the decision, but what followed it was not sent (${errorMessage(err)}). Send it again as a reply.`,
          undefined,
          undefined,
          {
            cause: err,
          },
        );
      }
    }
  }

  #callFor(sessionId: string, followed: Followed, event: AnyEvent, signal?: AbortSignal): () => Promise<void> {
    if (event.type === 'control_response') {
      const parsed = ControlResponseEventSchema.safeParse(event);
      const decision = parsed.success ? parsed.data.response.response : undefined;
      const proposed = parsed.success ? followed.events.planFor(parsed.data.response.request_id) : undefined;
      if (!decision || !proposed)
        throw new SessionsError('bad_request', 'This decision answers no plan Jules proposed in this session. Nothing was sent.');
      if (followed.events.pending !== proposed) {
        throw new SessionsError('conflict', 'Jules is no longer waiting for a decision on this plan. Nothing was sent.');
      }
      if (decision.behavior === 'allow') {
        if (decision.updatedInput.plan !== proposed.plan) throw new SessionsError('bad_request', EDITED_PLAN_REFUSAL);
        return () => this.api.approvePlan(sessionId, signal);
      }
      if (decision.message.includes(ULTRAPLAN_TELEPORT_SENTINEL)) throw new SessionsError('bad_request', TELEPORT_REFUSAL);
      return () => this.api.sendMessage(sessionId, decision.message, signal);
    }
    if (event.type === 'user') {
      const parsed = UserEventSchema.safeParse(event);
      const message = parsed.success ? contentText(parsed.data.message.content, '\n').trim() : '';
      if (!message) throw new SessionsError('bad_request', 'Jules takes text messages only; this one had no text. Nothing was sent.');
      return () => this.api.sendMessage(sessionId, message, signal);
    }
    // Plan mode is how every Jules session starts (requirePlanApproval): nothing to send.
    if (event.type === 'control_request') return () => Promise.resolve();
    throw new SessionsError('bad_request', `Jules has no counterpart of a "${event.type}" event. Nothing was sent.`);
  }

  /**
   * The key's sessions, newest first (sessions.list), for Attach: those started here, in the
   * Jules web app or by another tool alike.
   */
  async listSessions(signal?: AbortSignal): Promise<SessionResource[]> {
    const { sessions, skipped } = await listJulesSessions(this.api, signal);
    if (skipped > 0) this.#o.log?.(`jules: ${skipped} listed sessions are not what the reference describes; skipped`);
    return sessions;
  }

  /** Jules's API has no archive: the session stays in Jules (its web app can delete it). */
  archive(sessionId: string): Promise<void> {
    this.#followed.delete(sessionId);
    return Promise.resolve();
  }

  sessionLink(sessionId: string): string | undefined {
    const url = this.#followed.get(sessionId)?.session?.url;
    return url && /^https:\/\//.test(url) ? url : BACKENDS.jules.sessionLink(sessionId);
  }

  dispose(): Promise<void> {
    this.#followed.clear();
    return Promise.resolve();
  }

  #minPoll(): number {
    return this.#o.minPollMs ?? 2_000;
  }

  #state(sessionId: string): Followed {
    let followed = this.#followed.get(sessionId);
    if (!followed) {
      followed = {
        events: new ActivityEvents(),
        pageToken: undefined,
        session: undefined,
        nextReadAt: 0,
        backoffMs: this.#minPoll(),
        reading: undefined,
        read: false,
      };
      this.#followed.set(sessionId, followed);
    }
    return followed;
  }

  /** Reads the session and its new activities when a read is due; one read at a time per session. */
  async #refresh(sessionId: string, signal?: AbortSignal, now = false): Promise<Followed> {
    const followed = this.#state(sessionId);
    if (followed.reading) await followed.reading;
    if (!now && this.#now() < followed.nextReadAt) return followed;
    const reading = this.#read(sessionId, followed, signal);
    followed.reading = reading;
    try {
      await reading;
    } finally {
      followed.reading = undefined;
    }
    return followed;
  }

  async #read(sessionId: string, followed: Followed, signal?: AbortSignal): Promise<void> {
    const before = { count: followed.events.events.length, state: followed.session?.state, malformed: followed.events.malformed };
    const session = await this.api.getSession(sessionId, signal);
    // New activities are on the last page read or after it; those already folded are skipped by id,
    // so a read that fails halfway loses nothing and the next one starts from the last good page.
    let token = followed.pageToken;
    for (let page = 0; page < 1_000; page++) {
      let answer;
      try {
        answer = await this.api.listActivities(sessionId, token, signal);
      } catch (err) {
        // A page token the API no longer takes: read from the first page again.
        if (!(err instanceof SessionsError && err.kind === 'bad_request' && token !== undefined)) throw err;
        token = followed.pageToken = undefined;
        answer = await this.api.listActivities(sessionId, undefined, signal);
      }
      for (const raw of answer.activities ?? []) followed.events.add(raw);
      if (!answer.nextPageToken) break;
      token = answer.nextPageToken;
      followed.pageToken = token;
    }
    followed.session = session;
    followed.read = true;
    if (followed.events.malformed > before.malformed) {
      this.#o.log?.(
        `jules: ${followed.events.malformed - before.malformed} activities of session ${sessionId} are not what the reference describes; skipped`,
      );
    }
    const changed = followed.events.events.length !== before.count || session.state !== before.state;
    const max = this.#o.maxPollMs ?? 30_000;
    followed.backoffMs = changed ? this.#minPoll() : Math.min(max, followed.backoffMs * 2);
    followed.nextReadAt = this.#now() + followed.backoffMs;
  }
}

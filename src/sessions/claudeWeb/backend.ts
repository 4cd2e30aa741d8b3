// Claude Code on the web as a SessionBackend: eligibility first, then the same SessionsClient and
// HttpBackend as our own server, with Claude's organization header, a token read afresh before
// every request, the launch request Claude Code sends, and decisions that fall back to the
// session's WebSocket where HTTP refuses them. Failures keep their SessionsError kind (the poller
// switches on it) and carry a ClaudeWebError as their cause (the extension picks its button).
import { SessionsError } from '../../core/errors';
import { ANTHROPIC_VERSION, CCR_BETA, type AnyEvent, type CreateSessionRequest, type SessionResource, type SessionStatus } from '../../core/protocol';
import type { EventRead, SessionTransport } from '../../core/transport';
import type { BackendLifecycle, SessionBackend } from '../backend';
import { SessionsClient } from '../client';
import { HttpBackend } from '../httpBackend';
import { DEFAULT_CLAUDE_API_URL, isPolicyRefusal, policyError, tokenRefusedError } from './accountApi';
import { sendEventsOverSessionSocket } from './decisionSocket';
import { checkClaudeWebEligibility, readAccess, tokenReader, type ClaudeWebAccessOptions, type ClaudeWebEligibility, type EligibilityOptions } from './eligibility';
import { chooseEnvironment, type Environment } from './environment';
import { ClaudeWebError } from './errors';
import { buildLaunchRequest, claudeSessionLink, completeLaunchRequest } from './launch';

/** Section 9: approve leaves the remote executing; teleport, stop and failure archive. */
export const CLAUDE_WEB_LIFECYCLE: BackendLifecycle = Object.freeze({
  archiveOnApprove: false,
  archiveOnTeleport: true,
  archiveOnStop: true,
  archiveOnFailure: true,
});

/** HTTP answers to POST events that mean "not over HTTP" rather than "not this session". */
export const DECISION_REFUSAL_STATUSES: ReadonlySet<number> = new Set([400, 404, 405, 415, 422, 501]);

export interface ClaudeWebBackendOptions extends EligibilityOptions {
  log: (line: string) => void;
  /** Try our SSE stream first; Claude's service has none, so the default is plain polling (3 s). */
  preferStream?: boolean;
  /** The WebSocket fallback's bounds. */
  socket?: { connectTimeoutMs?: number; confirmWindowMs?: number };
}

export interface ClaudeWebBackendResult {
  backend: ClaudeWebBackend;
  eligibility: ClaudeWebEligibility;
  /** For people, before launching: login about to expire, changes the remote will not see. */
  warnings: string[];
}

/** Checks eligibility and builds the backend; throws the first failed check as a ClaudeWebError. */
export async function createClaudeWebBackend(options: ClaudeWebBackendOptions): Promise<ClaudeWebBackendResult> {
  const eligibility = await checkClaudeWebEligibility(options);
  const backend = new ClaudeWebBackend(options, eligibility);
  return { backend, eligibility, warnings: eligibility.warnings };
}

/** The environments for a picker, and the one the rules would choose. */
export async function listEnvironments(options: ClaudeWebAccessOptions & { environmentId?: string }): Promise<{
  environments: Environment[];
  /** undefined when none is usable (the picker then says to set one up at claude.ai/code). */
  chosen: Environment | undefined;
  organizationUuid: string;
}> {
  const access = await readAccess(options);
  let chosen: Environment | undefined;
  try {
    chosen = chooseEnvironment(access.environments, options.environmentId);
  } catch {
    chosen = undefined;
  }
  return { environments: access.environments, chosen, organizationUuid: access.organizationUuid };
}

/**
 * The ClaudeWebError behind a failure from this backend or from a poll over its transport (the
 * error itself or one of its causes), if any.
 */
export function claudeWebFailureOf(err: unknown): ClaudeWebError | undefined {
  let current: unknown = err;
  // Bounded: a cause chain is short (poll error -> SessionsError -> ClaudeWebError).
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    if (current instanceof ClaudeWebError) return current;
    current = current.cause;
  }
  return undefined;
}

export class ClaudeWebBackend implements SessionBackend {
  readonly kind = 'claude-web' as const;
  readonly label: string;
  readonly lifecycle = CLAUDE_WEB_LIFECYCLE;
  readonly transport: SessionTransport;
  readonly http: HttpBackend;
  readonly baseUrl: string;
  private readonly log: (line: string) => void;

  constructor(
    private readonly options: ClaudeWebBackendOptions,
    readonly eligibility: ClaudeWebEligibility,
  ) {
    this.baseUrl = (options.baseUrl ?? DEFAULT_CLAUDE_API_URL).replace(/\/+$/, '');
    this.log = options.log;
    const readToken = tokenReader(options);
    const client = new SessionsClient({
      baseUrl: this.baseUrl,
      // A login that went bad since the check fails the request as unauthorized, with the fix.
      getToken: async () => {
        try {
          return await readToken();
        } catch (err) {
          if (err instanceof ClaudeWebError) throw new SessionsError('unauthorized', err.message, undefined, undefined, { cause: err });
          throw err;
        }
      },
      extraHeaders: () => ({ 'x-organization-uuid': eligibility.organizationUuid }),
      requestTimeoutMs: options.requestTimeoutMs,
      fetch: options.fetch,
      log: options.log,
    });
    const { repository, environment } = eligibility;
    this.label = `Claude Code on the web · ${repository.owner}/${repository.name} · ${environment.name?.trim() || environment.environment_id}`;
    this.http = new HttpBackend({
      client,
      preferStream: options.preferStream ?? false,
      kind: 'claude-web',
      label: this.label,
      sessionLink: claudeSessionLink,
    });
    this.transport = translatingTransport(this.http.transport);
  }

  get warnings(): string[] {
    return this.eligibility.warnings;
  }

  sessionLink(sessionId: string): string {
    return claudeSessionLink(sessionId);
  }

  /** The request Claude Code sends, for this repository and environment. */
  launchRequest(prompt: string, title?: string): CreateSessionRequest {
    const { repository, environment } = this.eligibility;
    return buildLaunchRequest({ prompt, title, repository, environmentId: environment.environment_id });
  }

  /**
   * Creates the session; a request built without this backend in mind (title and events) gets
   * the `ultraplan: ` title, the repository source and outcome, and the environment.
   */
  async createSession(request: CreateSessionRequest, signal?: AbortSignal): Promise<SessionResource> {
    const { repository, environment } = this.eligibility;
    const complete = completeLaunchRequest(request, { repository, environmentId: environment.environment_id });
    const session = await translated(() => this.http.createSession(complete, signal));
    this.log(`claude-web: session ${session.id} created · ${this.sessionLink(session.id)}`);
    return session;
  }

  getSession(sessionId: string, signal?: AbortSignal): Promise<SessionResource> {
    return translated(() => this.http.getSession(sessionId, signal));
  }

  /**
   * Sends events over HTTP. control_responses the service refuses over HTTP go over the session's
   * WebSocket; if that fails too, a ClaudeWebError decision_not_delivered says so: nothing is
   * ever reported as sent that was not.
   */
  async sendEvents(sessionId: string, events: AnyEvent[], signal?: AbortSignal): Promise<void> {
    let refusal: SessionsError;
    try {
      await this.http.sendEvents(sessionId, events, signal);
      return;
    } catch (err) {
      if (!(err instanceof SessionsError) || !events.some(isDecision) || !refusedOverHttp(err)) throw translate(err);
      if (err.status === 404) {
        // 404 also means "no such session"; only a session that exists refused the route.
        await this.getSession(sessionId, signal);
      }
      refusal = err;
    }
    const decisions = events.filter(isDecision);
    const others = events.filter((e) => !isDecision(e));
    if (others.length > 0) await translated(() => this.http.sendEvents(sessionId, others, signal));
    this.log(`claude-web: HTTP refused the decision for session ${sessionId} (HTTP ${refusal.status ?? '?'}); sending it over the session WebSocket`);
    try {
      const delivery = await sendEventsOverSessionSocket({
        baseUrl: this.baseUrl,
        sessionId,
        organizationUuid: this.eligibility.organizationUuid,
        headers: () => this.socketHeaders(),
        events: decisions,
        connectTimeoutMs: this.options.socket?.connectTimeoutMs,
        confirmWindowMs: this.options.socket?.confirmWindowMs,
        signal,
      });
      this.log(`claude-web: decision for session ${sessionId} sent over the WebSocket${delivery.confirmed ? ' (echoed back)' : ' (not echoed; the event stream will show it)'}`);
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      const link = this.sessionLink(sessionId);
      throw new ClaudeWebError(
        'decision_not_delivered',
        `Your decision was NOT sent: Claude Code on the web refused it over HTTP (HTTP ${refusal.status ?? '?'}) and ${err instanceof Error ? err.message : String(err)}. Review this plan in the browser instead: ${link}`,
        { url: link, cause: err },
      );
    }
  }

  archive(sessionId: string, signal?: AbortSignal): Promise<void> {
    return translated(() => this.http.archive(sessionId, signal));
  }

  dispose(): Promise<void> {
    return this.http.dispose();
  }

  private async socketHeaders(): Promise<Record<string, string>> {
    let token: string;
    try {
      token = await tokenReader(this.options)();
    } catch (err) {
      // The WebSocket path must say why too, without a token.
      throw err instanceof ClaudeWebError ? new Error(err.message) : err;
    }
    return {
      authorization: `Bearer ${token}`,
      'anthropic-version': ANTHROPIC_VERSION,
      'anthropic-beta': CCR_BETA,
      'x-organization-uuid': this.eligibility.organizationUuid,
    };
  }
}

function isDecision(event: AnyEvent): boolean {
  return event.type === 'control_response';
}

function refusedOverHttp(err: SessionsError): boolean {
  return err.status !== undefined && DECISION_REFUSAL_STATUSES.has(err.status);
}

/** 401/403 from Claude's service, reworded with the fix; the kind stays for the poller. */
function translate(err: unknown): unknown {
  if (!(err instanceof SessionsError) || err.kind !== 'unauthorized' || err.status === undefined) return err;
  if (err.cause instanceof ClaudeWebError) return err;
  const detail = /HTTP \d+: (.*?)\)\. /.exec(err.message)?.[1];
  const cause = isPolicyRefusal(err.status, undefined, err.message) ? policyError(detail) : tokenRefusedError(err.status, detail);
  return new SessionsError('unauthorized', cause.message, err.status, undefined, { cause });
}

async function translated<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw translate(err);
  }
}

function translatingTransport(inner: SessionTransport): SessionTransport {
  const transport: SessionTransport = {
    readEvents: (sessionId: string, afterId: string | null, signal?: AbortSignal): Promise<EventRead> =>
      translated(() => inner.readEvents(sessionId, afterId, signal)),
    getStatus: (sessionId: string, signal?: AbortSignal): Promise<SessionStatus | string> => translated(() => inner.getStatus(sessionId, signal)),
  };
  if (inner.waitForActivity) {
    const wait = inner.waitForActivity.bind(inner);
    transport.waitForActivity = (sessionId, timeoutMs, signal) => translated(() => wait(sessionId, timeoutMs, signal));
  }
  return transport;
}

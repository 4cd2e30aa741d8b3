// Claude Code on the web as a SessionBackend: eligibility first, then the same SessionsClient and
// HttpBackend as our own server (the current `/v1/code/sessions` wire), with a token read afresh
// before every request, the organization on the create, the launch request Claude Code sends, and
// decisions over HTTP only. Failures keep their SessionsError kind (the poller switches on it) and
// carry a ClaudeWebError as their cause (the extension picks its button).
import { toLinkSessionId } from '../../core/codeSessions';
import { SessionsError } from '../../core/errors';
import type { AnyEvent, CreateSessionRequest, SessionResource, SessionStatus } from '../../core/protocol';
import type { EventRead, SessionTransport } from '../../core/transport';
import { BACKENDS } from '../../core/backendKinds';
import type { SessionBackend } from '../../core/sessionBackend';
import { SessionsClient } from '../sessionsClient';
import { HttpBackend } from '../httpBackend';
import { DEFAULT_CLAUDE_API_URL, isPolicyRefusal, policyError, tokenRefusedError } from './accountApi';
import {
  checkClaudeWebEligibility,
  checkClaudeWebLogin,
  readAccess,
  tokenReader,
  type ClaudeWebAccessOptions,
  type ClaudeWebEligibility,
  type ClaudeWebLogin,
  type EligibilityOptions,
} from './eligibility';
import { chooseEnvironment, type Environment } from './environment';
import { ClaudeWebError } from './errors';
import { buildLaunchRequest, claudeSessionLink, completeLaunchRequest } from './launch';

/** HTTP answers to a decision that mean the service did not take it (the session itself exists). */
export const DECISION_REFUSAL_STATUSES: ReadonlySet<number> = new Set([400, 404, 405, 415, 422]);

/** Sent when the caller names none: the model is always sent (docs/protocol.md section 9). */
export const DEFAULT_CLOUD_MODEL = 'claude-opus-5';

export interface ClaudeWebBackendOptions extends EligibilityOptions {
  log: (line: string) => void;
  /** Follow the phase on the live stream, falling back to the 3 s poll (default true). */
  preferStream?: boolean;
  /** The model the remote session runs (default DEFAULT_CLOUD_MODEL). */
  model?: string;
  /** The archive 409 retry waits (tests shorten them). */
  archiveRetryMs?: readonly number[];
  /** Stream tuning (tests). */
  stream?: { initialBackoffMs?: number; maxBackoffMs?: number; maxConsecutiveFailures?: number };
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

/**
 * A backend for re-attaching to sessions that already exist (after a reload): only the login and
 * the organization are checked. Environments, the repository and the GitHub app mattered for the
 * launch, not for following a session that runs.
 */
export async function attachClaudeWebBackend(options: ClaudeWebBackendOptions): Promise<ClaudeWebBackend> {
  const login = await checkClaudeWebLogin(options);
  return new ClaudeWebBackend(options, login);
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

export class ClaudeWebBackend implements SessionBackend {
  readonly kind = 'claude-web' as const;
  readonly label: string;
  readonly lifecycle = BACKENDS['claude-web'].lifecycle;
  readonly transport: SessionTransport;
  readonly http: HttpBackend;
  readonly baseUrl: string;
  private readonly log: (line: string) => void;

  constructor(
    private readonly options: ClaudeWebBackendOptions,
    readonly eligibility: ClaudeWebLogin,
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
      organizationUuid: eligibility.organizationUuid,
      createOnV1First: true,
      archiveRetryMs: options.archiveRetryMs,
      requestTimeoutMs: options.requestTimeoutMs,
      fetch: options.fetch,
      log: options.log,
    });
    const { repository, environment } = eligibility;
    this.label =
      repository && environment
        ? `Claude Code on the web · ${repository.owner}/${repository.name} · ${environment.name?.trim() || environment.environment_id}`
        : 'Claude Code on the web';
    this.http = new HttpBackend({
      client,
      preferStream: options.preferStream ?? true,
      kind: 'claude-web',
      label: this.label,
      sessionLink: claudeSessionLink,
      stream: { ...options.stream, log: options.log },
    });
    this.transport = translatingTransport(this.http.transport);
  }

  get warnings(): string[] {
    return this.eligibility.warnings;
  }

  sessionLink(sessionId: string): string {
    return claudeSessionLink(toLinkSessionId(sessionId));
  }

  /** The request Claude Code sends, for this repository and environment. */
  launchRequest(prompt: string, title?: string): CreateSessionRequest {
    const { repository, environment } = this.launchContext();
    return buildLaunchRequest({
      prompt,
      title,
      repository,
      environmentId: environment.environment_id,
      model: this.options.model ?? DEFAULT_CLOUD_MODEL,
    });
  }

  private launchContext(): {
    repository: NonNullable<ClaudeWebEligibility['repository']>;
    environment: NonNullable<ClaudeWebEligibility['environment']>;
  } {
    const { repository, environment } = this.eligibility;
    // A backend made to re-attach never launches: its checks did not cover a launch.
    if (!repository || !environment)
      throw new Error(
        'This Claude Code on the web backend was made to follow existing sessions; launching needs the full eligibility check.',
      );
    return { repository, environment };
  }

  /**
   * Creates the session; a request built without this backend in mind (title and events) gets
   * the `ultraplan: ` title, the repository source and outcome, and the environment.
   */
  async createSession(request: CreateSessionRequest, signal?: AbortSignal): Promise<SessionResource> {
    const { repository, environment } = this.launchContext();
    const complete = completeLaunchRequest(request, {
      repository,
      environmentId: environment.environment_id,
      model: this.options.model ?? DEFAULT_CLOUD_MODEL,
    });
    const session = await translated(() => this.http.createSession(complete, signal));
    this.log(`claude-web: session ${session.id} created · ${this.sessionLink(session.id)}`);
    return session;
  }

  getSession(sessionId: string, signal?: AbortSignal): Promise<SessionResource> {
    return translated(() => this.http.getSession(sessionId, signal));
  }

  /**
   * The sessions of the login's organization, newest first, as Claude Code lists them for
   * `--teleport` (`GET /v1/code/sessions?limit=100`, `&cursor=` for the next page; no organization
   * header: the token names the account).
   */
  listSessions(signal?: AbortSignal): Promise<SessionResource[]> {
    return translated(() => this.http.listSessions(signal));
  }

  /**
   * Sends events over HTTP, the only way the service takes a decision. A decision it refuses is
   * a ClaudeWebError decision_not_delivered that sends the person to the browser: nothing is ever
   * reported as sent that was not.
   */
  async sendEvents(sessionId: string, events: AnyEvent[], signal?: AbortSignal): Promise<void> {
    try {
      await this.http.sendEvents(sessionId, events, signal);
    } catch (err) {
      if (
        !(err instanceof SessionsError) ||
        !events.some(isDecision) ||
        err.status === undefined ||
        !DECISION_REFUSAL_STATUSES.has(err.status)
      )
        throw translate(err);
      // 404 also means "no such session": that stays not_found.
      if (err.status === 404) await this.getSession(sessionId, signal);
      const link = this.sessionLink(sessionId);
      throw new ClaudeWebError(
        'decision_not_delivered',
        `Your decision was NOT sent: Claude Code on the web refused it (HTTP ${err.status}). Review this plan in the browser instead: ${link}`,
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
}

function isDecision(event: AnyEvent): boolean {
  return event.type === 'control_response';
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
    getStatus: (sessionId: string, signal?: AbortSignal): Promise<SessionStatus | string> =>
      translated(() => inner.getStatus(sessionId, signal)),
  };
  if (inner.waitForActivity) {
    const wait = inner.waitForActivity.bind(inner);
    transport.waitForActivity = (sessionId, timeoutMs, signal) => translated(() => wait(sessionId, timeoutMs, signal));
  }
  return transport;
}

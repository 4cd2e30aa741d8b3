// The local session service's own face (docs/service.md): each session's agent chosen by its
// creation request, and `/v1/service`, where a client reads which version answers and whether a
// session is live, and asks an idle older version to make way (POST /v1/service/stop).
// Behind the same request guard and token as every other route.
import type { AgentSandboxSettings } from '../../agents/sandbox/agentSandbox';
import type * as http from 'node:http';
import { SessionsError, errorMessage } from '../../core/errors';
import type { CreateSessionRequest } from '../../core/protocol';
import type { AgentFactory } from '../../agents/agent';
import type { SessionHost } from '../host/sessionHost';
import { AGENT_LAUNCH_KEY, agentLaunchOf } from '../../core/agentLaunch';
import { agentFactoryFor } from '../local/launchedAgent';
import type { ServiceSandbox, ServiceStatus } from '../../core/serviceStatus';
import type { EnvFingerprint } from '../../core/envFingerprint';
import type { CodeRouteContext } from './serverCodeRoutes';

export interface ServiceFace {
  /** The agent a new session runs, from its request; undefined: the host's default. */
  agentFor(request: CreateSessionRequest): AgentFactory | undefined;
  /** `/v1/service/…`; `parts` are the path segments after `/v1/service`. */
  handle(req: http.IncomingMessage, res: http.ServerResponse, method: string, parts: string[], io: CodeRouteContext): Promise<void>;
}

/** A server that runs its own agent (ultraplan-server on a port) does not take one from a client. */
export function refuseAgentLaunch(request: CreateSessionRequest): undefined {
  if (request.session_context?.[AGENT_LAUNCH_KEY] !== undefined) {
    throw new SessionsError('bad_request', `this server runs its own agent; session_context.${AGENT_LAUNCH_KEY} is not taken`, 400);
  }
  return undefined;
}

/** Sessions whose agent is working or waiting on a decision: the service must not stop under them. */
export function liveSessionCount(host: SessionHost): number {
  return host.listSessions().filter((s) => s.session_status === 'running' || s.session_status === 'requires_action').length;
}

export interface LocalServiceOptions {
  version: string;
  /** Filled in once the host exists (the host's agent factory needs this face first). */
  host: () => SessionHost;
  /** Agent for requests that name none (`--agent`), if any. */
  defaultAgent?: AgentFactory;
  /** Each agent in a sandbox of its own (`--sandbox`). */
  sandbox?: AgentSandboxSettings;
  /** Whether agents are sandboxed and what was asked for, for `/v1/service`. */
  sandboxState?: ServiceSandbox;
  /** The fingerprint of the environment its agents run with (never the values). */
  environment?: EnvFingerprint;
  /** Starts a clean shutdown; called after the stop request is answered. */
  stop: (why: string) => void;
  log: (line: string) => void;
}

export class LocalServiceFace implements ServiceFace {
  readonly #options: LocalServiceOptions;
  readonly #startedAt = new Date().toISOString();
  #stopping = false;

  constructor(options: LocalServiceOptions) {
    this.#options = options;
  }

  agentFor(request: CreateSessionRequest): AgentFactory | undefined {
    let launch;
    try {
      launch = agentLaunchOf(request.session_context);
    } catch (err) {
      throw new SessionsError('bad_request', `session_context.${errorMessage(err)}`, 400);
    }
    if (launch) return agentFactoryFor(launch, this.#options.log, this.#options.sandbox);
    // Not the host's own factory: that one restarts a stored session's agent, and this one is not stored yet.
    if (this.#options.defaultAgent) return this.#options.defaultAgent;
    throw new SessionsError('bad_request', `the local service needs the session's agent in session_context.${AGENT_LAUNCH_KEY}`, 400);
  }

  /** The host's factory: the agent a stored session was created with, started again. */
  readonly restartAgent: AgentFactory = (options) => {
    const launch = agentLaunchOf(this.#options.host().getSession(options.sessionId).session_context);
    if (launch) return agentFactoryFor(launch, this.#options.log, this.#options.sandbox)(options);
    if (this.#options.defaultAgent) return this.#options.defaultAgent(options);
    throw new Error('the session names no agent the service can start');
  };

  async handle(req: http.IncomingMessage, res: http.ServerResponse, method: string, parts: string[], io: CodeRouteContext): Promise<void> {
    const route = parts.join('/');
    if (route === '') {
      if (method !== 'GET') throw new SessionsError('bad_request', 'method not allowed here; allowed: GET', 405);
      return io.send(res, 200, this.status());
    }
    if (route === 'stop') {
      if (method !== 'POST') throw new SessionsError('bad_request', 'method not allowed here; allowed: POST', 405);
      await io.readJson(req, true);
      const live = liveSessionCount(this.#options.host());
      if (live > 0) throw new SessionsError('conflict', `${live} session(s) are live on this service; it keeps running`, 409);
      this.#stopping = true;
      io.send(res, 200, { ...this.status(), stopping: true });
      this.#options.stop('asked to stop by a client (a newer version, or a window with another environment)');
      return;
    }
    throw new SessionsError('not_found', `no such route: /v1/service/${route}`, 404);
  }

  status(): ServiceStatus {
    const host = this.#options.host();
    return {
      type: 'service',
      version: this.#options.version,
      pid: process.pid,
      started_at: this.#startedAt,
      sessions: host.listSessions().length,
      live_sessions: liveSessionCount(host),
      stopping: this.#stopping,
      ...(this.#options.environment ? { environment: this.#options.environment } : {}),
      ...(this.#options.sandboxState ? { sandbox: this.#options.sandboxState } : {}),
    };
  }
}

// Creates the SessionBackend for a backend kind and keeps it for the extension's lifetime:
// embedded = a client of this user's local session service (docs/service.md), started on demand
// and shared by every window, the agent for each new session chosen here from the settings and
// sent with the session; server = HttpBackend over SessionsClient with the token from
// SecretStorage; claude-web = Claude Code on the web with the user's Claude Code login,
// eligibility checked afresh for each launch; jules = Google's Jules with the API key from
// SecretStorage (extension/jules). One provider per kind.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { SessionResource } from '../../core/protocol';
import type { BackendKind } from '../../core/backendKinds';
import type { SessionBackend } from '../../core/sessionBackend';
import { claudeWebBackendOptions, type PreparedClaudeWeb } from '../claudeWeb/claudeWebBackend';
import type { ClaudeWebBackend } from '../../client/claudeWeb';
import type { HttpBackend } from '../../client/httpBackend';
import { connectServer } from '../../client/serverConnection';
import { withAgentLaunch, type AgentLaunch } from '../../core/agentLaunch';
import type { ServiceBackend } from '../../client/localService/serviceBackend';
import { AgentNotice } from '../agentSetup/agentNotice';
import type { UltraplanSettings } from '../settings/settingsSchema';
import type { EmbeddedAgent, EmbeddedAgentSource } from './embeddedAgent';
import { SessionsError, errorMessage } from '../../core/errors';
import { expiredTokenProblem } from '../../core/serverToken';

/** The shipped demo scenario: run when chosen (ultraplan.agent.choice = demo) or when no agent is installed. */
export const DEMO_SCENARIO = path.join('examples', 'demo.json');
export const DEMO_LABEL = 'Demo (scripted)';

/** SecretStorage key of the server token for one server origin (never a setting, never logged). */
export function serverTokenKey(serverUrl: string): string {
  return `ultraplan.serverToken:${new URL(serverUrl).origin}`;
}

export function scriptedAgentSource(extensionUri: vscode.Uri): EmbeddedAgentSource {
  return async (settings) => {
    const configured = settings['embedded.scenario'];
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const file = configured
      ? path.isAbsolute(configured) || !root
        ? configured
        : path.join(root, configured)
      : path.join(extensionUri.fsPath, DEMO_SCENARIO);
    // Read here too, so a broken file is reported in this window before a session is made. The
    // scenario's reader is a chunk of its own: the service runs the agent, the window only checks the file.
    const { loadScenarioFile } = await import('../../agents/catalogue/scenario');
    await loadScenarioFile(file);
    // Every scripted run is a demo, never real work; a configured scenario names its file.
    const label = configured ? `${DEMO_LABEL}: ${path.basename(file)}` : DEMO_LABEL;
    return { launch: { kind: 'scripted', file: path.resolve(file), label }, label, demo: true };
  };
}

export interface BackendsOptions {
  context: Pick<vscode.ExtensionContext, 'secrets' | 'globalState'>;
  log: vscode.LogOutputChannel;
  embeddedAgent: EmbeddedAgentSource;
  /** The local session service: its program (dist/server.mjs) and the version it runs as. */
  service: { serverScript: string; version: string };
}

/** The embedded backend's archive rules: a failed session's agent may still run (a poll that timed out): archiving ends it. */

const UNTRUSTED_EMBEDDED =
  'The embedded backend runs an agent on this machine, which an untrusted workspace does not allow. Trust the workspace, or use a server backend.';

export class Backends implements vscode.Disposable {
  readonly #options: BackendsOptions;
  readonly #agentNotice: AgentNotice;
  /** The client of the local session service, made on first use. */
  #embedded: Promise<ServiceBackend> | undefined;
  readonly #servers = new Map<string, HttpBackend>();
  /** Servers read without a token (sessions attached read-only), one per URL. */
  readonly #tokenlessServers = new Map<string, HttpBackend>();
  /** Every Claude Code on the web backend made (each launch checks eligibility afresh). */
  readonly #claudeWeb = new Set<ClaudeWebBackend>();
  /** The one checked by the launch's preflight, taken by the next session start. */
  #claudeWebPrepared: PreparedClaudeWeb | undefined;
  /** Shared by sessions re-attached after a reload. */
  #claudeWebRestored: Promise<ClaudeWebBackend> | undefined;
  /** Every Jules backend made. */
  readonly #jules = new Set<SessionBackend>();
  /** Ends a wait to restart the service once nothing is live. */
  #disposed = false;

  constructor(options: BackendsOptions) {
    this.#options = options;
    this.#agentNotice = new AgentNotice(options.log);
  }

  /**
   * The embedded backend with the agent for a new session, chosen now from the settings.
   * Refuses in an untrusted workspace: an embedded agent runs on this machine.
   */
  async embedded(settings: UltraplanSettings): Promise<{ backend: SessionBackend; agent: EmbeddedAgent }> {
    if (!vscode.workspace.isTrusted) throw new Error(UNTRUSTED_EMBEDDED);
    const agent = await this.#options.embeddedAgent(settings);
    return { backend: await this.#service(settings), agent };
  }

  /** The client of this user's session service (it is started by the first request that needs it). */
  #service(settings: UltraplanSettings): Promise<ServiceBackend> {
    this.#embedded ??= this.#connectService(settings);
    return this.#embedded;
  }

  /** The sessions of this user's session service if it runs (never started for this); null when it does not. */
  async serviceSessionsIfRunning(settings: UltraplanSettings, signal?: AbortSignal): Promise<SessionResource[] | null> {
    if (!vscode.workspace.isTrusted) return null;
    return (await this.#service(settings)).listIfRunning(signal);
  }

  /** Loaded at first use, not with the extension: a window without embedded sessions never needs it. */
  async #connectService(settings: UltraplanSettings): Promise<ServiceBackend> {
    const { localServiceBackend } = await import('./localServiceBackend');
    return localServiceBackend({
      settings,
      service: this.#options.service,
      log: this.#options.log,
      memento: this.#options.context.globalState,
      closed: () => this.#disposed,
      loggingFetch,
    });
  }

  /** The HTTP backend for a server URL (one per URL). */
  server(serverUrl: string): HttpBackend {
    const existing = this.#servers.get(serverUrl);
    if (existing) return existing;
    const log = this.#options.log;
    const secrets = this.#options.context.secrets;
    const key = serverTokenKey(serverUrl);
    const backend = connectServer(
      {
        baseUrl: serverUrl,
        getToken: async () => {
          const signedIn = await signedInTokenFor(serverUrl);
          if (signedIn) return signedIn;
          const token = await secrets.get(key);
          if (!token)
            throw new Error(
              `Nobody is signed in to ${new URL(serverUrl).origin} and no token is set; run "Ultraplan: Sign In to Server…" or "Ultraplan: Set Server Token…".`,
            );
          // An OIDC token that ran out: say so and how to renew, rather than sending it to be refused.
          const expired = expiredTokenProblem(token, new URL(serverUrl).origin);
          if (expired !== null) throw new SessionsError('unauthorized', expired);
          return token;
        },
        log: (line) => log.debug(`http: ${line}`),
        fetch: loggingFetch(log),
      },
      { preferStream: true },
    );
    this.#servers.set(serverUrl, backend);
    return backend;
  }

  /**
   * A server read without a token, for a session attached read-only: only a server that runs
   * without one (`--insecure-no-auth`, loopback only) answers it; no decision is ever sent through it.
   */
  tokenlessServer(serverUrl: string): HttpBackend {
    const existing = this.#tokenlessServers.get(serverUrl);
    if (existing) return existing;
    const log = this.#options.log;
    const backend = connectServer(
      { baseUrl: serverUrl, getToken: async () => null, log: (line) => log.debug(`http: ${line}`), fetch: loggingFetch(log) },
      { preferStream: true, label: `Server ${serverUrl} (no token)` },
    );
    this.#tokenlessServers.set(serverUrl, backend);
    return backend;
  }

  /**
   * Claude Code on the web: checks eligibility (login, organization, environment, repository,
   * GitHub app) and makes a backend; throws the first failed check as a ClaudeWebError. The
   * result is kept for the next session start with the same settings.
   */
  async prepareClaudeWeb(settings: UltraplanSettings, signal?: AbortSignal): Promise<PreparedClaudeWeb> {
    const options = claudeWebBackendOptions(settings, this.#options.log, signal);
    // The backend is a chunk of its own, loaded the first time it is used.
    const { createClaudeWebBackend } = await import('../../client/claudeWeb/backend');
    const { backend, warnings } = await createClaudeWebBackend(options);
    this.#claudeWeb.add(backend);
    const prepared: PreparedClaudeWeb = { backend, warnings, key: options.key, at: Date.now() };
    this.#claudeWebPrepared = prepared;
    return prepared;
  }

  /** The prepared backend for these settings if it is recent, else a freshly checked one. */
  async #claudeWebForLaunch(settings: UltraplanSettings): Promise<ClaudeWebBackend> {
    const prepared = this.#claudeWebPrepared;
    this.#claudeWebPrepared = undefined;
    const key = claudeWebBackendOptions(settings, this.#options.log).key;
    if (prepared && prepared.key === key && Date.now() - prepared.at < 5 * 60_000) return prepared.backend;
    return (await this.prepareClaudeWeb(settings)).backend;
  }

  async hasServerToken(serverUrl: string): Promise<boolean> {
    if (await signedInTokenFor(serverUrl)) return true;
    return Boolean(await this.#options.context.secrets.get(serverTokenKey(serverUrl)));
  }

  /** The backend to start a new session on, per the settings. */
  async forNewSession(
    settings: UltraplanSettings,
  ): Promise<{ backend: SessionBackend; demo: boolean; serverUrl?: string; agentLabel?: string }> {
    switch (settings.backend) {
      case 'embedded': {
        const { backend, agent } = await this.embedded(settings);
        if (agent.notice) this.#agentNotice.show(agent.notice, settings['agent.noAgentNotice']);
        const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
        return { backend: launching(backend, agent.launch, folder), demo: agent.demo, agentLabel: agent.label };
      }
      case 'server':
        return { backend: this.server(settings['server.url']), demo: false, serverUrl: settings['server.url'] };
      case 'claude-web':
        return { backend: await this.#claudeWebForLaunch(settings), demo: false };
      case 'jules':
        return { backend: await this.#julesFor(true, settings['jules.baseUrl']), demo: false };
    }
  }

  /** The backend a persisted session lives on (its own server URL, not today's setting). */
  async forRestored(
    kind: BackendKind,
    settings: UltraplanSettings,
    serverUrl: string | undefined,
    options: { readOnly?: boolean } = {},
  ): Promise<SessionBackend> {
    switch (kind) {
      case 'embedded':
        if (!vscode.workspace.isTrusted) throw new Error(UNTRUSTED_EMBEDDED);
        return this.#service(settings);
      case 'server':
        if (!serverUrl) throw new Error('the stored session has no server address');
        // A session attached read-only for want of a token is read the same way after a reload.
        if (options.readOnly && !(await this.hasServerToken(serverUrl))) return this.tokenlessServer(serverUrl);
        return this.server(serverUrl);
      case 'claude-web': {
        // Re-attaching checks only the login and the organization, once for every re-attached
        // session; a failed check is not kept, so a retry checks again.
        if (!this.#claudeWebRestored) {
          const opening = import('../../client/claudeWeb/backend')
            .then(({ attachClaudeWebBackend }) => attachClaudeWebBackend(claudeWebBackendOptions(settings, this.#options.log)))
            .then((backend) => {
              this.#claudeWeb.add(backend);
              return backend;
            });
          this.#claudeWebRestored = opening;
          opening.catch(() => {
            if (this.#claudeWebRestored === opening) this.#claudeWebRestored = undefined;
          });
        }
        return this.#claudeWebRestored;
      }
      case 'jules':
        return this.#julesFor(false, settings['jules.baseUrl']);
    }
  }

  /** A Jules backend (to start sessions, or to follow existing ones); a chunk loaded the first time Jules is used. */
  async #julesFor(launch: boolean, baseUrl: string): Promise<SessionBackend> {
    const { julesBackend } = await import('../jules/julesBackend');
    const backend = await julesBackend(launch, baseUrl, this.#options.context.secrets, this.#options.log);
    this.#jules.add(backend);
    return backend;
  }

  async dispose(): Promise<void> {
    this.#disposed = true;
    // The service and its agents keep running: sessions outlive the window (docs/service.md).
    const embedded = this.#embedded;
    const servers: SessionBackend[] = [...this.#servers.values(), ...this.#tokenlessServers.values(), ...this.#claudeWeb, ...this.#jules];
    this.#embedded = undefined;
    this.#servers.clear();
    this.#tokenlessServers.clear();
    this.#claudeWeb.clear();
    this.#claudeWebPrepared = undefined;
    this.#claudeWebRestored = undefined;
    this.#jules.clear();
    await Promise.allSettled([...servers.map((s) => s.dispose()), embedded?.then((e) => e.dispose())]);
  }
}

/**
 * The backend, with its new sessions run by `launch` (bound when chosen, so two launches in flight
 * cannot swap agents) and named after this window's folder (other windows on it follow them too).
 */
function launching(backend: SessionBackend, launch: AgentLaunch, folder: string | undefined): SessionBackend {
  const launched: SessionBackend & Pick<ServiceBackend, 'clientFor'> = {
    kind: backend.kind,
    label: backend.label,
    transport: backend.transport,
    createSession: (request, signal) => backend.createSession(withAgentLaunch(request, launch, folder), signal),
    getSession: (sessionId, signal) => backend.getSession(sessionId, signal),
    listSessions: (signal) => backend.listSessions?.(signal) ?? Promise.resolve([]),
    sendEvents: (sessionId, events, signal) => backend.sendEvents(sessionId, events, signal),
    archive: (sessionId, signal) => backend.archive(sessionId, signal),
    dispose: async () => {},
    // The session's record of the changes since approval is read from its service (verification).
    clientFor: async (sessionId) => (backend as Partial<Pick<ServiceBackend, 'clientFor'>>).clientFor?.(sessionId),
    ...(backend.lifecycle ? { lifecycle: backend.lifecycle } : {}),
  };
  return launched;
}

/**
 * fetch that logs each request: method, path and status, never headers or bodies (the token
 * travels in a header). Changes (POST) at info; reads, which polling repeats, at debug.
 */
export function loggingFetch(log: vscode.LogOutputChannel, inner: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const url = new URL(input instanceof Request ? input.url : String(input));
    const what = `${method} ${url.origin}${url.pathname}`;
    const write = (line: string) => (method === 'GET' ? log.debug(line) : log.info(line));
    const started = Date.now();
    try {
      const res = await inner(input, init);
      write(`http: ${what} -> ${res.status} (${Date.now() - started} ms)`);
      return res;
    } catch (err) {
      write(`http: ${what} failed: ${errorMessage(err)}`);
      throw err;
    }
  };
}

/** The signed-in person's token for a server, if any: the sign-in's module loads with the first server request, not at startup. */
async function signedInTokenFor(serverUrl: string): Promise<string | undefined> {
  const { signedInToken } = await import('../auth/serverAuthId');
  return signedInToken(serverUrl);
}

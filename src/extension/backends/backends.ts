// Creates the SessionBackend for a backend kind and keeps it for the extension's lifetime:
// embedded = an in-process SessionHost (sessions journaled under the extension's storage so they
// survive a reload) driving the agent the embedded agent source provides; server = HttpBackend
// over SessionsClient with the token from SecretStorage; claude-web = Claude Code on the web with
// the user's Claude Code login, eligibility checked afresh for each launch. Later agent sources
// (ACP) plug in here: one provider per kind, one function for the embedded agent.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { BackendKind, SessionBackend } from '../../sessions/backend';
import { claudeWebBackendOptions, type PreparedClaudeWeb } from '../claudeWeb/claudeWebBackend';
import type { ClaudeWebBackend } from '../../sessions/claudeWeb';
import { EmbeddedBackend } from '../../sessions/embeddedBackend';
import { SessionHost } from '../../sessions/host';
import type { HttpBackend } from '../../sessions/httpBackend';
import { loadScenarioFile, scriptedAgentFactory } from '../../sessions/scriptedAgent';
import { FileSessionStore } from '../../sessions/store';
import { AgentNotice } from '../agents/agentNotice';
import type { UltraplanSettings } from '../settings/settingsSchema';
import type { EmbeddedAgent, EmbeddedAgentSource } from './embeddedAgent';

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
    const scenario = await loadScenarioFile(file);
    // Every scripted run is a demo, never real work; a configured scenario names its file.
    const label = configured ? `${DEMO_LABEL}: ${path.basename(file)}` : DEMO_LABEL;
    return { factory: scriptedAgentFactory(scenario, label), label, demo: true };
  };
}

export interface BackendsOptions {
  context: Pick<vscode.ExtensionContext, 'secrets' | 'storageUri' | 'globalStorageUri'>;
  log: vscode.LogOutputChannel;
  embeddedAgent: EmbeddedAgentSource;
}

export class Backends implements vscode.Disposable {
  readonly #options: BackendsOptions;
  readonly #agentNotice: AgentNotice;
  #embedded: Promise<{ backend: EmbeddedBackend }> | undefined;
  /**
   * The agent chosen for the latest new session (the settings are read per session, so a change
   * in "Choose Backend…" applies to the next one). The host's own factory hands it out to
   * sessions it restarts: resumed after a reload, or sent a message after their agent was lost.
   */
  #embeddedAgent: EmbeddedAgent | undefined;
  readonly #servers = new Map<string, HttpBackend>();
  /** Servers read without a token (sessions attached read-only), one per URL. */
  readonly #tokenlessServers = new Map<string, HttpBackend>();
  /** Every Claude Code on the web backend made (each launch checks eligibility afresh). */
  readonly #claudeWeb = new Set<ClaudeWebBackend>();
  /** The one checked by the launch's preflight, taken by the next session start. */
  #claudeWebPrepared: PreparedClaudeWeb | undefined;
  /** Shared by sessions re-attached after a reload. */
  #claudeWebRestored: Promise<ClaudeWebBackend> | undefined;

  constructor(options: BackendsOptions) {
    this.#options = options;
    this.#agentNotice = new AgentNotice(options.log);
  }

  /** Where embedded sessions are journaled (per workspace when there is one). */
  #embeddedDataDir(): string {
    const ctx = this.#options.context;
    return path.join((ctx.storageUri ?? ctx.globalStorageUri).fsPath, 'embedded');
  }

  /**
   * The embedded backend with the agent for a new session, chosen now from the settings. Opens
   * the host (loading and resuming journaled sessions) on first use. Refuses in an untrusted
   * workspace: an embedded agent runs on this machine.
   */
  async embedded(settings: UltraplanSettings): Promise<{ backend: EmbeddedBackend; agent: EmbeddedAgent }> {
    if (!vscode.workspace.isTrusted) {
      throw new Error(
        'The embedded backend runs an agent on this machine, which an untrusted workspace does not allow. Trust the workspace, or use a server backend.',
      );
    }
    const agent = await this.#options.embeddedAgent(settings);
    this.#embeddedAgent = agent;
    return { backend: await this.#embeddedHost(), agent };
  }

  /** For re-attached sessions: the host, with the settings' agent for the sessions it restarts. */
  async #embeddedRestored(settings: UltraplanSettings): Promise<EmbeddedBackend> {
    if (!vscode.workspace.isTrusted) {
      throw new Error(
        'The embedded backend runs an agent on this machine, which an untrusted workspace does not allow. Trust the workspace, or use a server backend.',
      );
    }
    if (!this.#embeddedAgent) {
      // A chosen agent that cannot run must not keep the sessions from re-attaching.
      try {
        this.#embeddedAgent = await this.#options.embeddedAgent(settings);
      } catch (err) {
        this.#options.log.warn(`embedded agent for restored sessions: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return this.#embeddedHost();
  }

  async #embeddedHost(): Promise<EmbeddedBackend> {
    if (!this.#embedded) {
      const log = this.#options.log;
      const opening = (async () => {
        const dataDir = this.#embeddedDataDir();
        const host = await SessionHost.open({
          // Read when the host creates an agent, never before (synchronously in createSession).
          agentFactory: (o) => {
            const agent = this.#embeddedAgent;
            if (!agent) throw new Error('no embedded agent is chosen; start a new session to choose one');
            return agent.factory(o);
          },
          store: new FileSessionStore(dataDir, { log: (l) => log.debug(`embedded store: ${l}`) }),
          log: (l) => log.debug(`embedded host: ${l}`),
        });
        log.info(`embedded backend ready; sessions kept in ${dataDir}`);
        // A failed session's agent may still run (a poll that timed out): archiving ends it.
        const lifecycle = { archiveOnApprove: false, archiveOnTeleport: true, archiveOnStop: true, archiveOnFailure: true };
        return { backend: new EmbeddedBackend({ host, label: 'Embedded', lifecycle }) };
      })();
      this.#embedded = opening;
      // A failed open (bad scenario file, …) must not stick: the person fixes it and retries.
      opening.catch(() => {
        if (this.#embedded === opening) this.#embedded = undefined;
      });
    }
    return (await this.#embedded).backend;
  }

  /** The HTTP backend for a server URL (one per URL). */
  async server(serverUrl: string): Promise<HttpBackend> {
    // The server's client is a chunk of its own, loaded with the first server backend.
    const { connectServer } = await import('../../sessions/serverConnection');
    const existing = this.#servers.get(serverUrl);
    if (existing) return existing;
    const log = this.#options.log;
    const secrets = this.#options.context.secrets;
    const key = serverTokenKey(serverUrl);
    const backend = connectServer(
      {
        baseUrl: serverUrl,
        getToken: async () => {
          const token = await secrets.get(key);
          if (!token) throw new Error(`No token is set for ${new URL(serverUrl).origin}; run "Ultraplan: Set Server Token…".`);
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
  async tokenlessServer(serverUrl: string): Promise<HttpBackend> {
    const { connectServer } = await import('../../sessions/serverConnection');
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
    const { createClaudeWebBackend } = await import('../../sessions/claudeWeb/backend');
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
        return { backend: backend.forAgent(agent.factory), demo: agent.demo, agentLabel: agent.label };
      }
      case 'server':
        return { backend: await this.server(settings['server.url']), demo: false, serverUrl: settings['server.url'] };
      case 'claude-web':
        return { backend: await this.#claudeWebForLaunch(settings), demo: false };
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
        return this.#embeddedRestored(settings);
      case 'server':
        if (!serverUrl) throw new Error('the stored session has no server address');
        // A session attached read-only for want of a token is read the same way after a reload.
        if (options.readOnly && !(await this.hasServerToken(serverUrl))) return this.tokenlessServer(serverUrl);
        return this.server(serverUrl);
      case 'claude-web': {
        // Re-attaching checks only the login and the organization, once for every re-attached
        // session; a failed check is not kept, so a retry checks again.
        if (!this.#claudeWebRestored) {
          const opening = import('../../sessions/claudeWeb/backend')
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
    }
  }

  async dispose(): Promise<void> {
    const embedded = this.#embedded;
    this.#embedded = undefined;
    const servers: SessionBackend[] = [...this.#servers.values(), ...this.#tokenlessServers.values(), ...this.#claudeWeb];
    this.#servers.clear();
    this.#tokenlessServers.clear();
    this.#claudeWeb.clear();
    this.#claudeWebPrepared = undefined;
    this.#claudeWebRestored = undefined;
    await Promise.allSettled([
      ...servers.map((s) => s.dispose()),
      // Closing the host stops its agents (and every process they started).
      embedded?.then((e) => e.backend.dispose()),
    ]);
  }
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
      write(`http: ${what} failed: ${err instanceof Error ? err.message : String(err)}`);
      throw err;
    }
  };
}

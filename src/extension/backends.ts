// Creates the SessionBackend for a backend kind and keeps it for the extension's lifetime:
// embedded = an in-process SessionHost (sessions journaled under the extension's storage so they
// survive a reload) driving the agent the embedded agent source provides; server = HttpBackend
// over SessionsClient with the token from SecretStorage. Later backends (claude-web) and agent
// sources (ACP) plug in here: one provider per kind, one function for the embedded agent.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentFactory } from '../sessions/agent';
import type { BackendKind, SessionBackend } from '../sessions/backend';
import { SessionsClient } from '../sessions/client';
import { EmbeddedBackend } from '../sessions/embeddedBackend';
import { SessionHost } from '../sessions/host';
import { HttpBackend } from '../sessions/httpBackend';
import { loadScenarioFile, scriptedAgentFactory } from '../sessions/scriptedAgent';
import { FileSessionStore } from '../sessions/store';
import type { UltraplanSettings } from './settingsSchema';

/** The shipped demo scenario; the embedded backend runs it until agent selection arrives. */
export const DEMO_SCENARIO = path.join('examples', 'demo.json');
export const DEMO_LABEL = 'Demo (scripted)';

/** SecretStorage key of the server token for one server origin (never a setting, never logged). */
export function serverTokenKey(serverUrl: string): string {
  return `ultraplan.serverToken:${new URL(serverUrl).origin}`;
}

/** What the embedded host runs for each session. Issue 5 (ACP agents) replaces the scripted source. */
export interface EmbeddedAgent {
  factory: AgentFactory;
  /** For people: "Demo (scripted)", "Scripted scenario (x.json)", "Claude (ACP)". */
  label: string;
  /** Scripted demo: labelled as a demo everywhere it shows. */
  demo: boolean;
}

export type EmbeddedAgentSource = (settings: UltraplanSettings) => Promise<EmbeddedAgent>;

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
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  embeddedAgent: EmbeddedAgentSource;
}

export class Backends implements vscode.Disposable {
  readonly #options: BackendsOptions;
  #embedded: Promise<{ backend: EmbeddedBackend; agent: EmbeddedAgent }> | undefined;
  readonly #servers = new Map<string, HttpBackend>();

  constructor(options: BackendsOptions) {
    this.#options = options;
  }

  /** Where embedded sessions are journaled (per workspace when there is one). */
  #embeddedDataDir(): string {
    const ctx = this.#options.context;
    return path.join((ctx.storageUri ?? ctx.globalStorageUri).fsPath, 'embedded');
  }

  /**
   * The embedded backend: opens the host (loading and resuming journaled sessions) on first use.
   * Refuses in an untrusted workspace: an embedded agent runs on this machine.
   */
  async embedded(settings: UltraplanSettings): Promise<{ backend: EmbeddedBackend; agent: EmbeddedAgent }> {
    if (!vscode.workspace.isTrusted) {
      throw new Error('The embedded backend runs an agent on this machine, which an untrusted workspace does not allow. Trust the workspace, or use a server backend.');
    }
    if (!this.#embedded) {
      const log = this.#options.log;
      const opening = (async () => {
        const agent = await this.#options.embeddedAgent(settings);
        const dataDir = this.#embeddedDataDir();
        const host = await SessionHost.open({
          agentFactory: agent.factory,
          store: new FileSessionStore(dataDir, { log: (l) => log.debug(`embedded store: ${l}`) }),
          log: (l) => log.debug(`embedded host: ${l}`),
        });
        log.info(`embedded backend ready (${agent.label}); sessions kept in ${dataDir}`);
        return { backend: new EmbeddedBackend({ host, label: `Embedded · ${agent.label}` }), agent };
      })();
      this.#embedded = opening;
      // A failed open (bad scenario file, …) must not stick: the person fixes it and retries.
      opening.catch(() => {
        if (this.#embedded === opening) this.#embedded = undefined;
      });
    }
    return this.#embedded;
  }

  /** The HTTP backend for a server URL (one per URL). */
  server(serverUrl: string): HttpBackend {
    const existing = this.#servers.get(serverUrl);
    if (existing) return existing;
    const log = this.#options.log;
    const secrets = this.#options.context.secrets;
    const key = serverTokenKey(serverUrl);
    const client = new SessionsClient({
      baseUrl: serverUrl,
      getToken: async () => {
        const token = await secrets.get(key);
        if (!token) throw new Error(`No token is set for ${new URL(serverUrl).origin}; run "Ultraplan: Set Server Token…".`);
        return token;
      },
      log: (line) => log.debug(`http: ${line}`),
    });
    const backend = new HttpBackend({ client, preferStream: true });
    this.#servers.set(serverUrl, backend);
    return backend;
  }

  async hasServerToken(serverUrl: string): Promise<boolean> {
    return Boolean(await this.#options.context.secrets.get(serverTokenKey(serverUrl)));
  }

  /** The backend to start a new session on, per the settings. */
  async forNewSession(settings: UltraplanSettings): Promise<{ backend: SessionBackend; demo: boolean; serverUrl?: string }> {
    switch (settings.backend) {
      case 'embedded': {
        const { backend, agent } = await this.embedded(settings);
        return { backend, demo: agent.demo };
      }
      case 'server':
        return { backend: this.server(settings['server.url']), demo: false, serverUrl: settings['server.url'] };
    }
  }

  /** The backend a persisted session lives on (its own server URL, not today's setting). */
  async forRestored(kind: BackendKind, settings: UltraplanSettings, serverUrl: string | undefined): Promise<SessionBackend> {
    switch (kind) {
      case 'embedded':
        return (await this.embedded(settings)).backend;
      case 'server':
        if (!serverUrl) throw new Error('the stored session has no server address');
        return this.server(serverUrl);
      case 'claude-web':
        throw new Error('Claude Code on the web is not available in this version');
    }
  }

  async dispose(): Promise<void> {
    const embedded = this.#embedded;
    this.#embedded = undefined;
    const servers = [...this.#servers.values()];
    this.#servers.clear();
    await Promise.allSettled([
      ...servers.map((s) => s.dispose()),
      // Closing the host stops its agents (and every process they started).
      embedded?.then((e) => e.backend.dispose()),
    ]);
  }
}

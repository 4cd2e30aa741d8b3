// Every session the extension follows: starting, attaching and restoring them, and the one place a
// change is announced from: each session's model hands its snapshot here, and the status bar, the
// inbox, the review panel and persistence read it (docs/architecture.md, "the fan-out"). The
// panel's requests are answered by ReviewRequests, persistence is the SessionStore's. Embedded
// sessions restored in an untrusted workspace wait for trust and re-attach when it is granted.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { Disposable } from '../../core/lifecycle';
import type { BackendKind, SessionBackend } from '../../sessions/backend';
import { sameServerUrl, sameSessionId } from '../../core/attachTarget';
import { displayTitle } from '../../core/sessionListing';
import type { PanelAnswer, PanelRequest } from '../../core/panelMessages';
import { setPlanModeEvent, userMessageEvent } from '../../core/protocol';
import type { SessionSnapshot } from '../../core/sessionSnapshot';
import type { Backends } from '../backends/backends';
import { voiceFor } from '../backends/backendVoice';
import { FollowedSession, type FollowedSessionOptions, type FreshSession } from './followedSession';
import { vscodeNotifier } from './vscodeNotifier';
import type { SessionNotifier } from './sessionNotifier';
import type { PersistedSession } from '../../core/persistedSessions';
import { toPersisted } from '../../core/sessionRecord';
import type { ReviewPanel } from '../review/reviewPanel';
import type { SettingsReader } from '../settings/settings';
import type { UltraplanSettings } from '../settings/settingsSchema';
import { PhaseStatusBarItem } from '../status/statusBar';
import { PermissionDetailsView } from './permissionPrompts';
import { orderByAttention } from '../../core/statusSummary';
import { ReviewRequests } from './reviewRequests';
import { ShownReview } from './shownReview';
import { SessionStore, detachedBackend } from './sessionStore';

export interface FollowedSessionsOptions {
  context: Pick<vscode.ExtensionContext, 'workspaceState' | 'extensionUri'>;
  log: vscode.LogOutputChannel;
  settings: Pick<SettingsReader, 'read'>;
  backends: Pick<Backends, 'forRestored' | 'forNewSession' | 'hasServerToken'>;
  /** Workspace trust; VS Code's by default (tests pass their own). */
  trust?: WorkspaceTrust;
}

/** What sessions need to know about workspace trust. */
export interface WorkspaceTrust {
  readonly isTrusted: boolean;
  onDidGrant(listener: () => unknown): vscode.Disposable;
}

const vscodeTrust: WorkspaceTrust = {
  get isTrusted() {
    return vscode.workspace.isTrusted;
  },
  onDidGrant: (listener) => vscode.workspace.onDidGrantWorkspaceTrust(listener),
};

const MAX_TITLE = 80;
/** Why an attached archived session takes no decisions (shown in its review). */
export const ARCHIVED_READ_ONLY =
  'Read-only: this session is archived, so it takes no more decisions. Its plans and history are shown as they were.';

export function titleFromPrompt(prompt: string): string {
  const line =
    prompt
      .split(/\r?\n/)
      .find((l) => l.trim().length > 0)
      ?.trim() ?? 'plan';
  return line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 1)}…` : line;
}

export class FollowedSessions extends Disposable {
  readonly #o: FollowedSessionsOptions;
  readonly #sessions = new Map<string, FollowedSession>();
  readonly #statusBar = this._register(new PhaseStatusBarItem());
  readonly #permissionDetails = this._register(new PermissionDetailsView());
  readonly #notifier: SessionNotifier = vscodeNotifier(this.#permissionDetails);
  readonly #store: SessionStore;
  readonly #requests: ReviewRequests;
  readonly #review: ShownReview;
  readonly #onDidChange = this._register(new vscode.EventEmitter<void>());
  /** Fires when a session was added, removed or changed in anything a view shows. */
  readonly onDidChange = this.#onDidChange.event;
  /** Embedded sessions restored in an untrusted workspace: they re-attach once trust is granted. */
  readonly #waitingForTrust = new Map<string, PersistedSession>();
  readonly #trust: WorkspaceTrust;
  #persistTimer: NodeJS.Timeout | undefined;
  /** Resolves once persisted sessions are re-attached (the panel serializer waits for it). */
  readonly restored: Promise<void>;

  constructor(options: FollowedSessionsOptions) {
    super();
    this.#o = options;
    this.#trust = options.trust ?? vscodeTrust;
    this.#store = new SessionStore(options.context.workspaceState);
    this.#requests = this._register(
      new ReviewRequests({
        log: options.log,
        settings: options.settings,
        notifier: this.#notifier,
        session: (key) => this.#sessions.get(key),
        show: (session) => this.show(session, true),
        persistNow: () => this.persistNow(),
      }),
    );
    this.#review = new ShownReview({
      context: options.context,
      log: options.log,
      session: (key) => this.#sessions.get(key),
      ordered: (filter) => this.ordered(filter),
      answer: (request) => this.answer(request),
      saveDraft: (draft) => this.#requests.saveDraft(draft),
    });
    this._register(this.#trust.onDidGrant(() => void this.reattachTrusted()));
    this.restored = this.#restore();
  }

  /** Asks a session's open permission requests again (the status bar's click); without a key, the first waiting. */
  askOpenPermissions(key: unknown): void {
    const session = typeof key === 'string' ? this.#sessions.get(key) : this.ordered((c) => c.state.permissions.length > 0)[0];
    session?.permissions.askAgain();
  }

  /** A review panel the workbench revived after a reload: show the session it should. */
  async restorePanel(panel: ReviewPanel, savedKey: string | undefined): Promise<void> {
    await this.restored;
    this.#review.restore(panel, savedKey);
  }

  // -------------------------------------------------------------------------------------------
  // Persistence

  async #restore(): Promise<void> {
    const { log } = this.#o;
    const { sessions, dropped } = this.#store.read();
    for (const d of dropped) log.warn(`persisted sessions: dropped an unreadable entry (${d})`);
    if (sessions.length === 0) return;
    const settings = this.#o.settings.read();
    for (const s of sessions) {
      if (s.finished) {
        this.#addRestored(s, undefined, settings);
        continue;
      }
      if (s.backendKind === 'embedded' && !this.#trust.isTrusted) {
        // The agent runs on this machine, which Restricted Mode does not allow: shown as it was,
        // and followed again once the person trusts the workspace.
        this.#waitingForTrust.set(s.key, s);
        this.#addRestored(s, undefined, settings).setOutcome(
          'Waiting for workspace trust: this session runs an agent on this machine. Trust the workspace to follow it again.',
          'warning',
        );
        log.info(`session ${s.sessionId} waits for workspace trust before it re-attaches`);
        continue;
      }
      try {
        const backend = await this.#o.backends.forRestored(s.backendKind, settings, s.serverUrl, { readOnly: s.readOnly !== undefined });
        const session = this.#addRestored(s, backend, settings);
        session.start();
        log.info(`re-attached session ${s.sessionId} (${s.backendLabel}) from cursor ${s.cursor ?? '-'}`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        log.error(`could not re-attach session ${s.sessionId}: ${message}`);
        this.#addRestored(
          { ...s, finished: true, phase: 'failed' },
          undefined,
          settings,
          `Could not re-attach after the reload: ${message}`,
        );
        void vscode.window.showErrorMessage(`Ultraplan: could not re-attach "${s.title}": ${message}`);
      }
    }
    this.#changed();
    this.#review.reviveSoon();
  }

  /**
   * Re-attaches the embedded sessions that waited for workspace trust (called when it is granted).
   * Each is followed again from its persisted cursor, replaying its log like after a reload.
   */
  async reattachTrusted(): Promise<void> {
    const { log } = this.#o;
    log.info('workspace trusted: embedded agents and tasks are allowed now');
    if (this.#waitingForTrust.size === 0) return;
    const settings = this.#o.settings.read();
    for (const [key, persisted] of [...this.#waitingForTrust]) {
      this.#waitingForTrust.delete(key);
      // What the person did meanwhile (drafts) is in the waiting session; keep it.
      const shown = this.#sessions.get(key)?.snapshot;
      const current = shown ? toPersisted(shown) : undefined;
      const s: PersistedSession = current ? { ...current, finished: false, phase: persisted.phase } : persisted;
      delete s.outcome;
      try {
        const backend = await this.#o.backends.forRestored(s.backendKind, settings, s.serverUrl, { readOnly: s.readOnly !== undefined });
        this.#sessions.get(key)?.dispose();
        const session = this.#addRestored(s, backend, settings);
        session.start();
        log.info(`re-attached session ${s.sessionId} (${s.backendLabel}) after trust was granted`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        log.error(`could not re-attach session ${s.sessionId}: ${message}`);
        this.#addRestored({ ...s, finished: true, phase: 'failed' }, undefined, settings, `Could not re-attach: ${message}`);
      }
    }
    this.#changed();
    this.#review.updateSoon();
    await this.persistNow();
  }

  #addRestored(s: PersistedSession, backend: SessionBackend | undefined, settings: UltraplanSettings, failure?: string): FollowedSession {
    const session = this.#newSession(backend ?? detachedBackend(s), settings, { restored: s });
    if (failure) session.setOutcome(failure, 'error');
    this.#sessions.set(s.key, session);
    return session;
  }

  #newSession(backend: SessionBackend, settings: UltraplanSettings, from: FollowedSessionOptions['from']): FollowedSession {
    return new FollowedSession({
      backend,
      log: this.#o.log,
      notifier: this.#notifier,
      voice: voiceFor(backend.kind, this.#o.log),
      pollIntervalMs: settings.pollIntervalMs,
      timeoutMs: settings.timeoutMinutes * 60_000,
      onSnapshot: (session) => this.#onSnapshot(session),
      notifyNeeds: () => this.#o.settings.read().notifications,
      from,
    });
  }

  #persistSoon(): void {
    if (this.#persistTimer) return;
    this.#persistTimer = setTimeout(() => {
      this.#persistTimer = undefined;
      void this.persistNow();
    }, 250);
  }

  async persistNow(): Promise<void> {
    if (this.#persistTimer) {
      clearTimeout(this.#persistTimer);
      this.#persistTimer = undefined;
    }
    // A session waiting for trust is kept as it was persisted, not as the waiting stand-in shows it.
    const written = this.all;
    const keep = await this.#store.write(
      written.map((c) => {
        const waiting = this.#waitingForTrust.get(c.key);
        return waiting ? { kept: waiting } : { snapshot: c.snapshot };
      }),
    );
    // Only what was written and not kept is let go: a session followed while the write was under
    // way (an attach, a new plan) was not in it, and stays.
    for (const c of written) if (!keep.has(c.key) && this.#sessions.get(c.key) === c) this.#sessions.delete(c.key);
  }

  // -------------------------------------------------------------------------------------------
  // Changes -> views

  /**
   * The one place a change is announced from: a session's model made a new snapshot (or the list
   * itself changed). Every surface reads the snapshots; none derives its own view.
   */
  #onSnapshot(session: FollowedSession): void {
    // Sessions replaced or forgotten may still finish a reduce; they no longer show anywhere.
    if (this.#sessions.get(session.key) !== session) return;
    this.#persistSoon();
    this.#changed();
    if (this.#review.key === session.key) this.#review.updateSoon();
  }

  #changed(): void {
    const snapshots = this.snapshots();
    const live = snapshots.filter((s) => s.state.ended === undefined);
    // With nothing in flight, the latest finished session stays visible (approved, teleported, failed).
    const latestFinished = snapshots
      .filter((s) => s.state.ended !== undefined)
      .sort((a, b) => b.state.attentionChangedAt - a.state.attentionChangedAt)[0];
    this.#statusBar.update(live.length > 0 ? live : latestFinished ? [latestFinished] : []);
    void vscode.commands.executeCommand('setContext', 'ultraplan.hasSessions', snapshots.length > 0);
    void vscode.commands.executeCommand('setContext', 'ultraplan.hasActiveSessions', live.length > 0);
    void vscode.commands.executeCommand('setContext', 'ultraplan.hasHistory', live.length < snapshots.length);
    this.#onDidChange.fire();
    void vscode.commands.executeCommand(
      'setContext',
      'ultraplan.hasPendingPlan',
      live.some((s) => s.state.canDecide),
    );
  }

  // -------------------------------------------------------------------------------------------
  // Queries

  get all(): FollowedSession[] {
    return [...this.#sessions.values()];
  }

  get(key: string): FollowedSession | undefined {
    return this.#sessions.get(key);
  }

  /** Every session's latest snapshot: what the surfaces read. */
  snapshots(): SessionSnapshot[] {
    return this.all.map((c) => c.snapshot);
  }

  /** Sessions ordered by who needs the person first. */
  ordered(filter: (c: FollowedSession) => boolean = () => true): FollowedSession[] {
    return orderByAttention(this.all.filter(filter), (c) => ({ phase: c.state.attention, changedAt: c.state.attentionChangedAt }));
  }

  // -------------------------------------------------------------------------------------------
  // History

  /** Forgets finished sessions (all of them, or those in `keys`); live ones are never touched. */
  async forgetFinished(keys?: readonly string[]): Promise<number> {
    const only = keys ? new Set(keys) : undefined;
    let forgotten = 0;
    for (const [key, c] of [...this.#sessions]) {
      if (!c.finished || this.#waitingForTrust.has(key) || (only && !only.has(key))) continue;
      c.dispose();
      this.#sessions.delete(key);
      forgotten++;
    }
    if (forgotten === 0) return 0;
    this.#o.log.info(`forgot ${forgotten} finished session${forgotten === 1 ? '' : 's'}`);
    this.#review.closeIfGone();
    this.#changed();
    await this.persistNow();
    return forgotten;
  }

  // -------------------------------------------------------------------------------------------
  // Starting a session

  async start(prompt: string, settings: UltraplanSettings): Promise<FollowedSession | undefined> {
    const { log } = this.#o;
    const title = titleFromPrompt(prompt);
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Ultraplan: starting a planning session…', cancellable: true },
      async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        try {
          progress.report({
            message:
              settings.backend === 'embedded'
                ? 'connecting to the local session service'
                : settings.backend === 'claude-web'
                  ? 'connecting to Claude Code on the web'
                  : `connecting to ${settings['server.url']}`,
          });
          const { backend, demo, serverUrl, agentLabel } = await this.#o.backends.forNewSession(settings);
          if (serverUrl && !(await this.#o.backends.hasServerToken(serverUrl))) {
            const set = 'Set Server Token…';
            void vscode.window
              .showErrorMessage(`Ultraplan: no token is set for ${new URL(serverUrl).origin}.`, set)
              .then((c) => c && vscode.commands.executeCommand('ultraplan.setServerToken', serverUrl));
            return undefined;
          }
          progress.report({ message: `creating the session on ${backend.label}` });
          log.info(`creating a session on ${backend.label}: "${title}" (${prompt.length} chars)`);
          const resource = await backend.createSession(
            {
              title: `ultraplan: ${title}`,
              events: [
                { type: 'event', data: setPlanModeEvent(`set-mode-${randomUUID()}`) },
                { type: 'event', data: userMessageEvent(prompt) },
              ],
            },
            abort.signal,
          );
          const key = `${backend.kind}:${resource.id}`;
          const fresh: FreshSession = {
            key,
            sessionId: resource.id,
            title,
            demo,
          };
          if (serverUrl) fresh.serverUrl = serverUrl;
          if (agentLabel) fresh.agentLabel = agentLabel;
          const session = this.#newSession(backend, settings, { fresh });
          this.#sessions.set(key, session);
          log.info(`session ${resource.id} created (${backend.label}${agentLabel ? ` · ${agentLabel}` : ''}${demo ? ', demo' : ''})`);
          session.start();
          this.#changed();
          await this.persistNow();
          this.show(session, true);
          return session;
        } catch (err) {
          if (abort.signal.aborted) return undefined;
          const message = err instanceof Error ? err.message : String(err);
          log.error(`starting a session failed: ${message}`);
          void vscode.window
            .showErrorMessage(`Ultraplan: could not start the planning session: ${message}`, 'Show Log')
            .then((c) => c && log.show());
          return undefined;
        }
      },
    );
  }

  // -------------------------------------------------------------------------------------------
  // Attaching to a session started elsewhere

  /** The followed session with this id on this backend (either id form; for servers, that server). */
  followed(kind: BackendKind, sessionId: string, serverUrl?: string): FollowedSession | undefined {
    return this.all.find(
      (c) =>
        c.backend.kind === kind &&
        sameSessionId(c.sessionId, sessionId) &&
        (kind !== 'server' ||
          (c.identity.serverUrl !== undefined && serverUrl !== undefined && sameServerUrl(c.identity.serverUrl, serverUrl))),
    );
  }

  /**
   * Follows a session that already exists (started by another window, a script, the browser):
   * from cursor null, so its events replay and its plan and revisions come back; persisted like
   * one started here, and shown. One already followed is only shown. An archived session, or one
   * the caller names a `readOnly` reason for, is followed read-only. Throws what the backend says
   * when it cannot read the session.
   */
  async attach(o: {
    backend: SessionBackend;
    sessionId: string;
    serverUrl?: string;
    settings: UltraplanSettings;
    readOnly?: string;
    /** false: followed without taking the review panel (a session another window started). */
    show?: boolean;
  }): Promise<FollowedSession> {
    const known = this.followed(o.backend.kind, o.sessionId, o.serverUrl);
    // Followed read-only before (no token then) and attachable now: the new follow replaces it.
    if (known && !(known.readOnly !== undefined && o.readOnly === undefined)) {
      if (o.show !== false) this.show(known);
      return known;
    }
    const resource = await o.backend.getSession(o.sessionId);
    const key = `${o.backend.kind}:${resource.id}`;
    if (known) {
      known.dispose();
      this.#sessions.delete(known.key);
    }
    const again = this.followed(o.backend.kind, resource.id, o.serverUrl) ?? this.#sessions.get(key);
    if (again) {
      if (o.show !== false) this.show(again);
      return again;
    }
    const fresh: FreshSession = {
      key,
      sessionId: resource.id,
      title: displayTitle(resource.title, resource.id),
      demo: false,
    };
    if (o.serverUrl) fresh.serverUrl = o.serverUrl;
    const readOnly = o.readOnly ?? (resource.session_status === 'archived' ? ARCHIVED_READ_ONLY : undefined);
    if (readOnly !== undefined) fresh.readOnly = readOnly;
    const session = this.#newSession(o.backend, o.settings, { fresh });
    this.#sessions.set(key, session);
    this.#o.log.info(
      `attached to session ${resource.id} on ${o.backend.label}${readOnly !== undefined ? ` (read-only: ${readOnly})` : ''}`,
    );
    // Shown before the first read: its plan arrives in the review itself, not as a toast about it.
    if (o.show !== false) this.show(session);
    session.start();
    this.#changed();
    await this.persistNow();
    return session;
  }

  // -------------------------------------------------------------------------------------------
  // The panel

  show(session: FollowedSession, preserveFocus = false): ReviewPanel {
    return this.#review.show(session, preserveFocus);
  }

  /** Answers one request from the review panel: routed by its session key, `sent` or `refused`. */
  answer(request: PanelRequest): Promise<PanelAnswer> {
    return this.#requests.answer(request);
  }

  /** Approve Edited Plan: the plan edited in an editor, still bound to the plan it was opened from. */
  approveEdited(): Promise<void> {
    return this.#requests.approveEdited();
  }

  /** Stops every follow loop, persists, then lets go of what this owns. */
  async close(): Promise<void> {
    this.#review.close();
    for (const c of this.#sessions.values()) c.dispose();
    await Promise.allSettled([...this.#sessions.values()].map((c) => c.settled()));
    await this.persistNow().catch(() => undefined);
    this.dispose();
    this.#sessions.clear();
  }
}

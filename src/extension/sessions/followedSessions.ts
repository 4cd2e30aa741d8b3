// Every session the extension follows: starting, attaching and restoring them, and the one place a
// change is announced from: each session's model hands its snapshot here, and the status bar, the
// inbox, the review panel and persistence read it, each only when its part changed
// (changedSurfaces.ts; docs/architecture.md, "The event path"). The
// panel's requests are answered by ReviewRequests, persistence is the SessionStore's. Embedded
// sessions restored in an untrusted workspace wait for trust and re-attach when it is granted.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { loadPlanSteps } from './planSteps';
import { Disposable, DisposableMap, toDisposable } from '../../core/lifecycle';
import { BACKENDS, type BackendKind } from '../../core/backendKinds';
import type { SessionBackend } from '../../core/sessionBackend';
import { planningSessionRequest, type CreateSessionRequest } from '../../core/protocol';
import { sameServerUrl, sameSessionId } from '../../core/attachTarget';
import { REVIEW_RUN_NOT_FOLLOWED, purposeOf } from '../../core/sessionPurpose';
import type { PanelAnswer, PanelRequest } from '../../core/panelMessages';
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
import { ChangedSurfaces, type InboxChange } from './changedSurfaces';
import { SessionStore, detachedBackend, isDetached } from './sessionStore';
import { attachedSession } from './attachedSession';
import { errorMessage } from '../../core/errors';
import { titleFromPrompt } from '../../core/sessionTitle';
import { vscodeTrust, type WorkspaceTrust } from './workspaceTrust';

export interface FollowedSessionsOptions {
  context: Pick<vscode.ExtensionContext, 'workspaceState' | 'extensionUri'>;
  log: vscode.LogOutputChannel;
  settings: Pick<SettingsReader, 'read'>;
  backends: Pick<Backends, 'forRestored' | 'forNewSession' | 'hasServerToken'>;
  /** Workspace trust; VS Code's by default (tests pass their own). */
  trust?: WorkspaceTrust;
}

export class FollowedSessions extends Disposable {
  readonly #o: FollowedSessionsOptions;
  /** The one owner of the sessions: one replaced, forgotten or left at close is disposed here. */
  readonly #sessions = this._register(new DisposableMap<string, FollowedSession>());
  readonly #statusBar = this._register(new PhaseStatusBarItem());
  readonly #permissionDetails = this._register(new PermissionDetailsView());
  readonly #notifier: SessionNotifier = vscodeNotifier(this.#permissionDetails);
  readonly #store: SessionStore;
  readonly #requests: ReviewRequests;
  readonly #review: ShownReview;
  /** What each surface was last given, so a change reaches only the surfaces it changes. */
  readonly #surfaces = new ChangedSurfaces();
  readonly #onDidChange = this._register(new vscode.EventEmitter<InboxChange>());
  /** Fires when a session was added, removed or changed in anything the inbox shows, with the rows to redraw. */
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
    // After the first load: an approved plan's checklist needs it; every session hears it arrive.
    void loadPlanSteps().then(
      () => {
        for (const session of this.#sessions.values()) session.planStepsLoaded();
      },
      (err: unknown) => options.log.error(`the execution checklist is unavailable: ${errorMessage(err)}`),
    );
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
    // A write after close would store no sessions at all.
    this._register(toDisposable(() => clearTimeout(this.#persistTimer)));
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
        await this.#reattach(s, settings);
        log.info(`re-attached session ${s.sessionId} (${s.backendLabel}) from cursor ${s.cursor ?? '-'}`);
      } catch (err) {
        const message = errorMessage(err);
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
      const s = this.#unfinished(key, persisted);
      try {
        await this.#reattach(s, settings);
        log.info(`re-attached session ${s.sessionId} (${s.backendLabel}) after trust was granted`);
      } catch (err) {
        const message = errorMessage(err);
        log.error(`could not re-attach session ${s.sessionId}: ${message}`);
        this.#addRestored({ ...s, finished: true, phase: 'failed' }, undefined, settings, `Could not re-attach: ${message}`);
      }
    }
    this.#changed();
    this.#review.updateSoon();
    await this.persistNow();
  }

  /** Whether `session` is shown without a live backend (restored finished after a reload). */
  isDetached(session: FollowedSession): boolean {
    return isDetached(session.backend);
  }

  /**
   * A message to a finished session restored after a reload (Continue, Fix), which has no live
   * backend here: the session is attached again, `send` hands the message to its backend, and the
   * session is followed from the start of its log through the turn the message opened.
   */
  async sendReattached(key: string, send: (backend: SessionBackend) => Promise<unknown>): Promise<FollowedSession> {
    const shown = this.#sessions.get(key);
    if (!shown) throw new Error('the session is no longer in this window');
    // Its first snapshot reaches every surface and persistence (#onSnapshot).
    return this.#reattach(this.#unfinished(key, { ...toPersisted(shown.snapshot), phase: 'executing' }), this.#o.settings.read(), send);
  }

  /** The session as shown (with what the person did meanwhile, e.g. drafts), not finished, in `persisted`'s phase. */
  #unfinished(key: string, persisted: PersistedSession): PersistedSession {
    const shown = this.#sessions.get(key)?.snapshot;
    const s: PersistedSession = { ...(shown ? toPersisted(shown) : persisted), finished: false, phase: persisted.phase };
    delete s.outcome;
    return s;
  }

  /** Follows `s` again through a live backend, replacing (and so disposing) the stand-in shown; `before` runs first. */
  async #reattach(
    s: PersistedSession,
    settings: UltraplanSettings,
    before?: (backend: SessionBackend) => Promise<unknown>,
  ): Promise<FollowedSession> {
    const backend = await this.#o.backends.forRestored(s.backendKind, settings, s.serverUrl, { readOnly: s.readOnly !== undefined });
    await before?.(backend);
    const session = this.#addRestored(s, backend, settings);
    session.start();
    return session;
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
    const written = this.all;
    const keep = await this.#write(written);
    // Only what was written and not kept is let go: a session followed while the write was under
    // way (an attach, a new plan) was not in it, and stays.
    for (const c of written) if (!keep.has(c.key) && this.#sessions.get(c.key) === c) this.#sessions.deleteAndDispose(c.key);
  }

  #write(sessions: readonly FollowedSession[]): Promise<ReadonlySet<string>> {
    // A session waiting for trust is kept as it was persisted, not as the waiting stand-in shows it.
    return this.#store.write(
      sessions.map((c) => {
        const waiting = this.#waitingForTrust.get(c.key);
        return waiting ? { kept: waiting } : { snapshot: c.snapshot };
      }),
    );
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

  /** Each surface hears a change only when its part changed (a draft saved reaches none of these). */
  #changed(): void {
    const change = this.#surfaces.next(this.snapshots());
    if (change.status) this.#statusBar.update(change.status);
    for (const [key, value] of change.context) void vscode.commands.executeCommand('setContext', key, value);
    if (change.inbox.all || change.inbox.keys.length > 0) this.#onDidChange.fire(change.inbox);
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
    for (const [key, c] of [...this.#sessions.entries()]) {
      if (!c.finished || this.#waitingForTrust.has(key) || (only && !only.has(key))) continue;
      this.#sessions.deleteAndDispose(key);
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

  /** `from`: a session that starts otherwise (from a plan file: core/planFileSession.ts), its title and creation request. */
  async start(
    prompt: string,
    settings: UltraplanSettings,
    from?: { title: string; request(title: string): CreateSessionRequest },
  ): Promise<FollowedSession | undefined> {
    const { log } = this.#o;
    const title = from?.title ?? titleFromPrompt(prompt);
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Ultraplan: starting a planning session…', cancellable: true },
      async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        try {
          progress.report({
            message: BACKENDS[settings.backend].connecting({ serverUrl: settings['server.url'] }),
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
            from ? from.request(`ultraplan: ${title}`) : planningSessionRequest(prompt, `ultraplan: ${title}`, randomUUID),
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
          const message = errorMessage(err);
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
   * when it cannot read the session, and for a review's run, which is never followed as a plan.
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
    if (purposeOf(resource) === 'review') throw new Error(`${resource.id} ${REVIEW_RUN_NOT_FOLLOWED}`);
    const key = `${o.backend.kind}:${resource.id}`;
    if (known) this.#sessions.deleteAndDispose(known.key);
    const again = this.followed(o.backend.kind, resource.id, o.serverUrl) ?? this.#sessions.get(key);
    if (again) {
      if (o.show !== false) this.show(again);
      return again;
    }
    const fresh = attachedSession(resource, key, o.serverUrl, o.readOnly);
    const { readOnly } = fresh;
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

  /**
   * Lets go of what this owns (the map disposes every session, which stops its follow loop), then
   * persists the sessions as their loops left them.
   */
  async close(): Promise<void> {
    this.#review.close();
    const sessions = this.all;
    this.dispose();
    await Promise.allSettled(sessions.map((c) => c.settled()));
    await this.#write(sessions).catch(() => undefined);
  }
}

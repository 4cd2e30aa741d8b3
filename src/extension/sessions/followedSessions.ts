// Every session the extension follows: creating and restoring controllers, persisting them in
// workspaceState (debounced), and answering the review panel's requests: each decision or reply is
// routed by the session key it carries and answered `sent` or `refused`. The status bar and the
// panel are projections of this list. Embedded sessions restored in an untrusted workspace wait
// for trust and re-attach when it is granted.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import * as z from 'zod';
import type { DecisionBinding } from '../../core/decision';
import { Disposable } from '../../core/lifecycle';
import type { BackendKind, SessionBackend } from '../../sessions/backend';
import { sameServerUrl, sameSessionId } from '../../core/attachTarget';
import { displayTitle } from '../../core/sessionListing';
import type { DecisionMessage, PanelAnswer, PanelDraft, PanelRequest, PanelState, SaveDraftMessage } from '../../core/panelMessages';
import { setPlanModeEvent, userMessageEvent } from '../../core/protocol';
import type { Backends } from '../backends/backends';
import { voiceFor } from '../backends/backendVoice';
import { SessionController, type DecisionOutcome } from './sessionController';
import { vscodeNotifier } from './vscodeNotifier';
import type { SessionNotifier } from './sessionNotifier';
import { PERSISTED_SESSIONS_KEY, parsePersistedSessions, trimPersistedSessions, type PersistedSession } from '../../core/persistedSessions';
import { REVIEW_PANEL_KEY } from '../../core/stateKeys';
import { ReviewPanel } from '../review/reviewPanel';
import type { SettingsReader } from '../settings/settings';
import type { UltraplanSettings } from '../settings/settingsSchema';
import { PhaseStatusBarItem } from '../status/statusBar';
import { PermissionDetailsView } from './permissionPrompts';
import { orderByAttention } from '../../core/statusSummary';
import { PlanEdits } from '../review/planEdits';
import {
  openTeleportTarget,
  pickTeleportTarget,
  plansFolderProblem,
  savePlanFile,
  targetProblem,
  type ConcreteTarget,
} from '../review/teleport';

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
/** How long the workbench gets to revive the review panel before we open it ourselves. */
const PANEL_REVIVAL_GRACE_MS = 3000;

const ReviewPanelRecordSchema = z.strictObject({ sessionKey: z.string().min(1).max(500) });
type ReviewPanelRecord = z.infer<typeof ReviewPanelRecordSchema>;

export function titleFromPrompt(prompt: string): string {
  const line =
    prompt
      .split(/\r?\n/)
      .find((l) => l.trim().length > 0)
      ?.trim() ?? 'plan';
  return line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 1)}…` : line;
}

/** The answer a panel request gets from a decision's outcome. */
function answerOf(outcome: DecisionOutcome): PanelAnswer {
  return outcome.sent ? { result: 'sent' } : { result: 'refused', reason: outcome.message };
}

export class FollowedSessions extends Disposable {
  readonly #o: FollowedSessionsOptions;
  readonly #controllers = new Map<string, SessionController>();
  readonly #statusBar = this._register(new PhaseStatusBarItem());
  readonly #permissionDetails = this._register(new PermissionDetailsView());
  readonly #notifier: SessionNotifier = vscodeNotifier(this.#permissionDetails);
  readonly edits = this._register(new PlanEdits((key) => this.#controllers.get(key)?.setEditing(undefined)));
  readonly #onDidChange = this._register(new vscode.EventEmitter<void>());
  /** Fires when a session was added, removed or changed in anything a view shows. */
  readonly onDidChange = this.#onDidChange.event;
  /** Embedded sessions restored in an untrusted workspace: they re-attach once trust is granted. */
  readonly #waitingForTrust = new Map<string, PersistedSession>();
  readonly #trust: WorkspaceTrust;
  /** Set once deactivation starts: a panel closed by the shutdown is not the person closing it. */
  #disposing = false;
  #persistTimer: NodeJS.Timeout | undefined;
  #panelUpdate: NodeJS.Immediate | undefined;
  #revivalTimer: NodeJS.Timeout | undefined;
  /** Resolves once persisted sessions are re-attached (the panel serializer waits for it). */
  readonly restored: Promise<void>;

  constructor(options: FollowedSessionsOptions) {
    super();
    this.#o = options;
    this.#trust = options.trust ?? vscodeTrust;
    this._register(this.#trust.onDidGrant(() => void this.reattachTrusted()));
    this.restored = this.#restore();
  }

  /** Asks a session's open permission requests again (the status bar's click); without a key, the first waiting. */
  askOpenPermissions(key: unknown): void {
    const controller = typeof key === 'string' ? this.#controllers.get(key) : this.ordered((c) => c.openPermissionCount > 0)[0];
    controller?.askOpenPermissions();
  }

  /** A review panel the workbench revived after a reload: show the session it should. */
  async restorePanel(panel: ReviewPanel, saved: PanelState | undefined): Promise<void> {
    await this.restored;
    this.#attachPanel(panel);
    // Which session: the one we last showed (our own record, written when shown), else the one
    // the webview's saved state names. The workbench stores that saved state with its editors,
    // and in the browser a reload can cut that save short, leaving an older session's state.
    // Without either, the panel shows the session that needs the person first.
    const remembered = this.#rememberedShown();
    const controller =
      (remembered ? this.#controllers.get(remembered) : undefined) ??
      (saved ? this.#controllers.get(saved.sessionKey) : undefined) ??
      (saved ? undefined : this.ordered()[0]);
    this.#o.log.info(
      `review panel restored (${saved ? `saved state for ${saved.sessionKey}` : 'no saved state'}; last shown ${remembered ?? 'unknown'}; showing ${controller?.key ?? 'nothing'})`,
    );
    if (controller) {
      this.#rememberShown(controller.key);
      panel.update(controller.panelState());
    } else if (saved) {
      // A session we no longer follow: its last state stays readable; decisions are refused.
      panel.update({ ...saved, canDecide: false });
    }
  }

  // -------------------------------------------------------------------------------------------
  // Persistence

  async #restore(): Promise<void> {
    const { log, context } = this.#o;
    const { sessions, dropped } = parsePersistedSessions(context.workspaceState.get<unknown>(PERSISTED_SESSIONS_KEY));
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
        const controller = this.#addRestored(s, backend, settings);
        controller.start();
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
    // The workbench normally revives the panel through its serializer, but in the browser it cannot
    // always save its editors on shutdown. If no panel came back, bring the review back ourselves:
    // the session it showed when it was open (finished or not), else one still in flight.
    const remembered = this.#rememberedShown();
    const shownBefore = remembered ? this.#controllers.get(remembered) : undefined;
    if (shownBefore || this.all.some((c) => !c.finished)) {
      this.#revivalTimer = setTimeout(() => {
        this.#revivalTimer = undefined;
        const target = shownBefore ?? this.ordered((c) => !c.finished)[0];
        if (!ReviewPanel.current && target) {
          log.info(`review panel was not restored by the workbench; showing ${target.key}`);
          this.show(target, true);
        }
      }, PANEL_REVIVAL_GRACE_MS);
    }
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
      // What the person did meanwhile (drafts) is in the waiting controller; keep it.
      const current = this.#controllers.get(key)?.toPersisted();
      const s: PersistedSession = current ? { ...current, finished: false, phase: persisted.phase } : persisted;
      delete s.outcome;
      try {
        const backend = await this.#o.backends.forRestored(s.backendKind, settings, s.serverUrl, { readOnly: s.readOnly !== undefined });
        this.#controllers.get(key)?.dispose();
        const controller = this.#addRestored(s, backend, settings);
        controller.start();
        log.info(`re-attached session ${s.sessionId} (${s.backendLabel}) after trust was granted`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        log.error(`could not re-attach session ${s.sessionId}: ${message}`);
        this.#addRestored({ ...s, finished: true, phase: 'failed' }, undefined, settings, `Could not re-attach: ${message}`);
      }
    }
    this.#changed();
    const panel = ReviewPanel.current;
    const shown = panel?.sessionKey ? this.#controllers.get(panel.sessionKey) : undefined;
    if (panel && shown) panel.update(shown.panelState());
    await this.persistNow();
  }

  #addRestored(s: PersistedSession, backend: SessionBackend | undefined, settings: UltraplanSettings, failure?: string): SessionController {
    const controller = this.#newController({ backend: backend ?? detachedBackend(s), settings, restored: s });
    if (failure) controller.setOutcome(failure, 'error');
    this.#controllers.set(s.key, controller);
    return controller;
  }

  #newController(o: {
    backend: SessionBackend;
    settings: UltraplanSettings;
    restored?: PersistedSession;
    fresh?: ConstructorParameters<typeof SessionController>[0]['fresh'];
  }): SessionController {
    const options: ConstructorParameters<typeof SessionController>[0] = {
      backend: o.backend,
      log: this.#o.log,
      notifier: this.#notifier,
      voice: voiceFor(o.backend.kind, this.#o.log),
      pollIntervalMs: o.settings.pollIntervalMs,
      timeoutMs: o.settings.timeoutMinutes * 60_000,
      onDidChange: (c) => this.#onControllerChanged(c),
      notifyNeeds: () => this.#o.settings.read().notifications,
    };
    if (o.restored) options.restored = o.restored;
    if (o.fresh) options.fresh = o.fresh;
    return new SessionController(options);
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
    const all = trimPersistedSessions([...this.#controllers.values()].map((c) => this.#waitingForTrust.get(c.key) ?? c.toPersisted()));
    const keep = new Set(all.map((s) => s.key));
    for (const key of [...this.#controllers.keys()]) if (!keep.has(key)) this.#controllers.delete(key);
    await this.#o.context.workspaceState.update(PERSISTED_SESSIONS_KEY, all);
  }

  // -------------------------------------------------------------------------------------------
  // Changes -> views

  #onControllerChanged(controller: SessionController): void {
    this.#persistSoon();
    this.#changed();
    const panel = ReviewPanel.current;
    if (panel && panel.sessionKey === controller.key) this.#updatePanelSoon();
  }

  /**
   * States reach the panel at most once per turn of the event loop: a decision changes a session
   * (in flight, then sent) within one turn, and each state carries the whole plan.
   */
  #updatePanelSoon(): void {
    if (this.#panelUpdate) return;
    this.#panelUpdate = setImmediate(() => {
      this.#panelUpdate = undefined;
      const panel = ReviewPanel.current;
      const controller = panel?.sessionKey !== undefined ? this.#controllers.get(panel.sessionKey) : undefined;
      if (panel && controller) this.#updatePanel(panel, controller, controller.panelState());
    });
  }

  #updatePanel(panel: ReviewPanel, controller: SessionController, state: PanelState): void {
    const error = panel.update(state);
    if (error) controller.setOutcome(`The review panel cannot show this state: ${error}`, 'error');
  }

  #changed(): void {
    const all = [...this.#controllers.values()];
    const live = all.filter((c) => !c.finished);
    // With nothing in flight, the latest finished session stays visible (approved, teleported, failed).
    const latestFinished = this.ordered((c) => c.finished).sort((a, b) => b.statusChangedAt - a.statusChangedAt)[0];
    this.#statusBar.update(live.length > 0 ? live : latestFinished ? [latestFinished] : []);
    void vscode.commands.executeCommand('setContext', 'ultraplan.hasSessions', all.length > 0);
    void vscode.commands.executeCommand('setContext', 'ultraplan.hasActiveSessions', live.length > 0);
    void vscode.commands.executeCommand('setContext', 'ultraplan.hasHistory', live.length < all.length);
    this.#onDidChange.fire();
    void vscode.commands.executeCommand(
      'setContext',
      'ultraplan.hasPendingPlan',
      live.some((c) => c.canDecide),
    );
  }

  // -------------------------------------------------------------------------------------------
  // Queries

  get all(): SessionController[] {
    return [...this.#controllers.values()];
  }

  get(key: string): SessionController | undefined {
    return this.#controllers.get(key);
  }

  /** Sessions ordered by who needs the person first. */
  ordered(filter: (c: SessionController) => boolean = () => true): SessionController[] {
    return orderByAttention(this.all.filter(filter), (c) => ({ phase: c.statusPhase, changedAt: c.statusChangedAt }));
  }

  // -------------------------------------------------------------------------------------------
  // History

  /** Forgets finished sessions (all of them, or those in `keys`); live ones are never touched. */
  async forgetFinished(keys?: readonly string[]): Promise<number> {
    const only = keys ? new Set(keys) : undefined;
    let forgotten = 0;
    for (const [key, c] of [...this.#controllers]) {
      if (!c.finished || this.#waitingForTrust.has(key) || (only && !only.has(key))) continue;
      c.dispose();
      this.#controllers.delete(key);
      forgotten++;
    }
    if (forgotten === 0) return 0;
    this.#o.log.info(`forgot ${forgotten} finished session${forgotten === 1 ? '' : 's'}`);
    const panel = ReviewPanel.current;
    if (panel?.sessionKey !== undefined && !this.#controllers.has(panel.sessionKey)) panel.dispose();
    this.#changed();
    await this.persistNow();
    return forgotten;
  }

  // -------------------------------------------------------------------------------------------
  // Starting a session

  async start(prompt: string, settings: UltraplanSettings): Promise<SessionController | undefined> {
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
                ? 'opening the embedded session host'
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
          const fresh: { key: string; sessionId: string; title: string; demo: boolean; serverUrl?: string; agentLabel?: string } = {
            key,
            sessionId: resource.id,
            title,
            demo,
          };
          if (serverUrl) fresh.serverUrl = serverUrl;
          if (agentLabel) fresh.agentLabel = agentLabel;
          const controller = this.#newController({ backend, settings, fresh });
          this.#controllers.set(key, controller);
          log.info(`session ${resource.id} created (${backend.label}${agentLabel ? ` · ${agentLabel}` : ''}${demo ? ', demo' : ''})`);
          controller.start();
          this.#changed();
          await this.persistNow();
          this.show(controller, true);
          return controller;
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
  followed(kind: BackendKind, sessionId: string, serverUrl?: string): SessionController | undefined {
    return this.all.find(
      (c) =>
        c.backend.kind === kind &&
        sameSessionId(c.sessionId, sessionId) &&
        (kind !== 'server' || (c.serverUrl !== undefined && serverUrl !== undefined && sameServerUrl(c.serverUrl, serverUrl))),
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
  }): Promise<SessionController> {
    const known = this.followed(o.backend.kind, o.sessionId, o.serverUrl);
    // Followed read-only before (no token then) and attachable now: the new follow replaces it.
    if (known && !(known.readOnly !== undefined && o.readOnly === undefined)) {
      this.show(known);
      return known;
    }
    const resource = await o.backend.getSession(o.sessionId);
    const key = `${o.backend.kind}:${resource.id}`;
    if (known) {
      known.dispose();
      this.#controllers.delete(known.key);
    }
    const again = this.followed(o.backend.kind, resource.id, o.serverUrl) ?? this.#controllers.get(key);
    if (again) {
      this.show(again);
      return again;
    }
    const fresh: NonNullable<ConstructorParameters<typeof SessionController>[0]['fresh']> = {
      key,
      sessionId: resource.id,
      title: displayTitle(resource.title, resource.id),
      demo: false,
    };
    if (o.serverUrl) fresh.serverUrl = o.serverUrl;
    const readOnly = o.readOnly ?? (resource.session_status === 'archived' ? ARCHIVED_READ_ONLY : undefined);
    if (readOnly !== undefined) fresh.readOnly = readOnly;
    const controller = this.#newController({ backend: o.backend, settings: o.settings, fresh });
    this.#controllers.set(key, controller);
    this.#o.log.info(
      `attached to session ${resource.id} on ${o.backend.label}${readOnly !== undefined ? ` (read-only: ${readOnly})` : ''}`,
    );
    // Shown before the first read: its plan arrives in the review itself, not as a toast about it.
    this.show(controller);
    controller.start();
    this.#changed();
    await this.persistNow();
    return controller;
  }

  // -------------------------------------------------------------------------------------------
  // The panel

  show(controller: SessionController, preserveFocus = false): ReviewPanel {
    this.#rememberShown(controller.key);
    const existed = ReviewPanel.current;
    const panel = ReviewPanel.createOrShow({ extensionUri: this.#o.context.extensionUri, log: this.#o.log }, controller.panelState(), {
      preserveFocus,
    });
    if (panel !== existed) this.#attachPanel(panel);
    return panel;
  }

  #attachPanel(panel: ReviewPanel): void {
    panel.setRequestHandler((request) => this.answer(request));
    panel.onDidSaveDraft((draft) => this.#saveDraft(draft));
    panel.onDidDispose(() => {
      // The person closed the review: after a reload it stays closed.
      if (!this.#disposing) void this.#o.context.workspaceState.update(REVIEW_PANEL_KEY, undefined);
    });
  }

  /** The session the review showed when it was last open, if it was not closed since. */
  #rememberedShown(): string | undefined {
    const record = ReviewPanelRecordSchema.safeParse(this.#o.context.workspaceState.get<unknown>(REVIEW_PANEL_KEY));
    return record.success ? record.data.sessionKey : undefined;
  }

  /** The session the review shows, kept so a reload can bring the same review back. */
  #rememberShown(key: string): void {
    const record: ReviewPanelRecord = { sessionKey: key };
    void this.#o.context.workspaceState.update(REVIEW_PANEL_KEY, record);
  }

  /** Answers one request from the review panel: routed by its session key, `sent` or `refused`. */
  async answer(request: PanelRequest): Promise<PanelAnswer> {
    try {
      return await this.#handlePanelRequest(request);
    } finally {
      // Decisions and replies are written at once, not on the debounce: a reload right after a
      // click must not lose them (the browser's storage may not flush on shutdown).
      await this.persistNow().catch((err: unknown) => this.#o.log.warn(`persisting sessions failed: ${String(err)}`));
    }
  }

  #saveDraft(draft: SaveDraftMessage): void {
    const controller = this.#controllers.get(draft.sessionKey);
    if (!controller) {
      this.#o.log.warn(`review panel: draft for an unknown session ${draft.sessionKey}`);
      return;
    }
    const kept: PanelDraft = { toolUseId: draft.toolUseId, feedback: draft.feedback, comments: draft.comments };
    if (draft.notes !== undefined) kept.notes = draft.notes;
    controller.saveDraft(kept);
  }

  /** Every request names the session it is for by its key; decisions are checked there. */
  async #handlePanelRequest(request: PanelRequest): Promise<PanelAnswer> {
    const controller = this.#controllers.get(request.sessionKey);
    if (!controller) {
      const reason = 'This is for a session Ultraplan no longer follows; nothing was sent.';
      this.#o.log.warn(`review panel: ${request.type} refused: unknown session ${request.sessionKey}`);
      this.#notifier.say('warning', reason);
      return { result: 'refused', reason };
    }
    if (request.type === 'reply') return answerOf(await controller.reply(request.text));
    return this.decide(controller, request);
  }

  /** A decision from the panel (click or keybinding), checked by its session. */
  async decide(controller: SessionController, request: DecisionMessage): Promise<PanelAnswer> {
    const binding = request.binding;
    switch (request.type) {
      case 'approve':
        return answerOf(
          await (request.notes === undefined ? controller.approve(binding) : controller.approveWithNotes(binding, request.notes)),
        );
      case 'reject':
        return answerOf(await controller.reject(binding, request.feedback, request.comments));
      case 'edit': {
        const checked = controller.check(binding);
        const plan = controller.pendingPlan?.plan;
        if (!checked.sent || plan === undefined) {
          const reason = checked.sent ? 'There is no plan to edit.' : checked.message;
          this.#notifier.say('warning', reason);
          return { result: 'refused', reason };
        }
        this.#o.log.info(`[${controller.key}] editing plan ${binding.toolUseId}`);
        controller.setEditing(binding.toolUseId);
        await this.edits.open(controller.key, binding, plan);
        return { result: 'sent' };
      }
      case 'teleport':
        return this.#teleport(controller, binding);
    }
  }

  async approveEdited(): Promise<void> {
    const edit = this.edits.current();
    if (!edit) {
      void vscode.window.showWarningMessage('Ultraplan: open the edited plan first (use Edit in the review panel).');
      return;
    }
    const controller = this.#controllers.get(edit.sessionKey);
    if (!controller) {
      void vscode.window.showWarningMessage('Ultraplan: the session of this edited plan is no longer followed; nothing was sent.');
      return;
    }
    const outcome = await controller.approveEdited(edit.binding, edit.text);
    if (outcome.sent) {
      await this.edits.close(edit.document);
      this.show(controller, true);
    }
  }

  async #teleport(controller: SessionController, binding: DecisionBinding): Promise<PanelAnswer> {
    const { log } = this.#o;
    const settings = this.#o.settings.read();
    const checked = controller.check(binding);
    if (!checked.sent) {
      this.#notifier.say('warning', checked.message);
      return { result: 'refused', reason: checked.message };
    }
    const chosen = settings['teleport.target'];
    const target: ConcreteTarget | undefined = chosen === 'ask' ? await pickTeleportTarget(settings['teleport.taskCommand']) : chosen;
    if (!target) return { result: 'refused', reason: 'No teleport target was chosen; nothing was sent.' };
    // Everything that can stop the teleport is checked before the deny is sent: after it, the
    // remote has let go of the plan.
    const problem = (await plansFolderProblem(settings.plansDirectory)) ?? targetProblem(target, settings['teleport.taskCommand']);
    if (problem) {
      log.warn(`teleport refused: ${problem}`);
      this.#notifier.say('warning', problem, {
        label: 'Open Settings',
        run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'ultraplan.teleport'),
      });
      return { result: 'refused', reason: problem };
    }
    const sent = await controller.teleport(binding);
    if (!sent.sent) return { result: 'refused', reason: sent.message };
    if (sent.plan === undefined) return { result: 'sent' };
    let file: vscode.Uri;
    try {
      file = await savePlanFile(sent.plan, controller.title, settings.plansDirectory);
      log.info(`[${controller.key}] teleported plan saved to ${file.fsPath}`);
      controller.addSavedPlan(file.fsPath);
    } catch (err) {
      const message = `The plan was teleported but could not be saved: ${err instanceof Error ? err.message : String(err)}`;
      log.error(`[${controller.key}] ${message}`);
      controller.setOutcome(message, 'error');
      // Do not lose the plan: show it in an editor the person can save.
      const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: sent.plan });
      await vscode.window.showTextDocument(doc);
      void vscode.window.showErrorMessage(`Ultraplan: ${message}`);
      return { result: 'sent' };
    }
    const archived = await controller.archiveAfterTeleport(settings['teleport.archiveRemote']);
    try {
      const opened = await openTeleportTarget(target, file, sent.plan, settings['teleport.taskCommand'], log);
      controller.setOutcome(`${opened.text}${archived ? ' The planning session was archived.' : ''}`, opened.level);
    } catch (err) {
      const message = `The plan is saved in ${vscode.workspace.asRelativePath(file)}, but opening it as ${target} failed: ${err instanceof Error ? err.message : String(err)}`;
      log.error(`[${controller.key}] ${message}`);
      controller.setOutcome(message, 'error');
      void vscode.window.showErrorMessage(`Ultraplan: ${message}`);
    }
    return { result: 'sent' };
  }

  /** Stops every follow loop, persists, then lets go of what this owns. */
  async close(): Promise<void> {
    this.#disposing = true;
    if (this.#revivalTimer) clearTimeout(this.#revivalTimer);
    if (this.#panelUpdate) clearImmediate(this.#panelUpdate);
    for (const c of this.#controllers.values()) c.dispose();
    await Promise.allSettled([...this.#controllers.values()].map((c) => c.settled()));
    await this.persistNow().catch(() => undefined);
    this.dispose();
    this.#controllers.clear();
  }
}

/** A finished session needs no live backend; this one refuses every call with a clear message. */
function detachedBackend(s: PersistedSession): SessionBackend {
  const refuse = async (): Promise<never> => {
    throw new Error('This session is no longer followed.');
  };
  return {
    kind: s.backendKind,
    label: s.backendLabel,
    transport: { readEvents: refuse, getStatus: refuse },
    createSession: refuse,
    getSession: refuse,
    sendEvents: refuse,
    archive: refuse,
    dispose: async () => {},
  };
}

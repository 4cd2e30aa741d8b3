// Every session the extension follows: creating and restoring controllers, persisting them in
// workspaceState, and routing the review panel's requests to the right one. The status bar and the
// panel are views of this list.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import * as z from 'zod';
import { DecisionBindingSchema, type DecisionBinding } from '../core/decision';
import type { SessionBackend } from '../sessions/backend';
import type { PanelRequest, PanelState, DecisionMessage } from '../core/panelMessages';
import { setPlanModeEvent, userMessageEvent } from '../core/protocol';
import type { Backends } from './backends';
import { SessionController } from './sessionController';
import {
  PERSISTED_SESSIONS_KEY,
  parsePersistedSessions,
  trimPersistedSessions,
  type PersistedSession,
} from './persistedSessions';
import { ReviewPanel, registerReviewPanelSerializer } from './reviewPanel';
import type { SettingsReader } from './settings';
import type { UltraplanSettings } from './settingsSchema';
import { ANSWER_PERMISSIONS_COMMAND, PhaseStatusBarItem } from './statusBar';
import { REVIEW_PANEL_KEY } from './stateKeys';
import { PermissionDetailsView } from './permissionPrompts';
import { orderForStatus } from './statusSummary';
import { PlanEdits } from './planEdits';
import { openTeleportTarget, pickTeleportTarget, plansFolderProblem, savePlanFile, targetProblem, type ConcreteTarget } from './teleport';

export interface FollowedSessionsOptions {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  settings: SettingsReader;
  backends: Backends;
}

const MAX_TITLE = 80;
/** How long the workbench gets to revive the review panel before we open it ourselves. */
const PANEL_REVIVAL_GRACE_MS = 3000;

const ReviewPanelRecordSchema = z.strictObject({ sessionKey: z.string().min(1).max(500) });
type ReviewPanelRecord = z.infer<typeof ReviewPanelRecordSchema>;

export function titleFromPrompt(prompt: string): string {
  const line = prompt.split(/\r?\n/).find((l) => l.trim().length > 0)?.trim() ?? 'plan';
  return line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 1)}…` : line;
}

export class FollowedSessions implements vscode.Disposable {
  readonly #o: FollowedSessionsOptions;
  readonly #controllers = new Map<string, SessionController>();
  readonly #statusBar = new PhaseStatusBarItem();
  readonly #permissionDetails = new PermissionDetailsView();
  readonly edits = new PlanEdits((key) => this.#controllers.get(key)?.setEditing(undefined));
  readonly #disposables: vscode.Disposable[] = [];
  #shownKey: string | undefined;
  /** Set once deactivation starts: a panel closed by the shutdown is not the person closing it. */
  #disposing = false;
  #persistTimer: NodeJS.Timeout | undefined;
  #panelUpdate: NodeJS.Immediate | undefined;
  #revivalTimer: NodeJS.Timeout | undefined;
  /** Resolves once persisted sessions are re-attached (the panel serializer waits for it). */
  readonly restored: Promise<void>;

  constructor(options: FollowedSessionsOptions) {
    this.#o = options;
    this.#disposables.push(
      this.#permissionDetails,
      vscode.commands.registerCommand(ANSWER_PERMISSIONS_COMMAND, (key: unknown) => {
        const controller = typeof key === 'string' ? this.#controllers.get(key) : this.ordered((c) => c.openPermissionCount > 0)[0];
        controller?.askOpenPermissions();
      }),
    );
    this.#disposables.push(
      registerReviewPanelSerializer(options.context, { log: options.log }, async (panel, saved) => {
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
        options.log.info(
          `review panel restored (${saved ? `saved state for ${saved.sessionKey}` : 'no saved state'}; last shown ${remembered ?? 'unknown'}; showing ${controller?.key ?? 'nothing'})`,
        );
        if (controller) {
          this.#rememberShown(controller.key);
          panel.update(controller.panelState());
        } else if (saved) {
          // A session we no longer follow: its last state stays readable; decisions are refused.
          panel.update({ ...saved, canDecide: false });
        }
      }),
    );
    this.restored = this.#restore();
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
      try {
        const backend = await this.#o.backends.forRestored(s.backendKind, settings, s.serverUrl);
        const controller = this.#addRestored(s, backend, settings);
        controller.start();
        log.info(`re-attached session ${s.sessionId} (${s.backendLabel}) from cursor ${s.cursor ?? '-'}`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        log.error(`could not re-attach session ${s.sessionId}: ${message}`);
        this.#addRestored({ ...s, finished: true, phase: 'failed' }, undefined, settings, `Could not re-attach after the reload: ${message}`);
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

  #addRestored(
    s: PersistedSession,
    backend: SessionBackend | undefined,
    settings: UltraplanSettings,
    failure?: string,
  ): SessionController {
    const controller = new SessionController({
      backend: backend ?? detachedBackend(s),
      log: this.#o.log,
      pollIntervalMs: settings.pollIntervalMs,
      timeoutMs: settings.timeoutMinutes * 60_000,
      onDidChange: (c) => this.#onControllerChanged(c),
      restored: s,
      permissionDetails: this.#permissionDetails,
    });
    if (failure) controller.setOutcome(failure, 'error');
    this.#controllers.set(s.key, controller);
    return controller;
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
    const all = trimPersistedSessions([...this.#controllers.values()].map((c) => c.toPersisted()));
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
    if (!panel || panel.sessionKey !== controller.key) return;
    const state = controller.panelState();
    if (state.pendingDecision === undefined) {
      this.#updatePanelSoon();
      return;
    }
    // A state holding a decision acknowledges it to the panel, which must see it before the
    // release that may follow at once (panelMessages.ts): sent now, in place of any waiting one.
    if (this.#panelUpdate) clearImmediate(this.#panelUpdate);
    this.#panelUpdate = undefined;
    this.#updatePanel(panel, controller, state);
  }

  /**
   * Other states reach the panel once per turn of the event loop: one poll can change a session
   * two or three times in a row (its events, then its phase), and each state carries the whole plan.
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
    const latestFinished = orderForStatus(
      all.filter((c) => c.finished).map((c) => ({ sessionId: c.key, phase: c.statusPhase, changedAt: c.statusChangedAt, c })),
    ).sort((a, b) => b.changedAt - a.changedAt)[0]?.c;
    this.#statusBar.update(live.length > 0 ? live : latestFinished ? [latestFinished] : []);
    void vscode.commands.executeCommand('setContext', 'ultraplan.hasSessions', all.length > 0);
    void vscode.commands.executeCommand('setContext', 'ultraplan.hasActiveSessions', live.length > 0);
    void vscode.commands.executeCommand('setContext', 'ultraplan.hasPendingPlan', live.some((c) => c.canDecide));
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
    return orderForStatus(
      this.all.filter(filter).map((c) => ({ sessionId: c.key, phase: c.statusPhase, changedAt: c.statusChangedAt, c })),
    ).map((e) => e.c);
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
              .then((c) => c && vscode.commands.executeCommand('ultraplan.setServerToken'));
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
          const controller = new SessionController({
            backend,
            log,
            pollIntervalMs: settings.pollIntervalMs,
            timeoutMs: settings.timeoutMinutes * 60_000,
            onDidChange: (c) => this.#onControllerChanged(c),
            fresh,
            permissionDetails: this.#permissionDetails,
          });
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
          void vscode.window.showErrorMessage(`Ultraplan: could not start the planning session: ${message}`, 'Show Log').then((c) => c && log.show());
          return undefined;
        }
      },
    );
  }

  // -------------------------------------------------------------------------------------------
  // The panel

  show(controller: SessionController, preserveFocus = false): ReviewPanel {
    this.#rememberShown(controller.key);
    const existed = ReviewPanel.current;
    const panel = ReviewPanel.createOrShow({ extensionUri: this.#o.context.extensionUri, log: this.#o.log }, controller.panelState(), { preserveFocus });
    if (panel !== existed) this.#attachPanel(panel);
    return panel;
  }

  #attachPanel(panel: ReviewPanel): void {
    panel.onDidReceiveMessage((request) => void this.#onPanelRequest(request));
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
    this.#shownKey = key;
    const record: ReviewPanelRecord = { sessionKey: key };
    void this.#o.context.workspaceState.update(REVIEW_PANEL_KEY, record);
  }

  async #onPanelRequest(request: PanelRequest): Promise<void> {
    try {
      await this.#handlePanelRequest(request);
    } finally {
      // Decisions, comments and replies are written at once, not on the debounce: a reload right
      // after a click must not lose them (the browser's storage may not flush on shutdown).
      if (request.type !== 'saveDraft') await this.persistNow().catch((err: unknown) => this.#o.log.warn(`persisting sessions failed: ${String(err)}`));
    }
  }

  async #handlePanelRequest(request: PanelRequest): Promise<void> {
    const log = this.#o.log;
    if (request.type === 'reply' || request.type === 'saveDraft') {
      const controller = this.#controllers.get(request.sessionKey);
      if (!controller) {
        log.warn(`review panel: ${request.type} for an unknown session ${request.sessionKey}`);
        return;
      }
      if (request.type === 'saveDraft') {
        controller.saveDraft({ toolUseId: request.toolUseId, feedback: request.feedback, comments: request.comments });
      } else {
        await controller.reply(request.text);
      }
      return;
    }
    await this.decide(request);
  }

  /** A decision from the panel (click or keybinding): routed to its session, checked there. */
  async decide(request: DecisionMessage): Promise<void> {
    const binding = DecisionBindingSchema.parse(request.binding);
    const controller = this.all.find((c) => c.sessionId === binding.sessionId);
    if (!controller) {
      const message = 'This decision is for a session Ultraplan no longer follows; nothing was sent.';
      this.#o.log.warn(`decision ${request.type} refused: unknown session ${binding.sessionId}`);
      void vscode.window.showWarningMessage(`Ultraplan: ${message}`);
      return;
    }
    switch (request.type) {
      case 'approve':
        await controller.approve(binding);
        return;
      case 'reject':
        await controller.reject(binding, request.feedback, request.comments);
        return;
      case 'edit': {
        const checked = controller.check(binding);
        const plan = controller.pendingPlan?.plan;
        if (!checked.sent || plan === undefined) {
          const message = checked.sent ? 'There is no plan to edit.' : checked.message;
          controller.releasePanel('edit');
          void vscode.window.showWarningMessage(`Ultraplan: ${message}`);
          return;
        }
        this.#o.log.info(`[${controller.key}] editing plan ${binding.toolUseId}`);
        controller.setEditing(binding.toolUseId);
        await this.edits.open(controller.key, binding, plan);
        return;
      }
      case 'teleport':
        await this.#teleport(controller, binding);
        return;
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

  async #teleport(controller: SessionController, binding: DecisionBinding): Promise<void> {
    const { log } = this.#o;
    const settings = this.#o.settings.read();
    const checked = controller.check(binding);
    if (!checked.sent) {
      controller.releasePanel('teleport');
      void vscode.window.showWarningMessage(`Ultraplan: ${checked.message}`);
      return;
    }
    const chosen = settings['teleport.target'];
    const target: ConcreteTarget | undefined = chosen === 'ask' ? await pickTeleportTarget(settings['teleport.taskCommand']) : chosen;
    if (!target) {
      controller.releasePanel('teleport');
      return;
    }
    // Everything that can stop the teleport is checked before the deny is sent: after it, the
    // remote has let go of the plan.
    const problem = (await plansFolderProblem(settings.plansDirectory)) ?? targetProblem(target, settings['teleport.taskCommand']);
    if (problem) {
      log.warn(`teleport refused: ${problem}`);
      controller.releasePanel('teleport');
      const open = 'Open Settings';
      void vscode.window.showWarningMessage(`Ultraplan: ${problem}`, open).then((c) => c && vscode.commands.executeCommand('workbench.action.openSettings', 'ultraplan.teleport'));
      return;
    }
    const sent = await controller.teleport(binding);
    if (!sent.sent || sent.plan === undefined) return;
    let file: vscode.Uri;
    try {
      file = await savePlanFile(sent.plan, controller.title, settings.plansDirectory);
      log.info(`[${controller.key}] teleported plan saved to ${file.fsPath}`);
    } catch (err) {
      const message = `The plan was teleported but could not be saved: ${err instanceof Error ? err.message : String(err)}`;
      log.error(`[${controller.key}] ${message}`);
      controller.setOutcome(message, 'error');
      // Do not lose the plan: show it in an editor the person can save.
      const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: sent.plan });
      await vscode.window.showTextDocument(doc);
      void vscode.window.showErrorMessage(`Ultraplan: ${message}`);
      return;
    }
    const archived = await controller.archiveAfterTeleport(settings['teleport.archiveRemote']);
    try {
      const opened = await openTeleportTarget(target, file, sent.plan, settings['teleport.taskCommand'], log);
      controller.setOutcome(`${opened.text}${archived ? ' The remote session was archived.' : ''}`, opened.level);
    } catch (err) {
      const message = `The plan is saved in ${vscode.workspace.asRelativePath(file)}, but opening it as ${target} failed: ${err instanceof Error ? err.message : String(err)}`;
      log.error(`[${controller.key}] ${message}`);
      controller.setOutcome(message, 'error');
      void vscode.window.showErrorMessage(`Ultraplan: ${message}`);
    }
  }

  /** The session the panel shows, if it still exists. */
  get shown(): SessionController | undefined {
    return this.#shownKey ? this.#controllers.get(this.#shownKey) : undefined;
  }

  async dispose(): Promise<void> {
    this.#disposing = true;
    if (this.#revivalTimer) clearTimeout(this.#revivalTimer);
    if (this.#panelUpdate) clearImmediate(this.#panelUpdate);
    for (const c of this.#controllers.values()) c.dispose();
    await Promise.allSettled([...this.#controllers.values()].map((c) => c.settled()));
    await this.persistNow().catch(() => undefined);
    this.#statusBar.dispose();
    this.edits.dispose();
    while (this.#disposables.length > 0) this.#disposables.pop()?.dispose();
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


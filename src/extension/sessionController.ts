// One followed session: runs the poller (and, after an approval, followUntilResult), keeps the
// revisions with their comments, feedback and drafts, turns all of it into the review panel's
// PanelState, and sends the person's decisions through the decision gate. Data flows one way:
// events -> poller -> scanner -> phase -> status bar / panel; decisions flow back through here.
import * as vscode from 'vscode';
import { DecisionGate, decisionEvent, planHash, type DecisionBinding, type PendingPlanRef, type PlanDecision } from '../core/decision';
import { SessionsError, UltraplanPollError } from '../core/errors';
import { formatRejectFeedback } from '../core/feedback';
import type { DecisionKind, LineComment, PanelDraft, PanelNotice, PanelPhase, PanelState, PlanRevision } from '../core/panelMessages';
import { PANEL_LIMITS } from '../core/panelMessages';
import { followUntilResult, pollForApprovedPlan, type PollPhase, type PollPhaseDetail } from '../core/poller';
import { ExitPlanModeScanner } from '../core/scanner';
import { userMessageEvent } from '../core/protocol';
import {
  ToolPermissionTracker,
  permissionRefusalMessage,
  permissionResponseEvent,
  type ToolPermissionRequest,
} from '../core/permissionRequests';
import type { SessionBackend } from '../sessions/backend';
import { claudeWebFailureOf } from '../sessions/claudeWeb';
import { isLoginFailure } from './claudeWebFailure';
import { executionReport, showBackendFailure } from './claudeWebUi';
import type { PersistedSession } from './persistedSessions';
import { ReviewPanel } from './reviewPanel';
import { promptPermission, type PermissionDetailsView, type PermissionPromptTarget } from './permissionPrompts';
import type { SessionPhase } from './statusSummary';

export interface SessionControllerOptions {
  backend: SessionBackend;
  log: vscode.LogOutputChannel;
  pollIntervalMs: number;
  timeoutMs: number;
  /** Called whenever something a person sees changed (status bar, panel, persistence). */
  onDidChange: (controller: SessionController) => void;
  /** A session restored after a reload; absent for a new session. */
  restored?: PersistedSession;
  /** For a new session. */
  fresh?: { key: string; sessionId: string; title: string; demo: boolean; serverUrl?: string; agentLabel?: string };
  /** Where a permission request's Details open (read-only); without it the prompt has no Details. */
  permissionDetails?: PermissionDetailsView;
}

interface RevisionExtras {
  feedback?: string;
  comments: LineComment[];
  decidedAt?: string;
  /** What this host decided, shown until the session's own events confirm it. */
  decided?: 'rejected' | 'approved' | 'approved_edited' | 'teleported';
  /** The reviewer's version, approved in place of the agent's: the plan the revision shows. */
  editedPlan?: string;
}

export type DecisionOutcome = { sent: true } | { sent: false; message: string };

const PHASE_LOG: Record<PollPhase, PanelPhase> = {
  running: 'planning',
  needs_input: 'needs_input',
  plan_ready: 'plan_ready',
};

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The gate key of a tool permission request (plans are keyed by their tool_use id). */
function permissionGateRef(sessionId: string, request: ToolPermissionRequest): PendingPlanRef {
  return { sessionId, toolUseId: `permission:${request.requestId}`, plan: JSON.stringify(request.input ?? null) };
}

export class SessionController implements vscode.Disposable, PermissionPromptTarget {
  readonly key: string;
  readonly sessionId: string;
  readonly title: string;
  readonly backend: SessionBackend;
  readonly createdAt: number;
  readonly demo: boolean;
  readonly serverUrl: string | undefined;
  /** The agent that plans (embedded: "Claude (ACP)", "Demo (scripted)"); unknown for remote backends. */
  readonly agentLabel: string | undefined;

  #phase: PanelPhase;
  #phaseChangedAt: number;
  #cursor: string | null;
  #scanner = new ExitPlanModeScanner();
  readonly #gate: DecisionGate;
  /**
   * Tool permission requests (edits, commands) the agent waits on; re-derived from the log on
   * every (re-)attach, like the scanner. Answers go through their own gate: one answer per request.
   */
  #permissions = new ToolPermissionTracker();
  readonly #permissionGate = new DecisionGate();
  /** Requests whose notification is up (so a new batch does not show the same one twice). */
  readonly #prompting = new Set<string>();
  #permissionsChangedAt = 0;
  readonly #extras = new Map<string, RevisionExtras>();
  /** Revisions restored from storage, shown until the replayed events bring them back. */
  readonly #restoredRevisions: PlanRevision[];
  #drafts = new Map<string, PanelDraft>();
  #question: string | undefined;
  #notice: PanelNotice | undefined;
  #outcome: { text: string; link?: string } | undefined;
  #inFlight: DecisionKind | undefined;
  #ack: DecisionKind | undefined;
  /** The plan (tool_use id) open for editing, if any. */
  #editing: string | undefined;
  #finished: boolean;
  #abort = new AbortController();
  #loop: Promise<void> | undefined;
  /** Set when this host ended the loop on purpose (teleport, stop), so the abort is not a failure. */
  #endedBy: 'teleport' | 'stop' | undefined;
  readonly #options: SessionControllerOptions;

  constructor(options: SessionControllerOptions) {
    this.#options = options;
    this.backend = options.backend;
    const r = options.restored;
    if (r) {
      this.key = r.key;
      this.sessionId = r.sessionId;
      this.title = r.title;
      this.createdAt = r.createdAt;
      this.demo = r.demo ?? false;
      this.serverUrl = r.serverUrl;
      this.agentLabel = r.agentLabel;
      this.#phase = r.phase;
      this.#phaseChangedAt = r.phaseChangedAt;
      this.#cursor = r.cursor;
      this.#gate = new DecisionGate(r.usedBindings);
      this.#restoredRevisions = r.revisions;
      for (const rev of r.revisions) {
        const extras: RevisionExtras = { comments: rev.comments };
        if (rev.feedback !== undefined) extras.feedback = rev.feedback;
        if (rev.decidedAt !== undefined) extras.decidedAt = rev.decidedAt;
        if (rev.status === 'rejected' || rev.status === 'approved' || rev.status === 'approved_edited' || rev.status === 'teleported') {
          extras.decided = rev.status;
        }
        this.#extras.set(rev.toolUseId, extras);
      }
      for (const d of r.drafts) this.#drafts.set(d.toolUseId, d);
      if (r.question !== undefined) this.#question = r.question;
      if (r.outcome !== undefined) this.#outcome = r.outcome;
      this.#finished = r.finished;
    } else if (options.fresh) {
      const f = options.fresh;
      this.key = f.key;
      this.sessionId = f.sessionId;
      this.title = f.title;
      this.createdAt = Date.now();
      this.demo = f.demo;
      this.serverUrl = f.serverUrl;
      this.agentLabel = f.agentLabel;
      this.#phase = 'planning';
      this.#phaseChangedAt = this.createdAt;
      this.#cursor = null;
      this.#gate = new DecisionGate();
      this.#restoredRevisions = [];
      this.#finished = false;
    } else {
      throw new Error('SessionController needs either a restored or a fresh session');
    }
  }

  get phase(): PanelPhase {
    return this.#phase;
  }
  get phaseChangedAt(): number {
    return this.#phaseChangedAt;
  }
  get finished(): boolean {
    return this.#finished;
  }
  /** What the status bar shows: an open permission request outranks the session's phase. */
  get statusPhase(): SessionPhase {
    return this.openPermissionCount > 0 ? 'needs_permission' : this.#phase;
  }
  get statusChangedAt(): number {
    return this.openPermissionCount > 0 ? this.#permissionsChangedAt : this.#phaseChangedAt;
  }
  get openPermissionCount(): number {
    return this.#finished ? 0 : this.#permissions.open.length;
  }
  /** Who asks for permission, in the prompt: the agent, else the backend it runs on. */
  get askerLabel(): string {
    return this.agentLabel ?? `the agent on ${this.backend.label}`;
  }
  get revisionCount(): number {
    return this.#revisions().length;
  }
  get sessionLink(): string | undefined {
    return this.backend.sessionLink?.(this.sessionId);
  }
  /** The plan awaiting a decision, if any (the scanner's view, with its text). */
  get pendingPlan(): (PendingPlanRef & { requestId?: string }) | undefined {
    const p = this.#scanner.pendingPlan;
    if (!p || p.plan === null) return undefined;
    const ref: PendingPlanRef & { requestId?: string } = { sessionId: this.sessionId, toolUseId: p.toolUseId, plan: p.plan };
    if (p.requestId !== undefined) ref.requestId = p.requestId;
    return ref;
  }
  /** True while the pending plan can still be decided from here. */
  get canDecide(): boolean {
    const p = this.pendingPlan;
    return (
      !this.#finished &&
      this.#inFlight === undefined &&
      p !== undefined &&
      p.requestId !== undefined &&
      !this.#gate.isUsed(this.sessionId, p.toolUseId)
    );
  }

  /** Starts (or, after a reload, resumes) following the session. */
  start(): void {
    if (this.#finished || this.#loop) return;
    // The scanner holds no serializable state, so a re-attached session replays its log from the
    // start into a fresh scanner; the persisted cursor only tells us how far we had got.
    this.#scanner = new ExitPlanModeScanner();
    this.#permissions = new ToolPermissionTracker();
    this.#loop = this.#follow().finally(() => {
      this.#loop = undefined;
    });
  }

  async #follow(): Promise<void> {
    const o = this.#options;
    const log = o.log;
    log.info(`[${this.key}] following session ${this.sessionId} on ${this.backend.label}`);
    try {
      const approved = await pollForApprovedPlan({
        sessionId: this.sessionId,
        transport: this.backend.transport,
        pollIntervalMs: o.pollIntervalMs,
        timeoutMs: o.timeoutMs,
        signal: this.#abort.signal,
        scanner: this.#scanner,
        onBatch: (events, _scanner, cursor) => {
          this.#cursor = cursor;
          log.trace(`[${this.key}] ${events.length} event(s), cursor ${cursor ?? '-'}`);
          this.#onPermissionEvents(events);
          this.#changed();
        },
        onPhase: (phase, detail) => this.#onPollPhase(phase, detail),
      });
      if (approved.executionTarget === 'local') {
        if (this.#endedBy === 'teleport') return;
        // Teleported from another review (e.g. the browser): say so, let the person take it here.
        this.#setPhase('teleported');
        this.#outcome = { text: 'The plan was teleported from another review of this session.' };
        this.#finish();
        void vscode.window
          .showInformationMessage(`Ultraplan: "${this.title}" was teleported from another review.`, 'Show Plan Review')
          .then((c) => c && vscode.commands.executeCommand('ultraplan.showReview', this.key));
        return;
      }
      // Approved (here or elsewhere): the remote executes it. Keep following until its result.
      this.#setPhase('executing');
      this.#changed();
      const result = await followUntilResult({
        sessionId: this.sessionId,
        transport: this.backend.transport,
        pollIntervalMs: o.pollIntervalMs,
        signal: this.#abort.signal,
        scanner: approved.scanner,
        initialCursor: approved.cursor,
        onBatch: (events, _scanner, cursor) => {
          this.#cursor = cursor;
          // Executing: the agent asks before each edit or command (afterApproval "default").
          this.#onPermissionEvents(events);
          this.#changed();
        },
      });
      const link = this.sessionLink;
      // The result's own text when it has one, else the agent's last message (its summary).
      const summary = result.result?.trim() || approved.scanner.lastAssistantText?.trim();
      const ended = summary || (result.isError ? `The execution ended with ${result.subtype}.` : 'The approved plan was executed.');
      // The pull request / branch, only as the session reports them.
      const report = await executionReport(this.backend, this.sessionId, [result.result, approved.scanner.lastAssistantText], log);
      const text = report ? `${ended}\n\n${report.text}` : ended;
      this.#outcome = link ? { text, link } : { text };
      this.#setPhase(result.isError ? 'failed' : 'completed');
      this.#finish();
      log.info(`[${this.key}] execution ended: ${result.subtype}`);
      const show = 'Show Plan Review';
      const openPr = 'Open Pull Request';
      const buttons = report?.pullRequest ? [show, openPr] : [show];
      const message = `Ultraplan: "${this.title}" ${result.isError ? 'failed while executing' : 'finished'}: ${clip(ended, 200)}${report ? ` ${report.text}` : ''}`;
      void (result.isError ? vscode.window.showErrorMessage(message, ...buttons) : vscode.window.showInformationMessage(message, ...buttons)).then((c) => {
        if (c === show) void vscode.commands.executeCommand('ultraplan.showReview', this.key);
        if (c === openPr && report?.pullRequest) void vscode.env.openExternal(vscode.Uri.parse(report.pullRequest, true));
      });
    } catch (err) {
      if (err instanceof UltraplanPollError && err.reason === 'stopped' && this.#endedBy !== undefined) return;
      if (this.#endedBy === undefined && this.#abort.signal.aborted) return; // disposed (window closing)
      // Claude Code on the web: the failure's own words (cause, fix). When it is our login that
      // failed, the remote session is fine: it is not archived, and Retry follows it again.
      const claudeWeb = claudeWebFailureOf(err);
      const message = claudeWeb?.message ?? errorText(err);
      log.error(`[${this.key}] ${err instanceof UltraplanPollError ? err.reason : 'error'}: ${message}`);
      this.#notice = { level: 'error', text: message };
      this.#setPhase('failed');
      this.#finish();
      if (this.backend.lifecycle?.archiveOnFailure && !isLoginFailure(claudeWeb)) await this.#archive('the session failed');
      if (showBackendFailure(err, { log, prefix: `"${this.title}":`, ...(isLoginFailure(claudeWeb) ? { retry: () => this.resume() } : {}) })) return;
      void vscode.window.showErrorMessage(`Ultraplan: "${this.title}": ${message}`, 'Show Log').then((c) => c && o.log.show());
    }
  }

  #onPollPhase(phase: PollPhase, detail: PollPhaseDetail): void {
    // Waiting on a permission answer is not a question: the prompt and status bar ask for it.
    if (phase === 'needs_input' && this.#permissions.open.length > 0) phase = 'running';
    this.#options.log.info(`[${this.key}] phase ${phase}${detail.pendingPlan ? ` (plan ${detail.pendingPlan.toolUseId})` : ''} status=${detail.status}`);
    if (phase === 'needs_input') this.#question = detail.question ?? undefined;
    else this.#question = undefined;
    const pending = detail.pendingPlan;
    // A plan we already decided on stays "approved"/"rejected" here until the session moves on:
    // the poller may still see it pending for a poll or two before the agent's tool_result lands.
    if (phase === 'plan_ready' && pending && this.#gate.isUsed(this.sessionId, pending.toolUseId)) {
      this.#changed();
      return;
    }
    if (phase === 'plan_ready' && pending) {
      // A new plan: an error notice about the previous one no longer applies.
      this.#notice = undefined;
      if (this.#phase !== 'plan_ready') this.#announcePlanReady();
    }
    if (phase === 'running' && (this.#phase === 'approved' || this.#phase === 'executing')) {
      this.#changed();
      return;
    }
    this.#setPhase(PHASE_LOG[phase]);
  }

  #announcePlanReady(): void {
    // The person is looking at this session's review already: the panel itself is the news.
    const panel = ReviewPanel.current;
    if (panel?.visible && panel.sessionKey === this.key) return;
    const n = this.revisionCount;
    void vscode.window
      .showInformationMessage(`Ultraplan: plan ${n > 1 ? `revision ${n} ` : ''}ready for "${this.title}".`, 'Show Plan Review')
      .then((c) => c && vscode.commands.executeCommand('ultraplan.showReview', this.key));
  }

  #setPhase(phase: PanelPhase): void {
    if (phase !== this.#phase) {
      this.#options.log.info(`[${this.key}] ${this.#phase} -> ${phase}`);
      this.#phase = phase;
      this.#phaseChangedAt = Date.now();
    }
    this.#changed();
  }

  #finish(): void {
    this.#finished = true;
    this.#changed();
  }

  #changed(): void {
    this.#options.onDidChange(this);
  }

  // -------------------------------------------------------------------------------------------
  // Decisions

  /** Checks a binding against the pending plan without using it (for Edit, before opening the editor). */
  check(binding: DecisionBinding): DecisionOutcome {
    const result = this.#gate.check(binding, this.pendingPlan, this.sessionId);
    return result.ok ? { sent: true } : { sent: false, message: result.message };
  }

  /**
   * Sends a decision on the plan `binding` names, if it is still the pending one and was not
   * decided before. Refusals and failures are shown to the person and returned.
   */
  async decide(binding: DecisionBinding, decision: PlanDecision, extras?: { feedback: string; comments: LineComment[] }): Promise<DecisionOutcome> {
    const log = this.#options.log;
    const kind: DecisionKind = decision.kind === 'approve_edited' ? 'edit' : decision.kind;
    const refuse = (message: string): DecisionOutcome => {
      log.warn(`[${this.key}] decision ${kind} on ${binding.toolUseId} refused: ${message}`);
      this.#notice = { level: 'warning', text: message };
      this.releasePanel(kind);
      void vscode.window.showWarningMessage(`Ultraplan: ${message}`);
      return { sent: false, message };
    };
    if (this.#finished) return refuse('This session is no longer followed; the decision was not sent.');
    if (this.#inFlight !== undefined) return refuse(`A decision (${this.#inFlight}) is being sent already; this one was not sent.`);
    const pending = this.pendingPlan;
    if (pending && pending.toolUseId === binding.toolUseId && pending.requestId === undefined) {
      return refuse('The agent has not asked for a decision on this plan yet; nothing was sent.');
    }
    const checked = this.#gate.claim(binding, pending, this.sessionId);
    if (!checked.ok || !pending || pending.requestId === undefined) {
      return refuse(checked.ok ? 'The session is not waiting for a decision.' : checked.message);
    }
    this.#inFlight = kind;
    this.#notice = undefined;
    this.#changed();
    log.info(`[${this.key}] decision ${kind} on plan ${binding.toolUseId} (sha256 ${binding.planHash.slice(0, 12)}…) -> request ${pending.requestId}`);
    try {
      await this.backend.sendEvents(this.sessionId, [decisionEvent(pending.requestId, pending.plan, decision)]);
    } catch (err) {
      // Not delivered: let the person retry (the session refuses a second answer to one request,
      // so a retry after an ambiguous failure cannot decide twice). A 409 means it is decided.
      if (!(err instanceof SessionsError && err.kind === 'conflict')) this.#gate.release(binding);
      this.#inFlight = undefined;
      this.#editing = undefined;
      // Claude Code on the web says why in its own words; a decision the service refused is not
      // sent, and the plan stays pending here (the browser can decide it).
      const claudeWeb = claudeWebFailureOf(err);
      const notDelivered = claudeWeb?.reason === 'decision_not_delivered';
      const message = notDelivered && claudeWeb ? claudeWeb.message : `Sending the decision failed: ${claudeWeb?.message ?? errorText(err)}`;
      log.error(`[${this.key}] ${message}`);
      this.#notice = { level: 'error', text: message };
      this.#changed();
      // Retry sends the same bound decision (the gate checks it again); a teleport is retried from
      // the panel, which also saves the plan.
      const retry = notDelivered || decision.kind === 'teleport' ? {} : { retry: () => this.decide(binding, decision, extras) };
      if (!showBackendFailure(err, { log, ...(notDelivered ? {} : { prefix: 'Your decision was not sent:' }), ...retry })) {
        void vscode.window.showErrorMessage(`Ultraplan: ${message}`);
      }
      return { sent: false, message };
    }
    this.#inFlight = undefined;
    this.#editing = undefined;
    const ext = this.#extrasFor(binding.toolUseId);
    ext.decidedAt = new Date().toISOString();
    if (extras) {
      ext.feedback = extras.feedback;
      ext.comments = extras.comments;
    }
    this.#drafts.delete(binding.toolUseId);
    switch (decision.kind) {
      case 'approve':
        ext.decided = 'approved';
        this.#setPhase('approved');
        break;
      case 'approve_edited':
        ext.decided = 'approved_edited';
        ext.editedPlan = decision.editedPlan;
        this.#setPhase('approved');
        break;
      case 'reject':
        ext.decided = 'rejected';
        this.#setPhase('rejected');
        break;
      case 'teleport':
        ext.decided = 'teleported';
        break;
    }
    this.#changed();
    return { sent: true };
  }

  /**
   * The webview locks its buttons after a click until the host acknowledges (a state with
   * pendingDecision) and then releases (one without). For a decision that did not go out
   * (refused, cancelled at a prompt, an edit closed unapproved) this does both, in order.
   */
  releasePanel(kind: DecisionKind): void {
    this.#ack = kind;
    this.#changed();
    this.#ack = undefined;
    this.#changed();
  }

  /** While a plan is open for editing the panel shows the edit in progress (for that plan only). */
  setEditing(toolUseId: string | undefined): void {
    if (this.#editing === toolUseId) return;
    this.#editing = toolUseId;
    if (toolUseId !== undefined) this.#changed();
    else this.releasePanel('edit');
  }

  async approve(binding: DecisionBinding): Promise<DecisionOutcome> {
    return this.decide(binding, { kind: 'approve' });
  }

  async approveEdited(binding: DecisionBinding, editedPlan: string): Promise<DecisionOutcome> {
    if (editedPlan.trim().length === 0) {
      const message = 'The edited plan is empty; nothing was sent.';
      void vscode.window.showWarningMessage(`Ultraplan: ${message}`);
      return { sent: false, message };
    }
    return this.decide(binding, { kind: 'approve_edited', editedPlan });
  }

  async reject(binding: DecisionBinding, feedback: string, comments: LineComment[]): Promise<DecisionOutcome> {
    const plan = this.pendingPlan?.plan ?? '';
    const text = formatRejectFeedback(
      plan,
      feedback,
      comments.map((c) => ({ startLine: c.line, endLine: c.endLine ?? c.line, text: c.text })),
    );
    return this.decide(binding, { kind: 'reject', feedback: text }, { feedback, comments });
  }

  /** Sends the teleport deny. The caller saves and opens the plan; this ends the following. */
  async teleport(binding: DecisionBinding): Promise<DecisionOutcome & { plan?: string }> {
    const plan = this.pendingPlan?.plan;
    const outcome = await this.decide(binding, { kind: 'teleport' });
    if (!outcome.sent || plan === undefined) return outcome;
    this.#endedBy = 'teleport';
    this.#abort.abort();
    this.#setPhase('teleported');
    this.#finish();
    return { sent: true, plan };
  }

  /** Archives the remote session; a failure is shown as a warning, never thrown. */
  async #archive(why: string): Promise<boolean> {
    this.#options.log.info(`[${this.key}] archiving session ${this.sessionId} (${why})`);
    try {
      await this.backend.archive(this.sessionId);
      return true;
    } catch (err) {
      this.#notice = { level: 'warning', text: `Archiving the session failed: ${errorText(err)}` };
      this.#options.log.warn(`[${this.key}] archive failed: ${errorText(err)}`);
      this.#changed();
      return false;
    }
  }

  /** After a teleport: archives the remote when the setting and the backend say so. */
  async archiveAfterTeleport(settingSaysArchive: boolean): Promise<boolean> {
    if (!settingSaysArchive || !(this.backend.lifecycle?.archiveOnTeleport ?? true)) return false;
    return this.#archive('teleported');
  }

  /** Records where the teleported plan went (shown in the panel). */
  setOutcome(text: string, level?: PanelNotice['level']): void {
    this.#outcome = { text };
    if (level && level !== 'info') this.#notice = { level, text };
    this.#changed();
  }

  async reply(text: string): Promise<DecisionOutcome> {
    const log = this.#options.log;
    if (this.#finished) return { sent: false, message: 'This session is no longer followed.' };
    if (this.#inFlight !== undefined) return { sent: false, message: 'A message is being sent already.' };
    this.#inFlight = 'reply';
    this.#changed();
    log.info(`[${this.key}] reply (${text.length} chars)`);
    try {
      await this.backend.sendEvents(this.sessionId, [userMessageEvent(text)]);
    } catch (err) {
      this.#inFlight = undefined;
      const message = `Sending the reply failed: ${errorText(err)}`;
      log.error(`[${this.key}] ${message}`);
      this.#notice = { level: 'error', text: message };
      this.#changed();
      void vscode.window.showErrorMessage(`Ultraplan: ${message}`);
      return { sent: false, message };
    }
    this.#inFlight = undefined;
    this.#question = undefined;
    this.#notice = undefined;
    this.#setPhase('planning');
    return { sent: true };
  }

  saveDraft(draft: PanelDraft): void {
    this.#drafts.set(draft.toolUseId, draft);
    this.#changed();
  }

  /**
   * Follows a session again after our own login failed (the person ran `claude` and chose Retry):
   * the log is replayed from its start, as after a reload.
   */
  resume(): void {
    if (!this.#finished || this.#endedBy !== undefined || this.#phase !== 'failed') return;
    this.#options.log.info(`[${this.key}] following session ${this.sessionId} again`);
    this.#finished = false;
    this.#notice = undefined;
    this.#abort = new AbortController();
    this.start();
  }

  /** Stops following and archives the session (ends its agent). */
  async stop(): Promise<void> {
    this.#endedBy = 'stop';
    this.#abort.abort();
    this.#options.log.info(`[${this.key}] stopping`);
    if (this.backend.lifecycle?.archiveOnStop ?? true) await this.#archive('stopped');
    this.#setPhase('stopped');
    this.#finish();
  }

  // -------------------------------------------------------------------------------------------
  // Tool permission requests (each one a person's decision; never answered automatically)

  #onPermissionEvents(events: unknown[]): void {
    const log = this.#options.log;
    const changes = this.#permissions.ingest(events);
    for (const { request, reason } of changes.closed) {
      log.info(`[${this.key}] permission request ${request.requestId} (${clip(request.toolName, 80)}) closed: ${reason.replace('_', ' ')}`);
    }
    for (const request of changes.opened) {
      log.info(`[${this.key}] permission request ${request.requestId}: ${clip(request.toolName, 80)} ${clip(request.summary, 200)} (tool_use ${request.toolUseId})`);
      this.#ask(request);
    }
    if (changes.opened.length > 0 || changes.closed.length > 0) this.#permissionsChangedAt = Date.now();
  }

  /** Open tool permission requests, oldest first. */
  get openPermissions(): readonly ToolPermissionRequest[] {
    return this.#finished ? [] : this.#permissions.open;
  }

  /** An answer's binding: this session, the request, and the input shown with it. */
  permissionBinding(request: ToolPermissionRequest): DecisionBinding {
    const ref = permissionGateRef(this.sessionId, request);
    return { sessionId: this.sessionId, toolUseId: ref.toolUseId, planHash: planHash(ref.plan) };
  }

  #ask(request: ToolPermissionRequest): void {
    if (this.#prompting.has(request.requestId)) return;
    this.#prompting.add(request.requestId);
    void promptPermission(this, request, this.permissionBinding(request), this.#options.permissionDetails).finally(() =>
      this.#prompting.delete(request.requestId),
    );
  }

  /** Shows every open request again (the status bar's click: a notification may have gone). */
  askOpenPermissions(): void {
    if (this.#finished) return;
    for (const request of this.#permissions.open) {
      this.#prompting.delete(request.requestId);
      this.#ask(request);
    }
  }

  isPermissionOpen(requestId: string): boolean {
    return !this.#finished && this.#permissions.isOpen(requestId);
  }

  /**
   * Answers a permission request the person decided on, at most once: a repeated click, a request
   * already closed (answered elsewhere, the turn ended) or one for another session is refused with
   * a message. Allow sends the input unchanged; deny a fixed message.
   */
  async answerPermission(binding: DecisionBinding, requestId: string, answer: 'allow' | 'deny'): Promise<DecisionOutcome> {
    const log = this.#options.log;
    const refuse = (message: string): DecisionOutcome => {
      log.warn(`[${this.key}] permission ${answer} for ${requestId} refused: ${message}`);
      void vscode.window.showWarningMessage(`Ultraplan: ${message}`);
      return { sent: false, message };
    };
    if (this.#finished) return refuse('This session is no longer followed; the answer was not sent.');
    const request = this.#permissions.get(requestId);
    const checked = this.#permissionGate.claim(binding, request ? permissionGateRef(this.sessionId, request) : undefined, this.sessionId);
    if (!checked.ok) return refuse(permissionRefusalMessage(checked.reason));
    if (!request) return refuse(permissionRefusalMessage('no_pending_plan'));
    log.info(`[${this.key}] permission ${answer} for ${requestId} (${clip(request.toolName, 80)})`);
    try {
      await this.backend.sendEvents(this.sessionId, [permissionResponseEvent(request, answer)]);
    } catch (err) {
      if (err instanceof SessionsError && err.kind === 'conflict') {
        // The session took another answer first (the browser, another window) or has ended.
        this.#permissions.markAnswered(requestId);
        this.#permissionsChangedAt = Date.now();
        this.#changed();
        const message = 'This permission request was already answered elsewhere (or the session ended); your answer was not sent.';
        log.warn(`[${this.key}] permission ${answer} for ${requestId}: 409, ${message}`);
        void vscode.window.showInformationMessage(`Ultraplan: ${message}`);
        return { sent: false, message };
      }
      // Not delivered: the request stays open and may be answered again.
      this.#permissionGate.release(binding);
      const message = `Sending your answer failed: ${claudeWebFailureOf(err)?.message ?? errorText(err)}`;
      log.error(`[${this.key}] ${message}`);
      const again = 'Ask Again';
      void vscode.window.showErrorMessage(`Ultraplan: ${message}`, again).then((c) => {
        if (c === again && this.#permissions.isOpen(requestId)) this.#ask(request);
      });
      return { sent: false, message };
    }
    this.#permissions.markAnswered(requestId);
    this.#permissionsChangedAt = Date.now();
    this.#changed();
    return { sent: true };
  }

  // -------------------------------------------------------------------------------------------
  // Views

  #extrasFor(toolUseId: string): RevisionExtras {
    let e = this.#extras.get(toolUseId);
    if (!e) {
      e = { comments: [] };
      this.#extras.set(toolUseId, e);
    }
    return e;
  }

  #revisions(): PlanRevision[] {
    const seen = this.#scanner.revisions.filter((r) => r.plan !== null);
    if (seen.length === 0) return this.#restoredRevisions;
    const pendingId = this.#scanner.pendingPlan?.toolUseId;
    return seen.map((r, i) => {
      const ext = this.#extras.get(r.toolUseId);
      // An edited approval shows what was approved: the session's own record of it, else ours.
      const approvedEdit = r.outcome.kind === 'approved' && r.outcome.edited ? r.outcome.plan : null;
      const plan = approvedEdit ?? ext?.editedPlan ?? r.plan ?? '';
      let status: PlanRevision['status'];
      switch (r.outcome.kind) {
        case 'rejected':
          status = 'rejected';
          break;
        case 'approved':
          status = r.outcome.edited ? 'approved_edited' : 'approved';
          break;
        case 'teleport':
          status = 'teleported';
          break;
        default:
          status = ext?.decided ?? (r.toolUseId === pendingId ? 'pending' : 'superseded');
      }
      const rev: PlanRevision = {
        revision: i + 1,
        toolUseId: r.toolUseId,
        plan,
        planHash: planHash(plan),
        status,
        comments: ext?.comments ?? [],
      };
      const feedback = ext?.feedback ?? (r.outcome.kind === 'rejected' ? r.outcome.feedback : undefined);
      if (feedback !== undefined) rev.feedback = clip(feedback, PANEL_LIMITS.feedbackChars);
      if (ext?.decidedAt !== undefined) rev.decidedAt = ext.decidedAt;
      return rev;
    });
  }

  panelState(): PanelState {
    const revisions = this.#revisions().slice(-PANEL_LIMITS.revisions);
    const current = revisions[revisions.length - 1];
    const state: PanelState = {
      sessionKey: this.key,
      sessionId: this.sessionId,
      title: clip(this.title, PANEL_LIMITS.labelChars),
      backendLabel: clip(this.backend.label, PANEL_LIMITS.labelChars),
      phase: this.#phase,
      revisions,
      canDecide: this.canDecide && current !== undefined && current.toolUseId === this.pendingPlan?.toolUseId,
    };
    if (this.demo) state.demo = true;
    if (this.agentLabel) state.agentLabel = clip(this.agentLabel, PANEL_LIMITS.labelChars);
    const link = this.sessionLink;
    if (link) state.sessionLink = link;
    if (this.#phase === 'needs_input' && this.#question) state.question = clip(this.#question, PANEL_LIMITS.textChars);
    const editingCurrent = this.#editing !== undefined && this.#editing === current?.toolUseId && this.canDecide;
    const pendingDecision = this.#inFlight ?? this.#ack ?? (editingCurrent ? 'edit' : undefined);
    if (pendingDecision !== undefined) state.pendingDecision = pendingDecision;
    if (this.#notice) state.notice = { level: this.#notice.level, text: clip(this.#notice.text, PANEL_LIMITS.textChars) };
    if (this.#outcome) state.outcome = { ...this.#outcome, text: clip(this.#outcome.text, PANEL_LIMITS.textChars) };
    if (current) {
      const draft = this.#drafts.get(current.toolUseId);
      if (draft) state.draft = draft;
    }
    return state;
  }

  toPersisted(): PersistedSession {
    const p: PersistedSession = {
      key: this.key,
      backendKind: this.backend.kind,
      backendLabel: this.backend.label,
      sessionId: this.sessionId,
      title: this.title,
      createdAt: this.createdAt,
      phaseChangedAt: this.#phaseChangedAt,
      cursor: this.#cursor,
      phase: this.#phase,
      revisions: this.#revisions(),
      drafts: [...this.#drafts.values()],
      usedBindings: this.#gate.used(),
      finished: this.#finished,
    };
    if (this.serverUrl !== undefined) p.serverUrl = this.serverUrl;
    if (this.#question !== undefined) p.question = this.#question;
    if (this.#outcome !== undefined) p.outcome = this.#outcome;
    if (this.demo) p.demo = true;
    if (this.agentLabel !== undefined) p.agentLabel = this.agentLabel;
    return p;
  }

  /** Stops following without touching the session (window closing, extension deactivating). */
  dispose(): void {
    this.#abort.abort();
  }

  /** Resolves when the follow loop has ended (after dispose or stop). */
  async settled(): Promise<void> {
    await this.#loop;
  }
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

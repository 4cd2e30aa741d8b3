// One followed session: the follower that runs the poller and feeds the session model (one reduce
// per poll), the decision gate the person's decisions pass, and the projections of the model's
// state that the status bar, the review panel and persistence read. It imports no editor API:
// everything it says to the person goes through its SessionNotifier, and what only its backend
// can say (Claude Code on the web's failures) through that backend's voice.
// Data flows one way: events -> poller (one parse) -> model -> projections; decisions flow back
// through here and answer `sent` or `refused` (see docs/architecture.md).
import { approvalWithNotes, checkNotes, notesDeliveryFor } from '../../core/approvalNotes';
import { DecisionGate, decisionEvent, planHash, type DecisionBinding, type PendingPlanRef, type PlanDecision } from '../../core/decision';
import { SessionsError, UltraplanPollError } from '../../core/errors';
import { formatRejectFeedback } from '../../core/feedback';
import type { DecisionKind, LineComment, PanelDraft, PanelNotice, PanelState, PlanRevision } from '../../core/panelMessages';
import type { PersistedSession } from '../../core/persistedSessions';
import { endedByFromPhase, type Phase } from '../../core/phase';
import { permissionRefusalMessage, permissionResponseEvent, type ToolPermissionRequest } from '../../core/permissionRequests';
import { followUntilResult, pollForApprovedPlan, type PollRead } from '../../core/poller';
import { userMessageEvent, type AnyEvent } from '../../core/protocol';
import { SessionModel, type LocalDecision, type SessionInput, type SessionState } from '../../core/sessionModel';
import { clip } from '../../core/panelMessages';
import { PlanHashes, projectPanelState, projectRevisions, type RevisionNotes } from '../../core/sessionProjection';
import { agentModeText, appendLatest, needNotificationKey, rememberNotified, type InboxEntry } from '../../core/inbox';
import type { ReportedMode } from '../../core/eventBatch';
import { MAX_SAVED_PLANS } from '../../core/persistedSessions';
import type { SessionBackend } from '../../sessions/backend';
import { plainVoice, type BackendVoice, type PermissionAsker, type SessionLog, type SessionNotifier } from './sessionNotifier';

export interface SessionControllerOptions {
  backend: SessionBackend;
  log: SessionLog;
  notifier: SessionNotifier;
  /** What only the backend can say (its failures, its execution report); plain by default. */
  voice?: BackendVoice;
  pollIntervalMs: number;
  timeoutMs: number;
  /** Called once per change of what a person sees (status bar, panel, persistence). */
  onDidChange: (controller: SessionController) => void;
  /** A session restored after a reload; absent for a new session. */
  restored?: PersistedSession;
  /** For a new session. */
  fresh?: { key: string; sessionId: string; title: string; demo: boolean; serverUrl?: string; agentLabel?: string; readOnly?: string };
  /** The clock (tests pass their own). */
  now?: () => number;
  /** Whether a session that starts needing the person raises a notification (ultraplan.notifications); yes by default. */
  notifyNeeds?: () => boolean;
}

/** The one answer to a decision or reply: it went out, or it was refused and why. */
export type DecisionOutcome = { sent: true } | { sent: false; message: string };

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The gate key of a tool permission request (plans are keyed by their tool_use id). */
function permissionGateRef(sessionId: string, request: ToolPermissionRequest): PendingPlanRef {
  return { sessionId, toolUseId: `permission:${request.requestId}`, plan: JSON.stringify(request.input ?? null) };
}

const LOCAL_DECISION: Record<PlanDecision['kind'], LocalDecision> = {
  approve: 'approved',
  approve_edited: 'approved_edited',
  reject: 'rejected',
  teleport: 'teleported',
};

export class SessionController implements PermissionAsker {
  readonly key: string;
  readonly sessionId: string;
  readonly title: string;
  readonly backend: SessionBackend;
  readonly createdAt: number;
  readonly demo: boolean;
  readonly serverUrl: string | undefined;
  /** The agent that plans (embedded: "Claude (ACP)", "Demo (scripted)"); unknown for remote backends. */
  readonly agentLabel: string | undefined;
  /**
   * Why decisions cannot be taken here (a session attached read-only, e.g. archived): shown in the
   * panel, and every decision, reply or answer is refused with it. Undefined: decisions go out.
   */
  readonly readOnly: string | undefined;

  readonly #model: SessionModel;
  readonly #gate: DecisionGate;
  /** Answers to permission requests go through their own gate: one answer per request. */
  readonly #permissionGate = new DecisionGate();
  /** Requests whose notification is up (so a new batch does not show the same one twice). */
  readonly #prompting = new Set<string>();
  readonly #extras = new Map<string, RevisionNotes>();
  /** Revisions restored from storage, shown until the replayed events bring them back. */
  readonly #restoredRevisions: PlanRevision[];
  readonly #hashes = new PlanHashes();
  #drafts = new Map<string, PanelDraft>();
  #notice: PanelNotice | undefined;
  #outcome: { text: string; link?: string } | undefined;
  #inFlight: DecisionKind | undefined;
  /** The plan (tool_use id) open for editing, if any. */
  #editing: string | undefined;
  #abort = new AbortController();
  #loop: Promise<void> | undefined;
  /** Set when this host ended the loop on purpose (teleport, stop), so the abort is not a failure. */
  #endedHere: 'teleport' | 'stop' | undefined;
  #panelState: PanelState | undefined;
  /** Needs already announced (inbox.ts needNotificationKey), kept across reloads. */
  #notified: string[] = [];
  /** Plan files saved from this session, oldest first. */
  #savedPlans: string[] = [];
  readonly #options: SessionControllerOptions;
  readonly #voice: BackendVoice;
  readonly #now: () => number;

  constructor(options: SessionControllerOptions) {
    this.#options = options;
    this.#voice = options.voice ?? plainVoice;
    this.#now = options.now ?? Date.now;
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
      this.readOnly = r.readOnly;
      this.#gate = new DecisionGate(r.usedBindings);
      this.#restoredRevisions = r.revisions;
      const decided: Array<[string, LocalDecision]> = [];
      for (const rev of r.revisions) {
        const extras: RevisionNotes = { comments: rev.comments };
        if (rev.feedback !== undefined) extras.feedback = rev.feedback;
        if (rev.decidedAt !== undefined) extras.decidedAt = rev.decidedAt;
        if (rev.notes !== undefined) extras.notes = rev.notes;
        if (rev.status === 'rejected' || rev.status === 'approved' || rev.status === 'approved_edited' || rev.status === 'teleported') {
          decided.push([rev.toolUseId, rev.status]);
        }
        this.#extras.set(rev.toolUseId, extras);
      }
      for (const d of r.drafts) this.#drafts.set(d.toolUseId, d);
      if (r.outcome !== undefined) this.#outcome = r.outcome;
      this.#notified = [...(r.notified ?? [])];
      this.#savedPlans = [...(r.savedPlans ?? [])];
      const model: ConstructorParameters<typeof SessionModel>[0] = {
        initialPhase: r.phase,
        cursor: r.cursor,
        localDecisions: decided,
        at: r.phaseChangedAt,
      };
      if (r.question !== undefined) model.initialQuestion = r.question;
      if (r.agentMode !== undefined) model.agentMode = r.agentMode;
      if (r.finished) model.ended = endedByFromPhase(r.phase);
      this.#model = new SessionModel(model);
    } else if (options.fresh) {
      const f = options.fresh;
      this.key = f.key;
      this.sessionId = f.sessionId;
      this.title = f.title;
      this.createdAt = this.#now();
      this.demo = f.demo;
      this.serverUrl = f.serverUrl;
      this.agentLabel = f.agentLabel;
      this.readOnly = f.readOnly;
      this.#gate = new DecisionGate();
      this.#restoredRevisions = [];
      this.#model = new SessionModel({ initialPhase: 'planning', cursor: null, at: this.createdAt });
    } else {
      throw new Error('SessionController needs either a restored or a fresh session');
    }
    this.#lastLoggedPhase = this.#model.state.phase;
  }

  /** The session model's state: what every projection reads. */
  get state(): SessionState {
    return this.#model.state;
  }
  get phase(): Phase {
    return this.state.phase;
  }
  get phaseChangedAt(): number {
    return this.state.phaseChangedAt;
  }
  get finished(): boolean {
    return this.state.ended !== undefined;
  }
  /** What the status bar shows: an open permission request outranks the session's phase. */
  get statusPhase(): Phase {
    return this.state.attention;
  }
  get statusChangedAt(): number {
    return this.state.attentionChangedAt;
  }
  get openPermissionCount(): number {
    return this.state.permissions.length;
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
  /** The agent's mode as it last reported it. */
  get agentMode(): ReportedMode | undefined {
    return this.state.agentMode;
  }
  /** The mode in words ("plan (read-only)"); a finished session that never reported one has none. */
  get modeText(): string | undefined {
    const mode = this.state.agentMode;
    return mode || !this.finished ? agentModeText(mode) : undefined;
  }
  /** Plan files saved from this session (absolute paths), oldest first. */
  get savedPlans(): readonly string[] {
    return this.#savedPlans;
  }
  /** Records a plan file saved from this session (a teleport), so it is listed under it. */
  addSavedPlan(path: string): void {
    this.#savedPlans = appendLatest(this.#savedPlans, path, MAX_SAVED_PLANS);
    this.#changed();
  }
  /** What the inbox lists of this session. */
  inboxEntry(): InboxEntry {
    return {
      key: this.key,
      title: this.title,
      attention: this.statusPhase,
      changedAt: this.statusChangedAt,
      createdAt: this.createdAt,
      finished: this.finished,
      backendLabel: this.backend.label,
      agentLabel: this.agentLabel,
      modeText: this.modeText,
      revisionCount: this.revisionCount,
    };
  }
  /** The plan awaiting a decision, if any (the scanner's view, with its text). */
  get pendingPlan(): (PendingPlanRef & { requestId?: string }) | undefined {
    const p = this.state.pendingPlan;
    if (!p || p.plan === null) return undefined;
    const ref: PendingPlanRef & { requestId?: string } = { sessionId: this.sessionId, toolUseId: p.toolUseId, plan: p.plan };
    if (p.requestId !== undefined) ref.requestId = p.requestId;
    return ref;
  }
  /** True while the pending plan can still be decided from here. */
  get canDecide(): boolean {
    const p = this.pendingPlan;
    return (
      !this.finished &&
      this.readOnly === undefined &&
      this.#inFlight === undefined &&
      p !== undefined &&
      p.requestId !== undefined &&
      !this.#gate.isUsed(this.sessionId, p.toolUseId)
    );
  }

  /** Starts (or, after a reload, resumes) following the session. */
  start(): void {
    if (this.finished || this.#loop) return;
    this.#reduce({ type: 'restarted', at: this.#now() }, false);
    this.#loop = this.#follow().finally(() => {
      this.#loop = undefined;
    });
  }

  /** Feeds the model one input; projections hear about it once, and only if something changed. */
  #reduce(input: SessionInput, notify = true): void {
    const change = this.#model.reduce(input);
    const log = this.#options.log;
    for (const { request, reason } of change.closed) {
      log.info(`[${this.key}] permission request ${request.requestId} (${clip(request.toolName, 80)}) closed: ${reason.replace('_', ' ')}`);
    }
    for (const request of change.opened) {
      log.info(
        `[${this.key}] permission request ${request.requestId}: ${clip(request.toolName, 80)} ${clip(request.summary, 200)} (tool_use ${request.toolUseId})`,
      );
      this.#ask(request);
    }
    // A new plan: an error notice about the previous one no longer applies.
    if (change.planBecameReady) this.#notice = undefined;
    if (change.changed) this.#announceNeed();
    if (change.changed && change.state.phase !== this.#lastLoggedPhase) {
      const plan = change.state.phase === 'plan_ready' && change.state.pendingPlan ? ` (plan ${change.state.pendingPlan.toolUseId})` : '';
      log.info(`[${this.key}] ${this.#lastLoggedPhase} -> ${change.state.phase}${plan}`);
      this.#lastLoggedPhase = change.state.phase;
    }
    if (notify && change.changed) this.#changed();
  }
  #lastLoggedPhase: Phase | undefined;

  #onPoll(poll: PollRead): void {
    if (poll.batch.size > 0) this.#options.log.trace(`[${this.key}] ${poll.batch.size} event(s), cursor ${poll.cursor ?? '-'}`);
    this.#reduce({ type: 'poll', poll, at: this.#now() });
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
        scanner: this.#model.scanner,
        onPoll: (poll) => this.#onPoll(poll),
      });
      if (approved.executionTarget === 'local') {
        if (this.#endedHere === 'teleport') return;
        // Teleported from another review (e.g. the browser): say so, let the person take it here.
        this.#outcome = { text: 'The plan was teleported from another review of this session.' };
        this.#reduce({ type: 'ended', by: 'teleported_elsewhere', at: this.#now() });
        o.notifier.say('info', `"${this.title}" was teleported from another review.`, this.#showReviewAction());
        return;
      }
      // Approved (here or elsewhere): the remote executes it. Keep following until its result.
      const result = await followUntilResult({
        sessionId: this.sessionId,
        transport: this.backend.transport,
        pollIntervalMs: o.pollIntervalMs,
        signal: this.#abort.signal,
        scanner: approved.scanner,
        initialCursor: approved.cursor,
        // Executing: the agent asks before each edit or command (afterApproval "default").
        onPoll: (poll) => this.#onPoll(poll),
      });
      const link = this.sessionLink;
      // The result's own text when it has one, else the agent's last message (its summary).
      const summary = result.result?.trim() || approved.scanner.lastAssistantText?.trim();
      const ended = summary || (result.isError ? `The execution ended with ${result.subtype}.` : 'The approved plan was executed.');
      // The pull request / branch, only as the session reports them.
      const report = await this.#voice.executionReport(this.backend, this.sessionId, [result.result, approved.scanner.lastAssistantText]);
      const text = report ? `${ended}\n\n${report.text}` : ended;
      this.#outcome = link ? { text, link } : { text };
      this.#reduce({ type: 'ended', by: result.isError ? 'execution_failed' : 'completed', at: this.#now() });
      log.info(`[${this.key}] execution ended: ${result.subtype}`);
      // The review on screen shows the outcome itself; a notification would only cover it.
      if (o.notifier.isReviewShowing(this.key)) return;
      const actions = [this.#showReviewAction()];
      const pullRequest = report?.pullRequest;
      if (pullRequest) actions.push({ label: 'Open Pull Request', run: () => o.notifier.openExternal(pullRequest) });
      o.notifier.say(
        result.isError ? 'error' : 'info',
        `"${this.title}" ${result.isError ? 'failed while executing' : 'finished'}: ${clip(ended, 200)}${report ? ` ${report.text}` : ''}`,
        ...actions,
      );
    } catch (err) {
      if (err instanceof UltraplanPollError && err.reason === 'stopped' && this.#endedHere !== undefined) return;
      if (this.#endedHere === undefined && this.#abort.signal.aborted) return; // disposed (window closing)
      if (this.readOnly !== undefined) {
        // Followed read-only (archived, say): the end is the session's own, not ours to archive or alarm about.
        log.info(`[${this.key}] read-only follow ended: ${errorText(err)}`);
        this.#outcome = { text: errorText(err) };
        this.#reduce({ type: 'ended', by: 'stop', at: this.#now() });
        return;
      }
      // The backend's own words when it has them (cause, fix). When it is our login that failed,
      // the remote session is fine: it is not archived, and Retry follows it again.
      const reading = this.#voice.read(err);
      const message = reading.message ?? errorText(err);
      log.error(`[${this.key}] ${err instanceof UltraplanPollError ? err.reason : 'error'}: ${message}`);
      this.#notice = { level: 'error', text: message };
      this.#reduce({ type: 'ended', by: 'failed', at: this.#now() });
      if (this.backend.lifecycle?.archiveOnFailure && !reading.ownLogin) await this.#archive('the session failed');
      if (this.#voice.show(err, { prefix: `"${this.title}":`, ...(reading.ownLogin ? { retry: () => this.resume() } : {}) })) return;
      o.notifier.say('error', `"${this.title}": ${message}`, { label: 'Show Log', run: () => log.show() });
    }
  }

  #showReviewAction() {
    return { label: 'Show Plan Review', run: () => this.#options.notifier.showReview(this.key) };
  }

  /**
   * Announces a need once: a plan once per plan, a question once per question, never again after a
   * reload (what was announced is persisted). When the person is looking at this session's review
   * the panel itself is the news; the need counts as announced.
   */
  #announceNeed(): void {
    const state = this.state;
    const key = needNotificationKey({
      key: this.key,
      attention: state.attention,
      finished: this.finished,
      planToolUseId: state.pendingPlan && state.pendingPlan.plan !== null ? state.pendingPlan.toolUseId : undefined,
      questionId: state.question ? planHash(state.question).slice(0, 16) : undefined,
    });
    if (key === undefined || this.#notified.includes(key)) return;
    this.#notified = rememberNotified(this.#notified, key);
    const notifier = this.#options.notifier;
    if (notifier.isReviewShowing(this.key) || this.#options.notifyNeeds?.() === false) return;
    const review = { label: 'Review', run: () => notifier.showReview(this.key) };
    if (state.attention === 'plan_ready') {
      const n = this.revisionCount;
      notifier.say('info', `plan ${n > 1 ? `revision ${n} ` : ''}ready for "${this.title}".`, review);
    } else {
      notifier.say('info', `the agent asks a question in "${this.title}".`, review);
    }
  }

  #changed(): void {
    this.#panelState = undefined;
    this.#options.onDidChange(this);
  }

  // -------------------------------------------------------------------------------------------
  // Decisions

  /** Checks a binding against the pending plan without using it (for Edit, before opening the editor). */
  check(binding: DecisionBinding): DecisionOutcome {
    if (this.readOnly !== undefined) return { sent: false, message: this.readOnly };
    if (this.finished) return { sent: false, message: 'This session is no longer followed; the decision was not sent.' };
    const result = this.#gate.check(binding, this.pendingPlan, this.sessionId);
    return result.ok ? { sent: true } : { sent: false, message: result.message };
  }

  /**
   * Sends a decision on the plan `binding` names, if it is still the pending one and was not
   * decided before. Refusals and failures are shown to the person and returned.
   */
  async decide(
    binding: DecisionBinding,
    decision: PlanDecision,
    extras?: { feedback: string; comments: LineComment[] },
    notes?: { notes: string; after: AnyEvent[] },
  ): Promise<DecisionOutcome> {
    const log = this.#options.log;
    // Notes carried as an edit are still the person's approve, not an Edit.
    const kind: DecisionKind = notes ? 'approve' : decision.kind === 'approve_edited' ? 'edit' : decision.kind;
    const refuse = (message: string): DecisionOutcome => {
      log.warn(`[${this.key}] decision ${kind} on ${binding.toolUseId} refused: ${message}`);
      this.#notice = { level: 'warning', text: message };
      this.#changed();
      this.#options.notifier.say('warning', message);
      return { sent: false, message };
    };
    if (this.readOnly !== undefined) return refuse(this.readOnly);
    if (this.finished) return refuse('This session is no longer followed; the decision was not sent.');
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
    log.info(
      `[${this.key}] decision ${kind}${notes ? ` with notes (${notes.notes.length} chars)` : ''} on plan ${binding.toolUseId} (sha256 ${binding.planHash.slice(0, 12)}…) -> request ${pending.requestId}`,
    );
    try {
      // One batch: the approval and what follows it are taken together or not at all.
      await this.backend.sendEvents(this.sessionId, [decisionEvent(pending.requestId, pending.plan, decision), ...(notes?.after ?? [])]);
    } catch (err) {
      // Not delivered: let the person retry (the session refuses a second answer to one request,
      // so a retry after an ambiguous failure cannot decide twice). A 409 means it is decided.
      if (!(err instanceof SessionsError && err.kind === 'conflict')) this.#gate.release(binding);
      this.#inFlight = undefined;
      this.#editing = undefined;
      // The backend says why in its own words; a decision the service refused is not sent, and the
      // plan stays pending here (the browser can decide it).
      const reading = this.#voice.read(err);
      const message =
        reading.decisionNotDelivered && reading.message
          ? reading.message
          : `Sending the decision failed: ${reading.message ?? errorText(err)}`;
      log.error(`[${this.key}] ${message}`);
      this.#notice = { level: 'error', text: message };
      this.#changed();
      // Retry sends the same bound decision (the gate checks it again); a teleport is retried from
      // the panel, which also saves the plan.
      const retry =
        reading.decisionNotDelivered || decision.kind === 'teleport' ? {} : { retry: () => this.decide(binding, decision, extras, notes) };
      if (!this.#voice.show(err, { ...(reading.decisionNotDelivered ? {} : { prefix: 'Your decision was not sent:' }), ...retry })) {
        this.#options.notifier.say('error', message);
      }
      return { sent: false, message };
    }
    this.#inFlight = undefined;
    this.#editing = undefined;
    const ext = this.#extrasFor(binding.toolUseId);
    ext.decidedAt = new Date(this.#now()).toISOString();
    if (extras) {
      ext.feedback = extras.feedback;
      ext.comments = extras.comments;
    }
    // The reviewer's version is the plan an edited approval shows, until the session records it.
    if (decision.kind === 'approve_edited') ext.editedPlan = decision.editedPlan;
    if (notes) ext.notes = notes.notes;
    this.#drafts.delete(binding.toolUseId);
    this.#reduce({ type: 'decided', toolUseId: binding.toolUseId, decision: LOCAL_DECISION[decision.kind], at: this.#now() }, false);
    this.#changed();
    return { sent: true };
  }

  /** While a plan is open for editing the panel shows the edit in progress (for that plan only). */
  setEditing(toolUseId: string | undefined): void {
    if (this.#editing === toolUseId) return;
    this.#editing = toolUseId;
    this.#changed();
  }

  async approve(binding: DecisionBinding): Promise<DecisionOutcome> {
    return this.decide(binding, { kind: 'approve' });
  }

  /**
   * Approves with notes for the agent: per backend, the notes follow the approval as the next
   * user message, or are appended to the approved plan as an edit (src/core/approvalNotes.ts).
   */
  async approveWithNotes(binding: DecisionBinding, notes: string): Promise<DecisionOutcome> {
    const checked = checkNotes(notes);
    if (!checked.ok) {
      this.#options.notifier.say('warning', checked.message);
      return { sent: false, message: checked.message };
    }
    // The plan the binding names; the gate in decide() refuses it if it is not the pending one.
    const plan = this.pendingPlan?.toolUseId === binding.toolUseId ? this.pendingPlan.plan : '';
    const { decision, after } = approvalWithNotes(notesDeliveryFor(this.backend.kind), plan, checked.notes);
    return this.decide(binding, decision, undefined, { notes: checked.notes, after });
  }

  async approveEdited(binding: DecisionBinding, editedPlan: string): Promise<DecisionOutcome> {
    if (editedPlan.trim().length === 0) {
      const message = 'The edited plan is empty; nothing was sent.';
      this.#options.notifier.say('warning', message);
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
    this.#endedHere = 'teleport';
    this.#abort.abort();
    this.#reduce({ type: 'ended', by: 'teleport', at: this.#now() });
    return { sent: true, plan };
  }

  /** Archives the remote session; a failure is shown in the panel, never thrown. */
  async #archive(why: string): Promise<boolean> {
    // A session attached read-only is someone else's to end.
    if (this.readOnly !== undefined) return false;
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
    if (this.readOnly !== undefined) return { sent: false, message: this.readOnly };
    if (this.finished) return { sent: false, message: 'This session is no longer followed.' };
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
      this.#options.notifier.say('error', message);
      return { sent: false, message };
    }
    this.#inFlight = undefined;
    this.#notice = undefined;
    this.#reduce({ type: 'replied', at: this.#now() }, false);
    this.#changed();
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
    if (!this.finished || this.#endedHere !== undefined || this.phase !== 'failed') return;
    this.#options.log.info(`[${this.key}] following session ${this.sessionId} again`);
    this.#notice = undefined;
    this.#abort = new AbortController();
    // Not finished any more: the replay from the start decides what the session is now.
    this.#reduce({ type: 'restarted', at: this.#now() });
    this.start();
  }

  /** Stops following and archives the session (ends its agent). */
  async stop(): Promise<void> {
    this.#endedHere = 'stop';
    this.#abort.abort();
    this.#options.log.info(`[${this.key}] stopping`);
    if (this.backend.lifecycle?.archiveOnStop ?? true) await this.#archive('stopped');
    this.#reduce({ type: 'ended', by: 'stop', at: this.#now() });
  }

  // -------------------------------------------------------------------------------------------
  // Tool permission requests (each one a person's decision; never answered automatically)

  /** Open tool permission requests, oldest first. */
  get openPermissions(): readonly ToolPermissionRequest[] {
    return this.state.permissions;
  }

  /** An answer's binding: this session, the request, and the input shown with it. */
  permissionBinding(request: ToolPermissionRequest): DecisionBinding {
    const ref = permissionGateRef(this.sessionId, request);
    return { sessionId: this.sessionId, toolUseId: ref.toolUseId, planHash: planHash(ref.plan) };
  }

  #ask(request: ToolPermissionRequest): void {
    if (this.#prompting.has(request.requestId)) return;
    this.#prompting.add(request.requestId);
    void this.#options.notifier
      .askPermission(this, request, this.permissionBinding(request))
      .finally(() => this.#prompting.delete(request.requestId));
  }

  /** Shows every open request again (the status bar's click: a notification may have gone). */
  askOpenPermissions(): void {
    for (const request of this.openPermissions) {
      this.#prompting.delete(request.requestId);
      this.#ask(request);
    }
  }

  isPermissionOpen(requestId: string): boolean {
    return this.openPermissions.some((r) => r.requestId === requestId);
  }

  /**
   * Answers a permission request the person decided on, at most once: a repeated click, a request
   * already closed (answered elsewhere, the turn ended) or one for another session is refused with
   * a message. Allow sends the input unchanged; deny a fixed message.
   */
  async answerPermission(binding: DecisionBinding, requestId: string, answer: 'allow' | 'deny'): Promise<DecisionOutcome> {
    const log = this.#options.log;
    const notifier = this.#options.notifier;
    const refuse = (message: string): DecisionOutcome => {
      log.warn(`[${this.key}] permission ${answer} for ${requestId} refused: ${message}`);
      notifier.say('warning', message);
      return { sent: false, message };
    };
    if (this.readOnly !== undefined) return refuse(this.readOnly);
    if (this.finished) return refuse('This session is no longer followed; the answer was not sent.');
    const request = this.openPermissions.find((r) => r.requestId === requestId);
    const checked = this.#permissionGate.claim(binding, request ? permissionGateRef(this.sessionId, request) : undefined, this.sessionId);
    if (!checked.ok) return refuse(permissionRefusalMessage(checked.reason));
    if (!request) return refuse(permissionRefusalMessage('no_pending_plan'));
    log.info(`[${this.key}] permission ${answer} for ${requestId} (${clip(request.toolName, 80)})`);
    try {
      await this.backend.sendEvents(this.sessionId, [permissionResponseEvent(request, answer)]);
    } catch (err) {
      if (err instanceof SessionsError && err.kind === 'conflict') {
        // The session took another answer first (the browser, another window) or has ended.
        this.#reduce({ type: 'permissionAnswered', requestId, at: this.#now() });
        const message = 'This permission request was already answered elsewhere (or the session ended); your answer was not sent.';
        log.warn(`[${this.key}] permission ${answer} for ${requestId}: 409, ${message}`);
        notifier.say('info', message);
        return { sent: false, message };
      }
      // Not delivered: the request stays open and may be answered again.
      this.#permissionGate.release(binding);
      const message = `Sending your answer failed: ${this.#voice.read(err).message ?? errorText(err)}`;
      log.error(`[${this.key}] ${message}`);
      notifier.say('error', message, {
        label: 'Ask Again',
        run: () => {
          if (this.isPermissionOpen(requestId)) this.#ask(request);
        },
      });
      return { sent: false, message };
    }
    this.#reduce({ type: 'permissionAnswered', requestId, at: this.#now() });
    return { sent: true };
  }

  // -------------------------------------------------------------------------------------------
  // Projections

  #extrasFor(toolUseId: string): RevisionNotes {
    let e = this.#extras.get(toolUseId);
    if (!e) {
      e = { comments: [] };
      this.#extras.set(toolUseId, e);
    }
    return e;
  }

  #revisions(): PlanRevision[] {
    return projectRevisions(this.state, this.#extras, this.#restoredRevisions, this.#hashes);
  }

  /** The review panel's projection of the state, built once per change. */
  panelState(): PanelState {
    this.#panelState ??= projectPanelState(this.state, this.#revisions(), {
      sessionKey: this.key,
      sessionId: this.sessionId,
      title: this.title,
      backendLabel: this.backend.label,
      agentLabel: this.agentLabel,
      agentMode: this.modeText,
      demo: this.demo,
      sessionLink: this.sessionLink,
      canDecide: this.canDecide,
      inFlight: this.#inFlight,
      editing: this.#editing,
      notice: this.#notice ?? (this.readOnly !== undefined ? { level: 'info', text: this.readOnly } : undefined),
      outcome: this.#outcome,
      drafts: this.#drafts,
    });
    return this.#panelState;
  }

  /** The persistence projection: what survives a reload. */
  toPersisted(): PersistedSession {
    const state = this.state;
    const p: PersistedSession = {
      key: this.key,
      backendKind: this.backend.kind,
      backendLabel: this.backend.label,
      sessionId: this.sessionId,
      title: this.title,
      createdAt: this.createdAt,
      phaseChangedAt: state.phaseChangedAt,
      cursor: state.cursor,
      phase: state.phase,
      revisions: this.#revisions(),
      drafts: [...this.#drafts.values()],
      usedBindings: this.#gate.used(),
      finished: this.finished,
    };
    if (this.serverUrl !== undefined) p.serverUrl = this.serverUrl;
    if (state.question !== undefined) p.question = state.question;
    if (this.#outcome !== undefined) p.outcome = this.#outcome;
    if (this.demo) p.demo = true;
    if (this.agentLabel !== undefined) p.agentLabel = this.agentLabel;
    if (this.readOnly !== undefined) p.readOnly = this.readOnly;
    if (this.#savedPlans.length > 0) p.savedPlans = [...this.#savedPlans];
    if (state.agentMode !== undefined) p.agentMode = { ...state.agentMode };
    if (this.#notified.length > 0) p.notified = [...this.#notified];
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

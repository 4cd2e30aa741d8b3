// One followed session: the follow loop that runs the poller and feeds the session model (one
// reduce per poll), and the backend's I/O for what the person does (decisions, replies, archive).
// Everything else is the model's (core/sessionModel.ts): each act here is a reducer input, and each
// change reaches the surfaces as one snapshot through `onSnapshot`. It imports no editor API:
// everything it says to the person goes through its SessionNotifier, and what only its backend
// can say (Claude Code on the web's failures) through that backend's voice.
import { UltraplanPollError, errorMessage } from '../../core/errors';
import type { PanelDraft, PanelNotice, ReplyDraft, DecisionBinding } from '../../core/panelMessages';
import { clip } from '../../core/panelMessages';
import type { PersistedSession } from '../../core/persistedSessions';
import type { Phase } from '../../core/phase';
import {
  followNextResult,
  followUntilResult,
  pollForApprovedPlan,
  type FollowResult,
  type PollRead,
  type PollRetry,
} from '../../core/poller';
import { SessionModel, type SessionChange, type SessionInput, type SessionState } from '../../core/sessionModel';
import { restoredModelOptions } from '../../core/sessionRecord';
import type { SessionSnapshot } from '../../core/sessionSnapshot';
import type { SessionIdentity } from '../../core/sessionState';
import type { SessionBackend } from '../../core/sessionBackend';
import { PermissionAnswers, type DecisionOutcome } from './permissionAnswers';
import { planStepsReader } from './planSteps';
import { SessionDecisions } from './sessionDecisions';
import { plainVoice, type BackendVoice, type SessionLog, type SessionNotifier } from './sessionNotifier';

export type { DecisionOutcome } from './permissionAnswers';

/** A session followed for the first time (started here, or attached). */
export interface FreshSession {
  key: string;
  sessionId: string;
  title: string;
  demo: boolean;
  serverUrl?: string;
  agentLabel?: string;
  readOnly?: string;
}

export interface FollowedSessionOptions {
  backend: SessionBackend;
  log: SessionLog;
  notifier: SessionNotifier;
  /** What only the backend can say (its failures, its execution report); plain by default. */
  voice?: BackendVoice;
  pollIntervalMs: number;
  timeoutMs: number;
  /** Hears each change of what a person sees, once, as the model's snapshot of it. */
  onSnapshot: (session: FollowedSession, snapshot: SessionSnapshot) => void;
  /** A session restored after a reload, or one followed for the first time. */
  from: { restored: PersistedSession } | { fresh: FreshSession };
  /** The clock (tests pass their own). */
  now?: () => number;
  /** Whether a session that starts needing the person raises a notification (ultraplan.notifications); yes by default. */
  notifyNeeds?: () => boolean;
}

export class FollowedSession {
  readonly backend: SessionBackend;
  /** Decisions and replies, sent to the backend. */
  readonly decisions: SessionDecisions;
  /** Answers to the agent's tool permission requests. */
  readonly permissions: PermissionAnswers;
  readonly #model: SessionModel;
  readonly #o: FollowedSessionOptions;
  readonly #voice: BackendVoice;
  readonly #now: () => number;
  #abort = new AbortController();
  #loop: Promise<void> | undefined;
  /** Set when this host ended the loop on purpose (teleport, stop), so the abort is not a failure. */
  #endedHere: 'teleport' | 'stop' | undefined;
  #loggedPhase: Phase;

  constructor(options: FollowedSessionOptions) {
    this.#o = options;
    this.#voice = options.voice ?? plainVoice;
    this.#now = options.now ?? Date.now;
    const backend = (this.backend = options.backend);
    const onSnapshot = (snapshot: SessionSnapshot) => options.onSnapshot(this, snapshot);
    if ('restored' in options.from) {
      const r = options.from.restored;
      this.#model = new SessionModel({
        ...restoredModelOptions(r, backend.sessionLink?.(r.sessionId)),
        onSnapshot,
        planSteps: planStepsReader,
      });
    } else {
      const { key, sessionId, title, demo, serverUrl, agentLabel, readOnly } = options.from.fresh;
      const sessionLink = backend.sessionLink?.(sessionId);
      const identity: SessionIdentity = {
        key,
        sessionId,
        title,
        demo,
        createdAt: this.#now(),
        backendKind: backend.kind,
        backendLabel: backend.label,
        ...(serverUrl !== undefined ? { serverUrl } : {}),
        ...(agentLabel !== undefined ? { agentLabel } : {}),
        ...(readOnly !== undefined ? { readOnly } : {}),
        ...(sessionLink !== undefined ? { sessionLink } : {}),
      };
      this.#model = new SessionModel({
        identity,
        initialPhase: 'planning',
        cursor: null,
        at: identity.createdAt,
        onSnapshot,
        planSteps: planStepsReader,
      });
    }
    const ports = {
      model: this.#model,
      reduce: (input: SessionInput) => this.#reduce(input),
      backend,
      log: options.log,
      notifier: options.notifier,
      voice: this.#voice,
      now: this.#now,
    };
    this.permissions = new PermissionAnswers(ports);
    this.decisions = new SessionDecisions(ports);
    this.#loggedPhase = this.state.phase;
  }

  get identity(): SessionIdentity {
    return this.#model.identity;
  }
  get key(): string {
    return this.identity.key;
  }
  get sessionId(): string {
    return this.identity.sessionId;
  }
  get title(): string {
    return this.identity.title;
  }
  /** Why decisions cannot be taken here (attached read-only); undefined: they go out. */
  get readOnly(): string | undefined {
    return this.identity.readOnly;
  }
  /** The snapshot every surface reads (the latest change's). */
  get snapshot(): SessionSnapshot {
    return this.#model.snapshot;
  }
  get state(): SessionState {
    return this.#model.state;
  }
  get phase(): Phase {
    return this.state.phase;
  }
  get finished(): boolean {
    return this.state.ended !== undefined;
  }
  get canDecide(): boolean {
    return this.state.canDecide;
  }
  /** The plan awaiting a decision, with its text, if any. */
  get pendingPlan(): { toolUseId: string; plan: string; requestId?: string } | undefined {
    const p = this.state.pendingPlan;
    return p && p.plan !== null
      ? { toolUseId: p.toolUseId, plan: p.plan, ...(p.requestId !== undefined ? { requestId: p.requestId } : {}) }
      : undefined;
  }

  /** Starts (or, after a reload, resumes) following the session. */
  start(): void {
    if (this.finished || this.#loop) return;
    this.#reduce({ type: 'restarted', at: this.#now() });
    this.#loop = this.#follow().finally(() => {
      this.#loop = undefined;
    });
  }

  /** How many turns of the session ended in what this window read: a message sent now starts the next (followContinued). */
  get resultsRead(): number {
    return this.#model.scanner.resultCount;
  }

  /**
   * A message went to the session after its execution ended (Continue, Fix): follows the turn it
   * started from the cursor read last to that turn's result, as the execution was followed (the
   * end starts the verification again). `resultsBefore`: resultsRead before the message went out.
   * False when this window has not read the execution (restored finished, read-only, teleported).
   */
  followContinued(resultsBefore: number): boolean {
    if (!this.finished || this.#loop || this.readOnly !== undefined || this.#model.scanner.decided?.kind !== 'approved') return false;
    this.#abort = new AbortController();
    this.#endedHere = undefined;
    this.#reduce({ type: 'continued', resultsBefore, at: this.#now() });
    this.#loop = this.#follow(resultsBefore).finally(() => {
      this.#loop = undefined;
    });
    return true;
  }

  /** The plan-steps reader arrived (planSteps.ts): an approved plan's checklist can be shown now. */
  planStepsLoaded(): void {
    this.#reduce({ type: 'planStepsLoaded', at: this.#now() });
  }

  /** Feeds the model one input and acts on what the change asks for (prompts, the one announcement). */
  #reduce(input: SessionInput): SessionChange {
    const change = this.#model.reduce(input);
    const log = this.#o.log;
    for (const { request, reason } of change.closed) {
      log.info(`[${this.key}] permission request ${request.requestId} (${clip(request.toolName, 80)}) closed: ${reason.replace('_', ' ')}`);
    }
    for (const request of change.opened) {
      log.info(
        `[${this.key}] permission request ${request.requestId}: ${clip(request.toolName, 80)} ${clip(request.summary, 200)} (tool_use ${request.toolUseId})`,
      );
      this.permissions.ask(request);
    }
    if (change.announce) this.#announce(change.announce, change.snapshot);
    if (change.state.phase !== this.#loggedPhase) {
      const plan = change.state.phase === 'plan_ready' && change.state.pendingPlan ? ` (plan ${change.state.pendingPlan.toolUseId})` : '';
      log.info(`[${this.key}] ${this.#loggedPhase} -> ${change.state.phase}${plan}`);
      this.#loggedPhase = change.state.phase;
    }
    return change;
  }

  /** A need the model has not announced before; the review on screen is the news itself. */
  #announce(need: NonNullable<SessionChange['announce']>, snapshot: SessionSnapshot): void {
    const notifier = this.#o.notifier;
    if (notifier.isReviewShowing(this.key) || this.#o.notifyNeeds?.() === false) return;
    const review = { label: 'Review', run: () => notifier.showReview(this.key) };
    if (need === 'plan_ready') {
      const n = snapshot.revisions.length;
      // On a server the plan has a review page: its link can go to a phone or a colleague.
      const copy =
        notifier.copyReviewLink && this.backend.kind === 'server'
          ? [{ label: 'Copy Review Link', run: () => notifier.copyReviewLink?.(this.key) }]
          : [];
      notifier.say('info', `plan ${n > 1 ? `revision ${n} ` : ''}ready for "${this.title}".`, review, ...copy);
    } else if (need === 'agent_stopped') {
      const next = snapshot.state.pendingPlan
        ? 'its plan can still be approved or rejected; either starts a new agent turn.'
        : 'Continue starts a new agent turn with the conversation so far.';
      notifier.say('warning', `the agent of "${this.title}" stopped: ${next}`, review);
    } else {
      notifier.say('info', `the agent asks a question in "${this.title}".`, review);
    }
  }

  /** Follows the session to its plan's decision and the execution's end; `continuedAfter`: a continued turn's (followContinued). */
  async #follow(continuedAfter?: number): Promise<void> {
    const o = this.#o;
    const log = o.log;
    const scanner = this.#model.scanner;
    const follow = {
      sessionId: this.sessionId,
      transport: this.backend.transport,
      pollIntervalMs: o.pollIntervalMs,
      signal: this.#abort.signal,
      scanner,
      onPoll: (poll: PollRead) => {
        if (poll.batch.size > 0) log.trace(`[${this.key}] ${poll.batch.size} event(s), cursor ${poll.cursor ?? '-'}`);
        this.#reduce({ type: 'poll', poll, at: this.#now() });
      },
      onRetry: (retry: PollRetry) => {
        log.warn(`[${this.key}] reading the session failed (${retry.failures} of ${retry.maxFailures}): ${retry.message}; trying again`);
        this.#reduce({ type: 'connectionLost', retry, at: this.#now() });
      },
    };
    log.info(
      `[${this.key}] following session ${this.sessionId} on ${this.backend.label}${continuedAfter === undefined ? '' : ' (continued)'}`,
    );
    try {
      let result: FollowResult;
      if (continuedAfter === undefined) {
        const approved = await pollForApprovedPlan({ ...follow, timeoutMs: o.timeoutMs });
        if (approved.executionTarget === 'local') {
          if (this.#endedHere === 'teleport') return;
          // Teleported from another review (e.g. the browser): say so, let the person take it here.
          const outcome = { text: 'The plan was teleported from another review of this session.' };
          this.#reduce({ type: 'ended', by: 'teleported_elsewhere', outcome, at: this.#now() });
          o.notifier.say('info', `"${this.title}" was teleported from another review.`, this.#showReviewAction());
          return;
        }
        // Approved (here or elsewhere): the remote executes it, asking before each edit or command
        // (afterApproval "default"). Keep following until its result.
        result = await followUntilResult({ ...follow, initialCursor: approved.cursor });
      } else {
        result = await followNextResult({ ...follow, resultsBefore: continuedAfter, initialCursor: this.state.cursor });
      }
      // A person's message after that result (a Continue before a reload, or from another window) started another turn.
      while (scanner.turnOpen)
        result = await followNextResult({ ...follow, resultsBefore: scanner.resultCount, initialCursor: result.cursor });
      await this.#executionEnded(result);
    } catch (err) {
      await this.#followFailed(err);
    }
  }

  async #executionEnded(result: FollowResult): Promise<void> {
    const o = this.#o;
    const lastWords = this.#model.scanner.lastAssistantText;
    const link = this.identity.sessionLink;
    // The result's own text when it has one, else the agent's last message (its summary).
    const summary = result.result?.trim() || lastWords?.trim();
    const ended = summary || (result.isError ? `The execution ended with ${result.subtype}.` : 'The approved plan was executed.');
    // The pull request / branch, only as the session reports them.
    const report = await this.#voice.executionReport(this.backend, this.sessionId, [result.result, lastWords]);
    const text = report ? `${ended}\n\n${report.text}` : ended;
    const outcome = link ? { text, link } : { text };
    this.#reduce({ type: 'ended', by: result.isError ? 'execution_failed' : 'completed', outcome, at: this.#now() });
    o.log.info(`[${this.key}] execution ended: ${result.subtype}`);
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
  }

  async #followFailed(err: unknown): Promise<void> {
    const log = this.#o.log;
    if (err instanceof UltraplanPollError && err.reason === 'stopped' && this.#endedHere !== undefined) return;
    if (this.#endedHere === undefined && this.#abort.signal.aborted) return; // disposed (window closing)
    if (this.readOnly !== undefined) {
      // Followed read-only (archived, say): the end is the session's own, not ours to archive or alarm about.
      log.info(`[${this.key}] read-only follow ended: ${errorMessage(err)}`);
      this.#reduce({ type: 'ended', by: 'stop', outcome: { text: errorMessage(err) }, at: this.#now() });
      return;
    }
    // The backend's own words when it has them (cause, fix). When it is our login that failed,
    // the remote session is fine: it is not archived, and Retry follows it again.
    const reading = this.#voice.read(err);
    const message = reading.message ?? errorMessage(err);
    log.error(`[${this.key}] ${err instanceof UltraplanPollError ? err.reason : 'error'}: ${message}`);
    this.#reduce({ type: 'ended', by: 'failed', notice: { level: 'error', text: message }, at: this.#now() });
    if (this.backend.lifecycle?.archiveOnFailure && !reading.ownLogin) await this.#archive('the session failed');
    if (this.#voice.show(err, { prefix: `"${this.title}":`, ...(reading.ownLogin ? { retry: () => this.resume() } : {}) })) return;
    this.#o.notifier.say('error', `"${this.title}": ${message}`, { label: 'Show Log', run: () => log.show() });
  }

  #showReviewAction() {
    return { label: 'Show Plan Review', run: () => this.#o.notifier.showReview(this.key) };
  }

  // -------------------------------------------------------------------------------------------
  // What the person does in the review (decisions and replies go through `decisions`)

  /** Sends the teleport deny. The caller saves and opens the plan; this ends the following. */
  async teleport(binding: DecisionBinding): Promise<DecisionOutcome & { plan?: string }> {
    const plan = this.pendingPlan?.plan;
    const outcome = await this.decisions.decide(binding, { kind: 'teleport' });
    if (!outcome.sent || plan === undefined) return outcome;
    this.#endedHere = 'teleport';
    this.#abort.abort();
    this.#reduce({ type: 'ended', by: 'teleport', at: this.#now() });
    return { sent: true, plan };
  }

  /** While a plan is open for editing the panel shows the edit in progress (for that plan only). */
  setEditing(toolUseId: string | undefined): void {
    this.#reduce({ type: 'editing', toolUseId, at: this.#now() });
  }

  saveDraft(draft: PanelDraft): void {
    this.#reduce({ type: 'draftSaved', draft, at: this.#now() });
  }

  saveReplyDraft(draft: ReplyDraft): void {
    this.#reduce({ type: 'replyDraftSaved', draft, at: this.#now() });
  }

  /** Records a plan file saved from this session (a teleport), so it is listed under it. */
  addSavedPlan(path: string): void {
    this.#reduce({ type: 'planSaved', path, at: this.#now() });
  }

  /** Records where the teleported plan went, or what went wrong (shown in the panel). */
  setOutcome(text: string, level?: PanelNotice['level']): void {
    this.#reduce({ type: 'outcome', outcome: { text }, ...(level ? { level } : {}), at: this.#now() });
  }

  // -------------------------------------------------------------------------------------------
  // The session's life

  /** Archives the remote session; a failure is shown in the panel, never thrown. */
  async #archive(why: string): Promise<boolean> {
    // A session attached read-only is someone else's to end.
    if (this.readOnly !== undefined) return false;
    this.#o.log.info(`[${this.key}] archiving session ${this.sessionId} (${why})`);
    try {
      await this.backend.archive(this.sessionId);
      return true;
    } catch (err) {
      this.#o.log.warn(`[${this.key}] archive failed: ${errorMessage(err)}`);
      this.#reduce({
        type: 'notice',
        notice: { level: 'warning', text: `Archiving the session failed: ${errorMessage(err)}` },
        at: this.#now(),
      });
      return false;
    }
  }

  /** After a teleport: archives the remote when the setting and the backend say so. */
  async archiveAfterTeleport(settingSaysArchive: boolean): Promise<boolean> {
    if (!settingSaysArchive || !(this.backend.lifecycle?.archiveOnTeleport ?? true)) return false;
    return this.#archive('teleported');
  }

  /**
   * Follows a session again after our own login failed (the person ran `claude` and chose Retry):
   * the log is replayed from its start, as after a reload.
   */
  resume(): void {
    if (!this.finished || this.#endedHere !== undefined || this.phase !== 'failed') return;
    this.#o.log.info(`[${this.key}] following session ${this.sessionId} again`);
    this.#abort = new AbortController();
    // Not finished any more: the replay from the start decides what the session is now.
    this.#reduce({ type: 'restarted', at: this.#now() });
    this.start();
  }

  /** Stops following and archives the session (ends its agent). */
  async stop(): Promise<void> {
    this.#endedHere = 'stop';
    this.#abort.abort();
    this.#o.log.info(`[${this.key}] stopping`);
    if (this.backend.lifecycle?.archiveOnStop ?? true) await this.#archive('stopped');
    this.#reduce({ type: 'ended', by: 'stop', at: this.#now() });
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

// The session model: one reducer from what happened (a poll's parsed batch, or something this host
// did) to the followed session's state: the scanner's reading, the pending plan and its revisions,
// the agent's question, open permission requests, the phase, how following ended, and this host's
// own acts (hostActs.ts). Pure: no I/O, no timers (the caller passes the time), so a recorded
// session replays in a unit test. Each change makes one frozen SessionSnapshot (sessionSnapshot.ts)
// and hands it to the one listener; every surface (status bar, inbox, panel, persistence) reads it.
import { ApprovalTally } from './approvalTally';
import { DecisionGate, planHash } from './decision';
import type { ReportedMode } from './eventBatch';
import { ExecutionProgress, type PlanStepsReader, type SessionExecution } from './executionProgress';
import { NO_ACTS, reduceHostActs, type HostAct, type HostActs, type SessionOutcome } from './hostActs';
import { needNotificationKey, rememberNotified } from './inbox';
import type { DecisionKind, PanelNotice, PlanRevision, DecisionBinding } from './panelMessages';
import { attentionPhase, derivePhase, type EndedBy, type Phase } from './phase';
import { ToolPermissionTracker, type PermissionClosure, type ToolPermissionRequest } from './permissionRequests';
import { pollPhaseOf, type PollPhase, type PollRead, type PollRetry } from './poller';
import { ExitPlanModeScanner, type ScannedRevision } from './scanner';
import { SnapshotMemo, sessionSnapshot, type SessionSnapshot } from './sessionSnapshot';
import type { SessionIdentity, SessionState } from './sessionState';
import type { ApprovalState } from './planApprovals';

export type { LocalDecision } from './hostActs';
export type { SessionIdentity, SessionState } from './sessionState';

export type SessionInput =
  /** One poll: its batch (parsed once at the transport), the status, the cursor. */
  (
    | { type: 'poll'; poll: PollRead }
    /**
     * This host starts sending a decision on the plan `binding` names (claimed at the gate in the
     * same step, so a second click is refused), or a reply (no binding).
     */
    | { type: 'decisionStarted'; kind: DecisionKind; binding?: DecisionBinding }
    /**
     * The server counted this host's approval toward a quorum (HTTP 202): nothing went to the
     * agent, the plan stays pending (a reject is still possible), and `binding` is released.
     */
    | { type: 'approvalCounted'; approval: ApprovalState; binding: DecisionBinding }
    /** It did not go out; `release` lets the same plan be decided again (not delivered at all). */
    | { type: 'decisionFailed'; notice: PanelNotice; release?: DecisionBinding }
    | Exclude<HostAct, { type: 'decisionStarted' | 'decisionFailed' }>
    /** This host answered a permission request (our answers never come back through the log). */
    | { type: 'permissionAnswered'; requestId: string }
    /** Following ended: teleported, stopped, failed, the execution's result arrived. */
    | { type: 'ended'; by: EndedBy; outcome?: SessionOutcome; notice?: PanelNotice }
    /** Follow again from the start of the log (a re-attach, or Retry after our login failed). */
    | { type: 'restarted' }
    /**
     * A message went to the session after its execution ended (Continue, Fix): it executes again
     * until more than `resultsBefore` results (the scanner's count when it went out) are read.
     */
    | { type: 'continued'; resultsBefore: number }
    /** The plan-steps reader has loaded: the checklist can be shown. */
    | { type: 'planStepsLoaded' }
    /** A read of the session failed and will be tried again; the next poll says contact is back. */
    | { type: 'connectionLost'; retry: PollRetry }
  ) & { at: number };

export interface SessionChange {
  readonly state: SessionState;
  /** The snapshot of this change; the previous one when nothing a surface shows differs. */
  readonly snapshot: SessionSnapshot;
  /** Whether anything a surface shows differs from the state before. */
  readonly changed: boolean;
  /** A need (a plan, a question, an agent that stopped) the person has not been told about: announce it now, once. */
  readonly announce: 'plan_ready' | 'needs_input' | 'agent_stopped' | undefined;
  readonly opened: readonly ToolPermissionRequest[];
  readonly closed: ReadonlyArray<{ request: ToolPermissionRequest; reason: PermissionClosure }>;
  /** Why a decisionStarted was refused (nothing was claimed); undefined when it was not refused. */
  readonly refused: string | undefined;
}

/** What a restored session brings back besides its phase (core/sessionRecord.ts maps it). */
export interface RestoredFacts {
  revisions?: readonly PlanRevision[];
  acts?: HostActs;
  usedBindings?: ReadonlyArray<{ sessionId: string; toolUseId: string }>;
  announced?: readonly string[];
  question?: string;
  agentMode?: ReportedMode;
  /** A restored session that had already ended. */
  ended?: EndedBy;
  /** Its checklist as last shown (its log is not read again). */
  execution?: SessionExecution;
}

export interface SessionModelOptions {
  identity: SessionIdentity;
  /** Before the first poll: 'planning' for a new session, the persisted phase for a restored one. */
  initialPhase: Phase;
  cursor: string | null;
  restored?: RestoredFacts;
  at: number;
  /** Hears each change's snapshot, once; the only place a change is announced from. */
  onSnapshot?: (snapshot: SessionSnapshot) => void;
  /** Reads an approved plan into steps for the execution's checklist; none: no checklist (yet). */
  planSteps?: () => PlanStepsReader | undefined;
}

export class SessionModel {
  readonly identity: SessionIdentity;
  #scanner = new ExitPlanModeScanner();
  #permissions = new ToolPermissionTracker();
  #progress: ExecutionProgress;
  #approvals = new ApprovalTally();
  readonly #planSteps: () => PlanStepsReader | undefined;
  readonly #gate: DecisionGate;
  #used: SessionState['usedBindings'];
  #poll: PollPhase | undefined;
  #replied = false;
  #question: string | undefined;
  #ended: EndedBy | undefined;
  /** A continued turn's start (see the `continued` input), until following ends. */
  #continuedAfter: number | undefined;
  #cursor: string | null;
  /** A restored finished session's stored checklist, shown until its log is read again. */
  readonly #storedExecution: SessionExecution | undefined;
  /**
   * A restored session's persisted cursor, until its first poll: a first read that ends exactly
   * there has replayed what was seen before the reload, which says nothing of the agent now.
   */
  #replayThrough: string | null;
  /** While reads of the session fail (and are tried again): what the panel says instead of its notice. */
  #outOfReach: PanelNotice | undefined;
  #agentMode: ReportedMode | undefined;
  /** The host's words on why the agent stopped, while the log says no agent runs. */
  #agentStopped: string | undefined;
  #acts: HostActs;
  #announced: readonly string[];
  /** The scanner's revisions as last shown: kept (same array) while nothing in them differs. */
  #scanRevisions: readonly ScannedRevision[] = [];
  readonly #initialPhase: Phase;
  readonly #restoredRevisions: readonly PlanRevision[];
  readonly #onSnapshot: ((snapshot: SessionSnapshot) => void) | undefined;
  readonly #memo = new SnapshotMemo();
  #state: SessionState;
  #snapshot: SessionSnapshot;

  constructor(options: SessionModelOptions) {
    const r = options.restored;
    this.identity = options.identity;
    this.#planSteps = options.planSteps ?? (() => undefined);
    this.#progress = this.#newProgress();
    this.#initialPhase = options.initialPhase;
    this.#cursor = options.cursor;
    this.#replayThrough = options.cursor;
    this.#question = r?.question;
    this.#ended = r?.ended;
    this.#storedExecution = r?.execution;
    this.#agentMode = r?.agentMode;
    this.#acts = r?.acts ?? NO_ACTS;
    this.#announced = r?.announced ?? [];
    this.#gate = new DecisionGate(r?.usedBindings ?? []);
    this.#used = this.#gate.used();
    this.#restoredRevisions = r?.revisions ?? [];
    this.#onSnapshot = options.onSnapshot;
    this.#state = this.#derive(undefined, options.at);
    this.#snapshot = sessionSnapshot(this.identity, this.#state, this.#restoredRevisions, undefined, this.#memo);
  }

  get state(): SessionState {
    return this.#state;
  }

  /** The snapshot every surface reads (the latest change's). */
  get snapshot(): SessionSnapshot {
    return this.#snapshot;
  }

  /** How many times the revisions were derived: at most once per change (tests of the fan-out). */
  get revisionsDerived(): number {
    return this.#memo.revisionsDerived;
  }

  /** The scanner that has read this session so far (the poller continues with it). */
  get scanner(): ExitPlanModeScanner {
    return this.#scanner;
  }

  /**
   * Why a decision on `binding` (a reply without one) cannot be sent now; undefined: it can. Claims
   * nothing: Edit checks before it opens the editor, decisionStarted checks and claims in one step.
   */
  refusal(binding?: DecisionBinding): string | undefined {
    const { readOnly, sessionId } = this.identity;
    const { inFlight, pendingPlan: p } = this.#state;
    if (readOnly !== undefined) return readOnly;
    if (binding === undefined) {
      if (this.#ended !== undefined) return 'This session is no longer followed.';
      return inFlight !== undefined ? 'A message is being sent already.' : undefined;
    }
    if (this.#ended !== undefined) return 'This session is no longer followed; the decision was not sent.';
    if (inFlight !== undefined) return `A decision (${inFlight}) is being sent already; this one was not sent.`;
    if (p && p.toolUseId === binding.toolUseId && p.plan !== null && p.requestId === undefined) {
      return 'The agent has not asked for a decision on this plan yet; nothing was sent.';
    }
    const pending = p && p.plan !== null ? { sessionId, toolUseId: p.toolUseId, plan: p.plan } : undefined;
    const checked = this.#gate.check(binding, pending, sessionId);
    if (!checked.ok) return checked.message;
    return p?.requestId === undefined ? 'The session is not waiting for a decision.' : undefined;
  }

  /** The reducer: one input, one new state, and what changed for the surfaces. */
  reduce(input: SessionInput): SessionChange {
    const before = this.#state;
    let opened: ToolPermissionRequest[] = [];
    let closed: Array<{ request: ToolPermissionRequest; reason: PermissionClosure }> = [];
    let refused: string | undefined;
    switch (input.type) {
      case 'poll': {
        const { batch, status, cursor } = input.poll;
        this.#cursor = cursor;
        this.#outOfReach = undefined;
        const replayedOnly = this.#replayThrough !== null && cursor === this.#replayThrough;
        this.#replayThrough = null;
        if (batch.agentMode) this.#agentMode = batch.agentMode;
        if (batch.agentLife) this.#agentStopped = batch.agentLife.stopped ? batch.agentLife.message : undefined;
        // The poller has fed the scanner this batch already (it decides when following ends); the
        // permission tracker reads the same parsed events here.
        const changes = this.#permissions.ingestParsed(batch);
        this.#progress.ingest(batch, this.#scanner.revisions, input.at);
        for (const approval of batch.approvals ?? []) this.#approvals.note(approval);
        opened = changes.opened;
        closed = changes.closed;
        // A stopped agent asks nothing any more: its open requests went with its process.
        if (batch.agentLife?.stopped) closed = [...closed, ...this.#permissions.closeAll('agent_stopped')];
        // Replayed events were read before the reload: until a poll reads past them, the phase
        // persisted with that cursor (and its question) stands, unless the replay holds a plan or
        // says the agent stopped.
        if (replayedOnly && this.#scanner.pendingPlan === null && this.#agentStopped === undefined) break;
        if (batch.size > 0) this.#replied = false;
        this.#poll = pollPhaseOf(this.#scanner.pendingPlan !== null, status, batch.size);
        // A stopped agent's last words are what it left the person to answer (no plan: it asked, or it was working).
        const waitsOnPerson = this.#poll === 'needs_input' || (this.#agentStopped !== undefined && this.#poll !== 'plan_ready');
        this.#question = waitsOnPerson ? (this.#scanner.lastAssistantText ?? undefined) : undefined;
        break;
      }
      case 'decisionStarted':
        refused = this.refusal(input.binding);
        if (refused !== undefined) {
          // A refused decision is told in the panel; a refused reply only to the one who sent it.
          if (input.binding) this.#acts = reduceHostActs(this.#acts, { type: 'notice', notice: { level: 'warning', text: refused } });
          break;
        }
        if (input.binding) this.#claim(input.binding);
        this.#acts = reduceHostActs(this.#acts, { type: 'decisionStarted', kind: input.kind });
        break;
      case 'approvalCounted':
        this.#approvals.note(input.approval, true);
        this.#release(input.binding);
        this.#acts = reduceHostActs(this.#acts, {
          type: 'decisionFailed',
          notice: { level: 'info', text: 'Your approval was counted. The plan goes to the agent when enough people approved this text.' },
        });
        break;
      case 'decisionFailed':
        if (input.release) this.#release(input.release);
        this.#acts = reduceHostActs(this.#acts, { type: 'decisionFailed', notice: input.notice });
        break;
      case 'replied':
        this.#replied = true;
        this.#question = undefined;
        this.#acts = reduceHostActs(this.#acts, input);
        break;
      case 'permissionAnswered': {
        const request = this.#permissions.get(input.requestId);
        if (request && this.#permissions.markAnswered(input.requestId)) closed = [{ request, reason: 'answered' }];
        break;
      }
      case 'continued':
        this.#ended = undefined;
        this.#continuedAfter = input.resultsBefore;
        this.#outOfReach = undefined;
        // The last turn's outcome is not this one's: the turn's end says it anew.
        this.#acts = { ...this.#acts, outcome: undefined };
        break;
      case 'ended':
        this.#ended = input.by;
        this.#continuedAfter = undefined;
        this.#outOfReach = undefined;
        if (input.outcome) this.#acts = reduceHostActs(this.#acts, { type: 'outcome', outcome: input.outcome });
        if (input.notice) this.#acts = reduceHostActs(this.#acts, { type: 'notice', notice: input.notice });
        break;
      case 'planStepsLoaded':
        // Nothing to change: the state is made again below, now with the checklist.
        break;
      case 'connectionLost':
        this.#outOfReach = { level: 'warning', text: outOfReachText(input.retry) };
        break;
      case 'restarted':
        // The scanner holds no serializable state: a re-attached session replays its log from the
        // start into a fresh scanner (the persisted cursor only said how far we had got).
        this.#scanner = new ExitPlanModeScanner();
        this.#permissions = new ToolPermissionTracker();
        this.#progress = this.#newProgress();
        this.#approvals = new ApprovalTally();
        this.#poll = undefined;
        this.#replied = false;
        this.#ended = undefined;
        this.#continuedAfter = undefined;
        this.#agentStopped = undefined;
        this.#outOfReach = undefined;
        this.#acts = reduceHostActs(this.#acts, { type: 'notice', notice: undefined });
        break;
      default:
        this.#acts = reduceHostActs(this.#acts, input);
    }
    let state = this.#derive(before, input.at, opened.length > 0 || closed.length > 0);
    const planBecameReady =
      state.phase === 'plan_ready' && (before.phase !== 'plan_ready' || before.pendingPlan?.toolUseId !== state.pendingPlan?.toolUseId);
    // A new plan: a notice about the previous one no longer applies.
    if (planBecameReady && state.notice !== undefined) {
      this.#acts = reduceHostActs(this.#acts, { type: 'notice', notice: undefined });
      state = { ...state, notice: undefined };
    }
    const announce = this.#newNeed(state);
    if (announce) state = { ...state, announced: this.#announced };
    const changed = differs(before, state);
    this.#state = state;
    if (changed) {
      this.#snapshot = sessionSnapshot(this.identity, state, this.#restoredRevisions, this.#snapshot, this.#memo);
      this.#onSnapshot?.(this.#snapshot);
    }
    return { state, snapshot: this.#snapshot, changed, announce, opened, closed, refused };
  }

  /** A turn after the execution's result runs: one this host continued, or a person's message the log shows. */
  #turnRuns(): boolean {
    const after = this.#continuedAfter;
    return this.#scanner.turnOpen || (after !== undefined && this.#scanner.resultCount <= after);
  }

  /** Claude Code on the web writes its own events: its progress is read from its tool calls. */
  #newProgress(): ExecutionProgress {
    return new ExecutionProgress({ readsToolUses: this.identity.backendKind === 'claude-web', planSteps: this.#planSteps });
  }

  #claim(binding: DecisionBinding): void {
    const p = this.#state.pendingPlan;
    const pending = p && p.plan !== null ? { sessionId: this.identity.sessionId, toolUseId: p.toolUseId, plan: p.plan } : undefined;
    this.#gate.claim(binding, pending, this.identity.sessionId);
    this.#used = this.#gate.used();
  }

  #release(binding: DecisionBinding): void {
    this.#gate.release(binding);
    this.#used = this.#gate.used();
  }

  /**
   * A need the person is told about once: a plan once per plan, a question once per question,
   * never again after a reload (what was announced is persisted).
   */
  #newNeed(state: SessionState): SessionChange['announce'] {
    const key = needNotificationKey({
      key: this.identity.key,
      attention: state.attention,
      finished: state.ended !== undefined,
      planToolUseId: state.pendingPlan && state.pendingPlan.plan !== null ? state.pendingPlan.toolUseId : undefined,
      questionId: state.question ? planHash(state.question).slice(0, 16) : undefined,
    });
    if (key === undefined || this.#announced.includes(key)) return undefined;
    this.#announced = rememberNotified(this.#announced, key);
    return state.attention === 'plan_ready' || state.attention === 'agent_stopped' ? state.attention : 'needs_input';
  }

  /** The state as every surface reads it, derived afresh from the facts held. */
  #derive(before: SessionState | undefined, at: number, permissionsMoved = false): SessionState {
    const scanner = this.#scanner;
    const acts = this.#acts;
    const pendingPlan = scanner.pendingPlan;
    const permissions = this.#ended !== undefined ? [] : this.#permissions.open;
    const local = pendingPlan ? acts.decided.get(pendingPlan.toolUseId) : undefined;
    const phase = derivePhase({
      ended: this.#ended,
      decided: scanner.decided?.kind ?? null,
      localDecision: local === 'rejected' ? 'rejected' : local === 'approved' || local === 'approved_edited' ? 'approved' : undefined,
      poll: this.#poll,
      replied: this.#replied,
      agentStopped: this.#agentStopped !== undefined,
      openPermissions: permissions.length,
      initial: this.#initialPhase,
    });
    const attention = attentionPhase(phase, permissions.length, this.#ended !== undefined);
    const phaseChangedAt = before && before.phase === phase ? before.phaseChangedAt : at;
    const attentionChangedAt = before && before.attention === attention && !permissionsMoved ? before.attentionChangedAt : at;
    const scanned = scanner.revisions;
    if (!sameScanRevisions(this.#scanRevisions, scanned)) this.#scanRevisions = scanned;
    const canDecide =
      this.#ended === undefined &&
      this.identity.readOnly === undefined &&
      acts.inFlight === undefined &&
      pendingPlan !== null &&
      pendingPlan.plan !== null &&
      pendingPlan.requestId !== undefined &&
      !this.#gate.isUsed(this.identity.sessionId, pendingPlan.toolUseId);
    const asked =
      phase === 'plan_ready' && pendingPlan && pendingPlan.plan !== null
        ? { requestId: pendingPlan.requestId, plan: pendingPlan.plan }
        : undefined;
    return {
      ...acts,
      // Out of reach outranks the panel's notice, unless that is an error (a decision that failed to go out).
      notice: acts.notice?.level === 'error' ? acts.notice : (this.#outOfReach ?? acts.notice),
      phase,
      phaseChangedAt,
      attention,
      attentionChangedAt,
      pendingPlan: before && samePending(before.pendingPlan, pendingPlan) ? before.pendingPlan : pendingPlan,
      revisions: this.#scanRevisions,
      // A question the stopped agent left is still worth answering: the answer starts a fresh turn.
      question: phase === 'needs_input' || phase === 'agent_stopped' ? this.#question : undefined,
      permissions,
      ended: this.#ended,
      cursor: this.#cursor,
      rejectCount: scanner.rejectCount,
      executionResult: scanner.executionResult,
      lastAssistantText: scanner.lastAssistantText,
      agentMode: this.#agentMode,
      agentStopped: this.#agentStopped,
      canDecide,
      usedBindings: this.#used,
      announced: this.#announced,
      execution:
        this.#progress.view(this.#scanRevisions, this.#ended !== undefined || (scanner.executionResult !== null && !this.#turnRuns())) ??
        this.#storedExecution,
      approval: asked?.requestId !== undefined ? this.#approvals.view(asked.requestId, asked.plan) : undefined,
      releasedApprovals: this.#approvals.released,
    };
  }
}

/** The panel's word while the session cannot be read: what failed, and that it is tried again. */
function outOfReachText(retry: PollRetry): string {
  const seconds = Math.max(1, Math.round(retry.retryInMs / 1000));
  return (
    `Reconnecting: the session could not be read (${retry.message}). Trying again in ${seconds} s ` +
    `(${retry.failures} of ${retry.maxFailures} attempts failed); what is shown may be out of date.`
  );
}

function samePending(a: SessionState['pendingPlan'], b: SessionState['pendingPlan']): boolean {
  return a === b || (a !== null && b !== null && a.toolUseId === b.toolUseId && a.plan === b.plan && a.requestId === b.requestId);
}

function sameScanRevisions(a: readonly ScannedRevision[], b: readonly ScannedRevision[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.toolUseId !== y.toolUseId || x.plan !== y.plan || x.requestId !== y.requestId) return false;
    const o = x.outcome;
    const p = y.outcome;
    if (o.kind !== p.kind) return false;
    if (o.kind === 'rejected' && o.feedback !== (p as typeof o).feedback) return false;
    if (o.kind === 'approved' && (o.plan !== (p as typeof o).plan || o.edited !== (p as typeof o).edited)) return false;
    if (o.kind === 'teleport' && o.plan !== (p as typeof o).plan) return false;
  }
  return true;
}

/** Whether two states differ in anything a surface shows (cheap: ids, counts and references, not texts). */
function differs(a: SessionState, b: SessionState): boolean {
  if (a.phase !== b.phase || a.attention !== b.attention || a.question !== b.question || a.ended !== b.ended) return true;
  if (a.agentStopped !== b.agentStopped) return true;
  if (a.cursor !== b.cursor || a.pendingPlan !== b.pendingPlan || a.revisions !== b.revisions || a.canDecide !== b.canDecide) return true;
  if (a.agentMode?.id !== b.agentMode?.id || a.agentMode?.name !== b.agentMode?.name || a.agentMode?.readOnly !== b.agentMode?.readOnly)
    return true;
  if (a.permissions.length !== b.permissions.length || a.permissions.some((p, i) => p.requestId !== b.permissions[i]?.requestId))
    return true;
  // This host's acts: each is replaced, never changed in place, when it changes.
  if (a.inFlight !== b.inFlight || a.editing !== b.editing || a.decided !== b.decided || a.drafts !== b.drafts || a.notes !== b.notes)
    return true;
  if (a.replyDraft !== b.replyDraft) return true;
  if (a.notice !== b.notice || a.outcome !== b.outcome || a.savedPlans !== b.savedPlans || a.announced !== b.announced) return true;
  if (a.approval !== b.approval || a.releasedApprovals !== b.releasedApprovals) return true;
  return a.usedBindings !== b.usedBindings || a.executionResult !== b.executionResult || a.execution !== b.execution;
}

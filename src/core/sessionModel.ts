// The session model: one reducer from what happened (a poll's parsed batch, or something this host
// did) to the followed session's state: the scanner's reading, the pending plan and its revisions,
// the agent's question, open permission requests, the phase, how following ended. Pure: no I/O, no
// timers (the caller passes the time), so a recorded session replays in a unit test. Everything a
// person sees of a session (status bar, panel, persistence) is a projection of SessionState.
import type { ReportedMode } from './eventBatch';
import { attentionPhase, derivePhase, type EndedBy, type Phase } from './phase';
import { ToolPermissionTracker, type PermissionClosure, type ToolPermissionRequest } from './permissionRequests';
import { pollPhaseOf, type PollPhase, type PollRead } from './poller';
import { ExitPlanModeScanner, type PendingPlan, type PlanRevision, type SessionResult } from './scanner';

/** What this host decided on a plan, shown until the session's own events confirm it. */
export type LocalDecision = 'approved' | 'approved_edited' | 'rejected' | 'teleported';

export type SessionInput =
  /** One poll: its batch (parsed once at the transport), the status, the cursor. */
  | { type: 'poll'; poll: PollRead; at: number }
  /** This host sent a decision on the plan `toolUseId`. */
  | { type: 'decided'; toolUseId: string; decision: LocalDecision; at: number }
  /** This host sent a reply to the agent's question. */
  | { type: 'replied'; at: number }
  /** This host answered a permission request (our answers never come back through the log). */
  | { type: 'permissionAnswered'; requestId: string; at: number }
  /** Following ended: teleported, stopped, failed, the execution's result arrived. */
  | { type: 'ended'; by: EndedBy; at: number }
  /** Follow again from the start of the log (a re-attach, or Retry after our login failed). */
  | { type: 'restarted'; at: number };

export interface SessionState {
  readonly phase: Phase;
  readonly phaseChangedAt: number;
  /** The phase where attention is shown (an open permission request outranks the phase). */
  readonly attention: Phase;
  readonly attentionChangedAt: number;
  readonly pendingPlan: PendingPlan | null;
  /** Every ExitPlanMode call seen, oldest first (the scanner's view). */
  readonly revisions: readonly PlanRevision[];
  readonly localDecisions: ReadonlyMap<string, LocalDecision>;
  /** The agent's question while the phase is needs_input. */
  readonly question: string | undefined;
  readonly permissions: readonly ToolPermissionRequest[];
  readonly ended: EndedBy | undefined;
  readonly cursor: string | null;
  readonly rejectCount: number;
  readonly executionResult: SessionResult | null;
  readonly lastAssistantText: string | null;
  /** The agent's mode as its events last reported it (undefined: it has not said). */
  readonly agentMode: ReportedMode | undefined;
  /** The host's words on why the session's agent stopped, while no agent runs (undefined: one runs). */
  readonly agentStopped: string | undefined;
}

export interface SessionChange {
  readonly state: SessionState;
  /** Whether anything a projection shows differs from the state before. */
  readonly changed: boolean;
  /** A plan became pending that was not (announce it once). */
  readonly planBecameReady: boolean;
  readonly opened: readonly ToolPermissionRequest[];
  readonly closed: ReadonlyArray<{ request: ToolPermissionRequest; reason: PermissionClosure }>;
}

export interface SessionModelOptions {
  /** Before the first poll: 'planning' for a new session, the persisted phase for a restored one. */
  initialPhase: Phase;
  initialQuestion?: string;
  cursor: string | null;
  /** A restored session that had already ended. */
  ended?: EndedBy;
  localDecisions?: Iterable<[string, LocalDecision]>;
  /** A restored session: the mode last reported before the reload. */
  agentMode?: ReportedMode;
  at: number;
}

export class SessionModel {
  #scanner = new ExitPlanModeScanner();
  #permissions = new ToolPermissionTracker();
  readonly #local: Map<string, LocalDecision>;
  #poll: PollPhase | undefined;
  #replied = false;
  #question: string | undefined;
  #ended: EndedBy | undefined;
  #cursor: string | null;
  #agentMode: ReportedMode | undefined;
  #agentStopped: string | undefined;
  readonly #initialPhase: Phase;
  #state: SessionState;

  constructor(options: SessionModelOptions) {
    this.#initialPhase = options.initialPhase;
    this.#question = options.initialQuestion;
    this.#cursor = options.cursor;
    this.#ended = options.ended;
    this.#local = new Map(options.localDecisions ?? []);
    this.#agentMode = options.agentMode;
    this.#state = this.#snapshot(undefined, options.at);
  }

  get state(): SessionState {
    return this.#state;
  }

  /** The scanner that has read this session so far (the poller continues with it). */
  get scanner(): ExitPlanModeScanner {
    return this.#scanner;
  }

  /** The reducer: one input, one new state, and what changed for the projections. */
  reduce(input: SessionInput): SessionChange {
    const before = this.#state;
    let opened: ToolPermissionRequest[] = [];
    let closed: Array<{ request: ToolPermissionRequest; reason: PermissionClosure }> = [];
    switch (input.type) {
      case 'poll': {
        const { batch, status, cursor } = input.poll;
        this.#cursor = cursor;
        if (batch.agentLife) this.#agentStopped = batch.agentLife.stopped ? batch.agentLife.message : undefined;
        if (batch.agentMode) this.#agentMode = batch.agentMode;
        // The poller has fed the scanner this batch already (it decides when following ends); the
        // permission tracker reads the same parsed events here.
        const changes = this.#permissions.ingestParsed(batch);
        opened = changes.opened;
        closed = changes.closed;
        // A stopped agent asks nothing any more: its open requests went with its process.
        if (batch.agentLife?.stopped) closed = [...closed, ...this.#permissions.closeAll('agent_stopped')];
        if (batch.size > 0) this.#replied = false;
        this.#poll = pollPhaseOf(this.#scanner.pendingPlan !== null, status, batch.size);
        // A stopped agent's last words are what it left the person to answer (no plan: it asked, or it was working).
        const waitsOnPerson = this.#poll === 'needs_input' || (this.#agentStopped !== undefined && this.#poll !== 'plan_ready');
        this.#question = waitsOnPerson ? (this.#scanner.lastAssistantText ?? undefined) : undefined;
        break;
      }
      case 'decided':
        this.#local.set(input.toolUseId, input.decision);
        break;
      case 'replied':
        this.#replied = true;
        this.#question = undefined;
        break;
      case 'permissionAnswered':
        this.#permissions.markAnswered(input.requestId);
        break;
      case 'ended':
        this.#ended = input.by;
        break;
      case 'restarted':
        // The scanner holds no serializable state: a re-attached session replays its log from the
        // start into a fresh scanner (the persisted cursor only said how far we had got).
        this.#scanner = new ExitPlanModeScanner();
        this.#permissions = new ToolPermissionTracker();
        this.#poll = undefined;
        this.#replied = false;
        this.#ended = undefined;
        this.#agentStopped = undefined;
        break;
    }
    const state = this.#snapshot(before, input.at, opened.length > 0 || closed.length > 0 || input.type === 'permissionAnswered');
    this.#state = state;
    const planBecameReady =
      state.phase === 'plan_ready' && (before.phase !== 'plan_ready' || before.pendingPlan?.toolUseId !== state.pendingPlan?.toolUseId);
    return { state, changed: differs(before, state), planBecameReady, opened, closed };
  }

  /** The state as every projection reads it, derived afresh from the facts held. */
  #snapshot(before: SessionState | undefined, at: number, permissionsMoved = false): SessionState {
    const scanner = this.#scanner;
    const pendingPlan = scanner.pendingPlan;
    const permissions = this.#ended !== undefined ? [] : this.#permissions.open;
    const local = pendingPlan ? this.#local.get(pendingPlan.toolUseId) : undefined;
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
    return {
      phase,
      phaseChangedAt,
      attention,
      attentionChangedAt,
      pendingPlan,
      revisions: scanner.revisions,
      localDecisions: new Map(this.#local),
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
    };
  }
}

/** Whether two states differ in anything a projection shows (cheap: ids and counts, not texts). */
function differs(a: SessionState, b: SessionState): boolean {
  if (a.phase !== b.phase || a.attention !== b.attention || a.question !== b.question || a.ended !== b.ended) return true;
  if (a.agentStopped !== b.agentStopped) return true;
  if (a.cursor !== b.cursor) return true;
  if (a.agentMode?.id !== b.agentMode?.id || a.agentMode?.name !== b.agentMode?.name || a.agentMode?.readOnly !== b.agentMode?.readOnly)
    return true;
  if (
    a.pendingPlan?.toolUseId !== b.pendingPlan?.toolUseId ||
    a.pendingPlan?.plan !== b.pendingPlan?.plan ||
    a.pendingPlan?.requestId !== b.pendingPlan?.requestId
  )
    return true;
  if (a.revisions.length !== b.revisions.length) return true;
  for (let i = 0; i < a.revisions.length; i++) if (a.revisions[i]!.outcome.kind !== b.revisions[i]!.outcome.kind) return true;
  if (a.permissions.length !== b.permissions.length || a.permissions.some((p, i) => p.requestId !== b.permissions[i]?.requestId))
    return true;
  if (a.localDecisions.size !== b.localDecisions.size) return true;
  for (const [k, v] of a.localDecisions) if (b.localDecisions.get(k) !== v) return true;
  return a.executionResult !== b.executionResult;
}

// The shapes of a followed session as the session model holds it: who it is (fixed for its life)
// and its state (what the wire said and what this host did). Types only, so the reducer, its
// snapshot and the projections all read one definition without importing each other.
import type { PlanApprovalView } from './approvalTally';
import type { BackendKind } from './backendKinds';
import type { SessionExecution } from './executionProgress';
import type { ReportedMode } from './eventBatch';
import type { HostActs } from './hostActs';
import type { ToolPermissionRequest } from './permissionRequests';
import type { Phase, EndedBy } from './phase';
import type { PendingPlan, ScannedRevision, SessionResult } from './scanner';

/** What names a followed session; fixed for as long as it is followed. */
export interface SessionIdentity {
  readonly key: string;
  readonly sessionId: string;
  readonly title: string;
  readonly createdAt: number;
  readonly backendKind: BackendKind;
  readonly backendLabel: string;
  /** For server backends: the URL the session lives on. */
  readonly serverUrl?: string;
  readonly demo: boolean;
  /** The agent that plans (embedded: "Claude (ACP)"); unknown for remote backends. */
  readonly agentLabel?: string;
  /** Why decisions cannot be taken here (attached read-only); undefined: they can. */
  readonly readOnly?: string;
  /** The session's page, when its backend has one. */
  readonly sessionLink?: string;
}

export interface SessionState extends HostActs {
  readonly phase: Phase;
  readonly phaseChangedAt: number;
  /** The phase where attention is shown (an open permission request outranks the phase). */
  readonly attention: Phase;
  readonly attentionChangedAt: number;
  readonly pendingPlan: PendingPlan | null;
  /** Every ExitPlanMode call seen, oldest first (the scanner's view). */
  readonly revisions: readonly ScannedRevision[];
  /** The agent's question while the phase is needs_input (its last words when it stopped). */
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
  /** The pending plan can be decided from here right now (not read-only, nothing in flight, not used). */
  readonly canDecide: boolean;
  /** Plans whose decision went out (or is going out): one decision per ExitPlanMode call. */
  readonly usedBindings: ReadonlyArray<{ readonly sessionId: string; readonly toolUseId: string }>;
  /** The needs already announced (inbox.ts needNotificationKey), oldest first. */
  readonly announced: readonly string[];
  /** The approved plan's execution: its checklist from the agent's progress (undefined: no plan approved). */
  readonly execution: SessionExecution | undefined;
  /** The pending plan's approvals while a quorum is not reached (undefined: none counted, or no quorum). */
  readonly approval: PlanApprovalView | undefined;
  /** "Approved by 2 of 2: alice, bob" per plan request a quorum released (absent: none). */
  readonly releasedApprovals?: ReadonlyMap<string, string>;
}

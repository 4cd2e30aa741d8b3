// One frozen snapshot of a followed session per change: who it is, its state, its revisions as the
// panel lists them, the panel's part and the inbox's entry. The session model makes it once per
// change (sessionModel.ts) and every surface reads it: the status bar, the inbox, the review panel
// and persistence derive nothing of their own. Pure. Parts that did not change are carried over
// from the previous snapshot as the same objects, so a surface can tell "unchanged" by identity.
import { agentModeText, type InboxEntry } from './inbox';
import { backendOf } from './backendKinds';
import type { SessionExecution } from './executionProgress';
import type { PanelExecution, PanelState, PlanRevision } from './panelMessages';
import { PlanHashes, projectExecution, projectPanelState, projectRevisions, samePanelState } from './sessionProjection';
import type { SessionIdentity, SessionState } from './sessionState';

export interface SessionSnapshot {
  /** Counts this session's changes (1 for the first snapshot). */
  readonly version: number;
  readonly identity: SessionIdentity;
  readonly state: SessionState;
  /** The revisions the panel lists, oldest first (restored ones until the replay brings them back). */
  readonly revisions: readonly PlanRevision[];
  /** The agent's mode in words ("plan (read-only)"); a finished session that never reported one has none. */
  readonly modeText: string | undefined;
  /** What the review panel shows of this session. */
  readonly panel: PanelState;
  /** What the plan inbox lists of this session. */
  readonly inbox: InboxEntry;
}

/** What a session's snapshots share across changes: plan hashes, and how often revisions were derived. */
export class SnapshotMemo {
  readonly hashes = new PlanHashes();
  /** How many times the revisions were projected (at most once per change, whoever reads them). */
  revisionsDerived = 0;
  /** The execution last projected for the panel, and what it was projected from. */
  #execution: { from: SessionExecution; panel: PanelExecution } | undefined;

  /** The panel's execution part: the same object while the session's execution is the same. */
  panelExecution(execution: SessionExecution | undefined): PanelExecution | undefined {
    if (!execution) return (this.#execution = undefined);
    if (this.#execution?.from !== execution) this.#execution = { from: execution, panel: Object.freeze(projectExecution(execution)) };
    return this.#execution.panel;
  }
}

function revisionsOf(state: SessionState, restored: readonly PlanRevision[], previous: SessionSnapshot | undefined, memo: SnapshotMemo) {
  const p = previous?.state;
  // Everything the projection reads: the scanner's revisions, the pending plan, what was decided here, the notes, the quorums released.
  if (
    previous &&
    p &&
    p.revisions === state.revisions &&
    p.pendingPlan === state.pendingPlan &&
    p.decided === state.decided &&
    p.notes === state.notes &&
    p.releasedApprovals === state.releasedApprovals
  ) {
    return previous.revisions;
  }
  memo.revisionsDerived++;
  return Object.freeze(projectRevisions(state, state.notes, restored, memo.hashes));
}

/** The snapshot of `state`; `previous` lends the parts that did not change. */
export function sessionSnapshot(
  identity: SessionIdentity,
  state: SessionState,
  restored: readonly PlanRevision[],
  previous: SessionSnapshot | undefined,
  memo: SnapshotMemo,
): SessionSnapshot {
  const revisions = revisionsOf(state, restored, previous, memo);
  const finished = state.ended !== undefined;
  const modeText = state.agentMode || !finished ? agentModeText(state.agentMode) : undefined;
  const panelNow = projectPanelState(state, revisions, {
    sessionKey: identity.key,
    sessionId: identity.sessionId,
    title: identity.title,
    backendLabel: identity.backendLabel,
    agentLabel: identity.agentLabel,
    backendLimits: backendOf(identity.backendKind).limits,
    agentMode: modeText,
    demo: identity.demo,
    sessionLink: identity.sessionLink,
    canDecide: state.canDecide,
    inFlight: state.inFlight,
    canContinue: identity.readOnly === undefined && !finished && state.inFlight === undefined,
    editing: state.editing,
    notice: state.notice ?? (identity.readOnly !== undefined ? { level: 'info', text: identity.readOnly } : undefined),
    outcome: state.outcome,
    drafts: state.drafts,
    replyDraft: state.replyDraft,
    execution: memo.panelExecution(state.execution),
  });
  const panel = previous && samePanelState(previous.panel, panelNow) ? previous.panel : Object.freeze(panelNow);
  const inboxNow: InboxEntry = {
    key: identity.key,
    title: identity.title,
    attention: state.attention,
    changedAt: state.attentionChangedAt,
    createdAt: identity.createdAt,
    finished,
    backendLabel: identity.backendLabel,
    agentLabel: identity.agentLabel,
    modeText,
    revisionCount: revisions.length,
    // Always a key, so an entry compared key by key sees the summary come and go.
    progress: state.execution?.summary,
    approval: state.approval?.summary ?? revisions[revisions.length - 1]?.approvedBy,
  };
  const inbox = previous && sameInboxEntry(previous.inbox, inboxNow) ? previous.inbox : Object.freeze(inboxNow);
  return Object.freeze({ version: (previous?.version ?? 0) + 1, identity, state: Object.freeze(state), revisions, modeText, panel, inbox });
}

function sameInboxEntry(a: InboxEntry, b: InboxEntry): boolean {
  return (Object.keys(b) as Array<keyof InboxEntry>).every((k) => a[k] === b[k]);
}

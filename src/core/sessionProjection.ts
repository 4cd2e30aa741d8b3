// The review panel's projection of a followed session: its revisions (what the session's events
// say, with what this host decided until the events confirm it, and the person's notes) and the
// PanelState the webview shows. Pure: the session's snapshot (sessionSnapshot.ts) is made from these.
import { planHash } from './decision';
import type { BackendLimits } from './backendKinds';
import {
  PANEL_LIMITS,
  clip,
  type DecisionKind,
  type PanelDraft,
  type PanelExecution,
  type ReplyDraft,
  type PanelNotice,
  type PanelState,
  type PlanRevision,
  type SaveDraftMessage,
  type SaveReplyDraftMessage,
} from './panelMessages';
import type { SessionExecution } from './executionProgress';
import type { RevisionNotes } from './hostActs';
import type { SessionState } from './sessionState';

export type { RevisionNotes } from './hostActs';

/** Plan hashes by tool_use id: a revision's hash is computed once, not on every projection. */
export class PlanHashes {
  readonly #known = new Map<string, { plan: string; hash: string }>();
  #computed = 0;

  hashOf(toolUseId: string, plan: string): string {
    const known = this.#known.get(toolUseId);
    if (known && known.plan === plan) return known.hash;
    const hash = planHash(plan);
    this.#computed++;
    this.#known.set(toolUseId, { plan, hash });
    return hash;
  }

  /** How many hashes were computed (for tests of the memo). */
  get computed(): number {
    return this.#computed;
  }
}

/** The revisions the panel lists, oldest first; restored ones until the replay brings them back. */
export function projectRevisions(
  state: SessionState,
  notes: ReadonlyMap<string, RevisionNotes>,
  restored: readonly PlanRevision[],
  hashes: PlanHashes,
): PlanRevision[] {
  const seen = state.revisions.filter((r) => r.plan !== null);
  if (seen.length === 0) return [...restored];
  const pendingId = state.pendingPlan?.toolUseId;
  return seen.map((r, i) => {
    const note = notes.get(r.toolUseId);
    // An edited approval shows what was approved: the session's own record of it, else ours.
    const approvedEdit = r.outcome.kind === 'approved' && r.outcome.edited ? r.outcome.plan : null;
    const plan = approvedEdit ?? note?.editedPlan ?? r.plan ?? '';
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
        status = state.decided.get(r.toolUseId) ?? (r.toolUseId === pendingId ? 'pending' : 'superseded');
    }
    const revision: PlanRevision = {
      revision: i + 1,
      toolUseId: r.toolUseId,
      plan,
      planHash: hashes.hashOf(r.toolUseId, plan),
      status,
      comments: note?.comments ?? [],
    };
    const feedback = note?.feedback ?? (r.outcome.kind === 'rejected' ? r.outcome.feedback : undefined);
    if (feedback !== undefined) revision.feedback = clip(feedback, PANEL_LIMITS.feedbackChars);
    if (note?.decidedAt !== undefined) revision.decidedAt = note.decidedAt;
    if (note?.notes !== undefined) revision.notes = clip(note.notes, PANEL_LIMITS.notesChars);
    const approvedBy = r.requestId === undefined ? undefined : state.releasedApprovals?.get(r.requestId);
    if (approvedBy !== undefined && (status === 'approved' || status === 'approved_edited')) {
      revision.approvedBy = clip(approvedBy, PANEL_LIMITS.textChars);
    }
    return revision;
  });
}

/** What the panel shows besides the session model's state. */
export interface PanelFacts {
  sessionKey: string;
  sessionId: string;
  title: string;
  backendLabel: string;
  agentLabel: string | undefined;
  backendLimits?: BackendLimits | undefined;
  /** The agent's mode in words, when known. */
  agentMode: string | undefined;
  demo: boolean;
  sessionLink: string | undefined;
  /** The pending plan can be decided from here right now (the gate has not used it, nothing in flight). */
  canDecide: boolean;
  /** A decision or reply being sent. */
  inFlight: DecisionKind | undefined;
  /** A message could be sent from here (not read-only, not finished, nothing in flight). */
  canContinue: boolean;
  /** The plan open for editing, if any. */
  editing: string | undefined;
  notice: PanelNotice | undefined;
  outcome: { text: string; link?: string } | undefined;
  drafts: ReadonlyMap<string, PanelDraft>;
  /** The reply being written to the question. */
  replyDraft?: ReplyDraft | undefined;
  /** The approved plan's checklist (projectExecution), once a plan is approved. */
  execution?: PanelExecution | undefined;
}

export function projectPanelState(state: SessionState, allRevisions: readonly PlanRevision[], facts: PanelFacts): PanelState {
  const revisions = allRevisions.slice(-PANEL_LIMITS.revisions);
  const current = revisions[revisions.length - 1];
  const canDecide = facts.canDecide && current !== undefined && current.toolUseId === state.pendingPlan?.toolUseId;
  const panel: PanelState = {
    sessionKey: facts.sessionKey,
    sessionId: facts.sessionId,
    title: clip(facts.title, PANEL_LIMITS.labelChars),
    backendLabel: clip(facts.backendLabel, PANEL_LIMITS.labelChars),
    phase: state.phase,
    revisions,
    canDecide,
  };
  if (facts.demo) panel.demo = true;
  if (facts.agentLabel) panel.agentLabel = clip(facts.agentLabel, PANEL_LIMITS.labelChars);
  if (facts.backendLimits) panel.backendLimits = { ...facts.backendLimits };
  if (facts.agentMode) panel.agentMode = clip(facts.agentMode, PANEL_LIMITS.labelChars);
  if (facts.sessionLink) panel.sessionLink = facts.sessionLink;
  if ((state.phase === 'needs_input' || state.phase === 'agent_stopped') && state.question) {
    panel.question = clip(state.question, PANEL_LIMITS.textChars);
    if (facts.replyDraft) panel.replyDraft = facts.replyDraft;
  }
  if (state.phase === 'agent_stopped' && state.agentStopped) {
    panel.agentStopped = { text: clip(state.agentStopped, PANEL_LIMITS.textChars), canContinue: facts.canContinue && !state.pendingPlan };
  }
  const editingCurrent = facts.editing !== undefined && facts.editing === current?.toolUseId && facts.canDecide;
  const pendingDecision = facts.inFlight ?? (editingCurrent ? 'edit' : undefined);
  if (pendingDecision !== undefined) panel.pendingDecision = pendingDecision;
  if (facts.notice) panel.notice = { level: facts.notice.level, text: clip(facts.notice.text, PANEL_LIMITS.textChars) };
  if (facts.outcome) panel.outcome = { ...facts.outcome, text: clip(facts.outcome.text, PANEL_LIMITS.textChars) };
  if (current) {
    const draft = facts.drafts.get(current.toolUseId);
    if (draft) panel.draft = draft;
  }
  if (facts.execution) panel.execution = facts.execution;
  if (state.approval && current !== undefined && current.toolUseId === state.pendingPlan?.toolUseId) {
    panel.approval = { summary: clip(state.approval.summary, PANEL_LIMITS.textChars), mine: state.approval.mine };
  }
  return panel;
}

/** The execution as the panel shows it: the checklist within the panel's bounds. */
export function projectExecution(execution: SessionExecution): PanelExecution {
  const { checklist } = execution;
  const label = (text: string): string => clip(text, PANEL_LIMITS.labelChars);
  const path = (text: string): string => clip(text, PANEL_LIMITS.pathChars);
  return {
    toolUseId: execution.toolUseId,
    summary: label(execution.summary),
    finished: execution.finished,
    steps: checklist.steps.slice(0, PANEL_LIMITS.executionSteps).map((step) => ({
      id: label(step.id),
      title: label(step.title),
      status: step.status,
      startLine: step.startLine,
      endLine: step.endLine,
      todos: step.todos.slice(0, PANEL_LIMITS.executionTodos).map(label),
      files: step.files.slice(0, PANEL_LIMITS.executionFiles).map(path),
      ...(step.namedFiles.length > 0 ? { namedFiles: step.namedFiles.slice(0, PANEL_LIMITS.executionFiles).map(path) } : {}),
    })),
    notInPlan: checklist.notInPlan.slice(0, PANEL_LIMITS.executionTodos).map((t) => ({ content: label(t.content), status: t.status })),
    unattributedFiles: checklist.unattributedFiles.slice(0, PANEL_LIMITS.executionFiles).map(path),
  };
}

/**
 * Whether two panel states show the same: the fields, the revisions (compared by identity, as a
 * snapshot keeps its revisions while nothing in them changes) and the draft. Cheap, so a surface
 * can skip a post that would change nothing on screen.
 */
export function samePanelState(a: PanelState, b: PanelState): boolean {
  if (a === b) return true;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)] as Array<keyof PanelState>);
  for (const key of keys) {
    const x = a[key];
    const y = b[key];
    if (x === y) continue;
    // The execution is projected once per checklist (the snapshot keeps it): a new one is a change.
    if (key === 'execution') return false;
    if (key === 'revisions') {
      const r = x as PanelState['revisions'];
      const s = y as PanelState['revisions'];
      if (r.length !== s.length || r.some((rev, i) => rev !== s[i])) return false;
      continue;
    }
    if (!sameValue(x, y)) return false;
  }
  return true;
}

/** Structural equality of plain data (notices, outcomes, drafts: small, so no shortcut needed). */
function sameValue(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
  if (Array.isArray(x) !== Array.isArray(y)) return false;
  const a = x as Record<string, unknown>;
  const b = y as Record<string, unknown>;
  const keys = Object.keys(a).filter((k) => a[k] !== undefined);
  if (keys.length !== Object.keys(b).filter((k) => b[k] !== undefined).length) return false;
  return keys.every((k) => sameValue(a[k], b[k]));
}

/** The draft a saveDraft message carries, as the session keeps it. */
export function panelDraftOf(message: SaveDraftMessage): PanelDraft {
  const { type: _type, sessionKey: _sessionKey, ...draft } = message;
  return draft;
}

/** The reply draft a saveReplyDraft message carries, as the session keeps it. */
export function replyDraftOf(message: SaveReplyDraftMessage): ReplyDraft {
  const { type: _type, sessionKey: _sessionKey, ...draft } = message;
  return draft;
}

/**
 * What a webview shows once it has sent `message`: `shown`, with its own draft for the current
 * revision. The session's next panel part carries that same draft, so it is not posted back.
 */
export function withWebviewDraft(shown: PanelState, message: SaveDraftMessage | SaveReplyDraftMessage): PanelState {
  if (message.type === 'saveReplyDraft') {
    if (shown.sessionKey !== message.sessionKey || shown.question === undefined) return shown;
    const { replyDraft: _kept, ...rest } = shown;
    return message.text ? { ...rest, replyDraft: replyDraftOf(message) } : rest;
  }
  const current = shown.revisions[shown.revisions.length - 1];
  if (shown.sessionKey !== message.sessionKey || current?.toolUseId !== message.toolUseId) return shown;
  return { ...shown, draft: panelDraftOf(message) };
}

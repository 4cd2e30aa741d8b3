// A followed session's persisted form (persistedSessions.ts), mapped both ways: the snapshot to
// what survives a reload, and a stored entry back to the session model's identity and facts. Pure,
// so the round trip is unit-tested.
import type { HostActs, LocalDecision, RevisionNotes } from './hostActs';
import { NO_ACTS } from './hostActs';
import type { PersistedSession } from './persistedSessions';
import { endedByFromPhase } from './phase';
import type { RestoredFacts, SessionModelOptions } from './sessionModel';
import type { SessionSnapshot } from './sessionSnapshot';
import type { SessionIdentity } from './sessionState';
import type { SessionExecution } from './executionProgress';

/** What survives a reload of the session `snapshot` shows. */
export function toPersisted(snapshot: SessionSnapshot): PersistedSession {
  const { identity: id, state } = snapshot;
  const p: PersistedSession = {
    key: id.key,
    backendKind: id.backendKind,
    backendLabel: id.backendLabel,
    sessionId: id.sessionId,
    title: id.title,
    createdAt: id.createdAt,
    phaseChangedAt: state.phaseChangedAt,
    cursor: state.cursor,
    phase: state.phase,
    revisions: [...snapshot.revisions],
    drafts: [...state.drafts.values()],
    usedBindings: state.usedBindings.map((u) => ({ sessionId: u.sessionId, toolUseId: u.toolUseId })),
    finished: state.ended !== undefined,
  };
  if (id.serverUrl !== undefined) p.serverUrl = id.serverUrl;
  if (state.question !== undefined) p.question = state.question;
  if (state.outcome !== undefined) p.outcome = { ...state.outcome };
  if (id.demo) p.demo = true;
  if (id.agentLabel !== undefined) p.agentLabel = id.agentLabel;
  if (id.readOnly !== undefined) p.readOnly = id.readOnly;
  if (state.savedPlans.length > 0) p.savedPlans = [...state.savedPlans];
  if (state.agentMode !== undefined) p.agentMode = { ...state.agentMode };
  if (state.announced.length > 0) p.notified = [...state.announced];
  if (state.replyDraft !== undefined) p.replyDraft = { ...state.replyDraft };
  const execution = snapshot.panel.execution;
  if (state.ended !== undefined && execution && state.execution) p.execution = { ...execution, planHash: state.execution.planHash };
  return p;
}

const DECIDED_STATUSES: ReadonlySet<string> = new Set<LocalDecision>(['rejected', 'approved', 'approved_edited', 'teleported']);

/** The session model's options for a stored session; `sessionLink` is its backend's to tell. */
export function restoredModelOptions(p: PersistedSession, sessionLink: string | undefined): SessionModelOptions {
  const identity: SessionIdentity = {
    key: p.key,
    sessionId: p.sessionId,
    title: p.title,
    createdAt: p.createdAt,
    backendKind: p.backendKind,
    backendLabel: p.backendLabel,
    demo: p.demo ?? false,
    ...(p.serverUrl !== undefined ? { serverUrl: p.serverUrl } : {}),
    ...(p.agentLabel !== undefined ? { agentLabel: p.agentLabel } : {}),
    ...(p.readOnly !== undefined ? { readOnly: p.readOnly } : {}),
    ...(sessionLink !== undefined ? { sessionLink } : {}),
  };
  const decided = new Map<string, LocalDecision>();
  const notes = new Map<string, RevisionNotes>();
  for (const rev of p.revisions) {
    const note: RevisionNotes = { comments: rev.comments };
    if (rev.feedback !== undefined) note.feedback = rev.feedback;
    if (rev.decidedAt !== undefined) note.decidedAt = rev.decidedAt;
    if (rev.notes !== undefined) note.notes = rev.notes;
    notes.set(rev.toolUseId, note);
    if (DECIDED_STATUSES.has(rev.status)) decided.set(rev.toolUseId, rev.status as LocalDecision);
  }
  const acts: HostActs = {
    ...NO_ACTS,
    decided,
    notes,
    drafts: new Map(p.drafts.map((d) => [d.toolUseId, d])),
    replyDraft: p.replyDraft,
    outcome: p.outcome,
    savedPlans: p.savedPlans ?? [],
  };
  const restored: RestoredFacts = { revisions: p.revisions, acts, usedBindings: p.usedBindings, announced: p.notified ?? [] };
  if (p.question !== undefined) restored.question = p.question;
  if (p.agentMode !== undefined) restored.agentMode = p.agentMode;
  if (p.finished) restored.ended = endedByFromPhase(p.phase);
  if (p.finished && p.execution) restored.execution = storedExecution(p.execution);
  return { identity, initialPhase: p.phase, cursor: p.cursor, restored, at: p.phaseChangedAt };
}

/** A finished session's stored checklist, as the session model holds one (its counts from its steps). */
function storedExecution(e: NonNullable<PersistedSession['execution']>): SessionExecution {
  const counts = { total: e.steps.length, pending: 0, in_progress: 0, done: 0, not_reported: 0 };
  for (const step of e.steps) counts[step.status]++;
  const steps = e.steps.map((step) => ({ ...step, namedFiles: step.namedFiles ?? [] }));
  const checklist = { steps, notInPlan: e.notInPlan, unattributedFiles: e.unattributedFiles, counts };
  return { toolUseId: e.toolUseId, planHash: e.planHash, checklist, finished: true, summary: e.summary };
}

/**
 * Whether the persisted form of `b` can differ from that of `a` (snapshots of one session): every
 * part it is mapped from is compared by identity, as the model replaces a part when it changes.
 * A change of attention, a decision in flight or an edit survives nothing and writes nothing.
 */
export function persistedPartChanged(a: SessionSnapshot, b: SessionSnapshot): boolean {
  if (a === b) return false;
  const x = a.state;
  const y = b.state;
  return (
    a.identity !== b.identity ||
    a.revisions !== b.revisions ||
    x.phase !== y.phase ||
    x.phaseChangedAt !== y.phaseChangedAt ||
    x.cursor !== y.cursor ||
    x.ended !== y.ended ||
    x.question !== y.question ||
    x.drafts !== y.drafts ||
    x.replyDraft !== y.replyDraft ||
    x.usedBindings !== y.usedBindings ||
    x.outcome !== y.outcome ||
    x.savedPlans !== y.savedPlans ||
    x.agentMode !== y.agentMode ||
    x.announced !== y.announced ||
    (y.ended !== undefined && x.execution !== y.execution)
  );
}

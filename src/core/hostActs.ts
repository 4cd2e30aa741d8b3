// What this host did to a followed session, as state: the decision or reply being sent, the plan
// open for editing, the drafts and the notes kept per revision, the notice and outcome shown, the
// plan files saved and the needs already announced. A pure reducer over an immutable record: the
// session model (sessionModel.ts) applies it and publishes the result with what the wire said.
import type { DecisionKind, LineComment, PanelDraft, PanelNotice, ReplyDraft } from './panelMessages';
import { appendLatest } from './inbox';

/** What the person added to a revision: the feedback and comments sent with it, when it was decided. */
export interface RevisionNotes {
  feedback?: string;
  comments: LineComment[];
  decidedAt?: string;
  /** The reviewer's version, approved in place of the agent's: the plan the revision shows. */
  editedPlan?: string;
  /** Notes sent with the approval. */
  notes?: string;
}

/** What a session's review says happened in the end (teleported to a file, executed, failed). */
export interface SessionOutcome {
  text: string;
  link?: string;
}

/** What this host decided on a plan, shown until the session's own events confirm it. */
export type LocalDecision = 'approved' | 'approved_edited' | 'rejected' | 'teleported';

/** Plan files saved from one session that are remembered (the newest). */
export const MAX_SAVED_PLANS = 10;

export interface HostActs {
  /** A decision or reply being sent. */
  readonly inFlight: DecisionKind | undefined;
  /** The plan (tool_use id) open for editing, if any. */
  readonly editing: string | undefined;
  /** What this host decided, by tool_use id. */
  readonly decided: ReadonlyMap<string, LocalDecision>;
  /** Drafts by tool_use id: feedback, comments and notes typed and not sent yet. */
  readonly drafts: ReadonlyMap<string, PanelDraft>;
  /** The reply being typed to the agent's question. */
  readonly replyDraft: ReplyDraft | undefined;
  /** What was sent with each decided revision, by tool_use id. */
  readonly notes: ReadonlyMap<string, RevisionNotes>;
  readonly notice: PanelNotice | undefined;
  readonly outcome: SessionOutcome | undefined;
  /** Plan files saved from this session (absolute paths), oldest first. */
  readonly savedPlans: readonly string[];
}

/** The decision on one plan, with what went with it. */
export interface SentDecision {
  toolUseId: string;
  decision: LocalDecision;
  /** ISO 8601 time of the decision. */
  decidedAt: string;
  feedback?: string;
  comments?: LineComment[];
  notes?: string;
  /** The reviewer's version of the plan (an edited approval). */
  editedPlan?: string;
}

/** The acts of this host, each an input of the session model's reducer. */
export type HostAct =
  | { type: 'decisionStarted'; kind: DecisionKind }
  /** The decision or reply did not go out: the person is told why, and may try again. */
  | { type: 'decisionFailed'; notice: PanelNotice }
  | { type: 'decisionSent'; decision: SentDecision }
  | { type: 'replied' }
  | { type: 'editing'; toolUseId: string | undefined }
  | { type: 'draftSaved'; draft: PanelDraft }
  | { type: 'replyDraftSaved'; draft: ReplyDraft }
  | { type: 'notice'; notice: PanelNotice | undefined }
  /** What happened in the end; a warning or an error is also the notice. */
  | { type: 'outcome'; outcome: SessionOutcome; level?: PanelNotice['level'] }
  | { type: 'planSaved'; path: string };

export const NO_ACTS: HostActs = {
  inFlight: undefined,
  editing: undefined,
  decided: new Map(),
  drafts: new Map(),
  replyDraft: undefined,
  notes: new Map(),
  notice: undefined,
  outcome: undefined,
  savedPlans: [],
};

function withEntry<V>(map: ReadonlyMap<string, V>, key: string, value: V | undefined): ReadonlyMap<string, V> {
  const next = new Map(map);
  if (value === undefined) next.delete(key);
  else next.set(key, value);
  return next;
}

/** One act applied; the same record back when nothing differs. */
export function reduceHostActs(acts: HostActs, act: HostAct): HostActs {
  switch (act.type) {
    case 'decisionStarted':
      return { ...acts, inFlight: act.kind, notice: undefined };
    case 'decisionFailed':
      return { ...acts, inFlight: undefined, editing: acts.inFlight === 'reply' ? acts.editing : undefined, notice: act.notice };
    case 'decisionSent': {
      const d = act.decision;
      const kept = acts.notes.get(d.toolUseId);
      const note: RevisionNotes = { ...kept, comments: d.comments ?? kept?.comments ?? [], decidedAt: d.decidedAt };
      if (d.feedback !== undefined) note.feedback = d.feedback;
      if (d.editedPlan !== undefined) note.editedPlan = d.editedPlan;
      if (d.notes !== undefined) note.notes = d.notes;
      return {
        ...acts,
        inFlight: undefined,
        editing: undefined,
        decided: withEntry(acts.decided, d.toolUseId, d.decision),
        notes: withEntry(acts.notes, d.toolUseId, note),
        drafts: acts.drafts.has(d.toolUseId) ? withEntry(acts.drafts, d.toolUseId, undefined) : acts.drafts,
      };
    }
    case 'replied':
      return { ...acts, inFlight: undefined, notice: undefined, replyDraft: undefined };
    case 'editing':
      return acts.editing === act.toolUseId ? acts : { ...acts, editing: act.toolUseId };
    case 'draftSaved':
      return { ...acts, drafts: withEntry(acts.drafts, act.draft.toolUseId, act.draft) };
    case 'replyDraftSaved':
      return { ...acts, replyDraft: act.draft.text ? act.draft : undefined };
    case 'notice':
      return acts.notice === act.notice ? acts : { ...acts, notice: act.notice };
    case 'outcome':
      return {
        ...acts,
        outcome: act.outcome,
        notice: act.level && act.level !== 'info' ? { level: act.level, text: act.outcome.text } : acts.notice,
      };
    case 'planSaved':
      return { ...acts, savedPlans: appendLatest(acts.savedPlans, act.path, MAX_SAVED_PLANS) };
  }
}

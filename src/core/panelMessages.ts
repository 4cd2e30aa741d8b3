// The review panel's wire format, shared by the extension host (src/extension/review/reviewPanel.ts) and
// the webview (src/webview/). Every message in either direction is parsed with these schemas;
// anything that fails is dropped and reported, never acted upon.
//
// For the extension room (who builds PanelState and handles decisions):
// - Host -> webview: {type:'state', state, plans} (ReviewPanel.update), {type:'answer', requestId,
//   result} (one per request, see below), {type:'verification', …} (core/execution/
//   verificationMessage.ts: kept apart, so the extension's first load does not carry its schema)
//   and {type:'invoke', action} (ReviewPanel.invoke, for the
//   host keybindings: the webview then acts as if the button was clicked, so the decision still
//   carries the binding of the plan shown and, for reject, the feedback and comments typed there).
// - Plan texts go once: a state message carries its revisions without their texts, each naming its
//   text by planHash, plus the texts the webview does not have yet. Both sides keep exactly the
//   texts of the last state posted (splitPlanTexts on the host, joinPlanTexts in the webview), so
//   they agree on what the webview has without asking. A webview that misses a text (a recreated
//   page, a dropped message) posts `ready`, and the host forgets what it sent and sends everything.
// - Webview -> host: ready | approve | reject | edit | teleport | reply | continue | openLink |
//   openFileDiff | verify | continueStep | saveDraft | saveReplyDraft. ReviewPanel handles `ready` (re-sends the state with
//   every text), `openLink` (validated, openExternal) and `openFileDiff` (a touched file) itself; decisions and replies go to its request handler,
//   which answers each one; drafts reach the extension as events.
// - A decision carries a DecisionBinding {sessionId, toolUseId, planHash}: planHash is whatever
//   the host put in the revision (sha256 hex of the plan text); the webview only echoes it.
// - Request and reply: every decision and reply carries a requestId (and the sessionKey it is
//   for) and gets exactly one {type:'answer', requestId} back: `sent`, or `refused` with the
//   reason. The webview locks its buttons from the click until that answer, and never guesses
//   from later states; a state showing another session, or another pending plan or question, also
//   ends the lock (the session moved on). `pendingDecision` in a state says what the host is
//   sending right now (or that the plan is open for editing).
// - Drafts (feedback, line comments, the comment being written, approval notes, the reply) are
//   written from the keystroke that typed them, at most once per DRAFT_WRITE_INTERVAL_MS per draft
//   and always once after the last keystroke: to vscode.setState (drafts only, with the key of the
//   session shown) and to the host as saveDraft / saveReplyDraft, which keeps them with the session
//   across reloads and hands them back in PanelState.draft / replyDraft. Each draft carries the
//   time it was typed (`at`), so the webview keeps whichever copy is newer.
// - Approve may carry `notes` (bounded by PANEL_LIMITS.notesChars, never blank): the host sends them
//   to the agent with the approval, as src/core/approvalNotes.ts says per backend.
// - Reject comments: LineComment {line, endLine?, ...} maps onto src/core/feedback.ts's
//   PlanLineComment as {startLine: line, endLine: endLine ?? line, text}; formatRejectFeedback
//   there quotes the lines from the plan itself.
// - DecisionBindingSchema is defined here, the one copy (decision.ts checks it): the webview parses
//   it without loading the host's gate and its hash.
// This file is pure (no vscode, no DOM) so both bundles and the unit tests import it.
import * as z from 'zod';
import { PhaseSchema } from './phase';

export const PANEL_LIMITS = {
  /** Plan text, in UTF-16 code units (about 2 MB of ASCII). */
  planChars: 2 * 1024 * 1024,
  feedbackChars: 100 * 1024,
  comments: 500,
  commentChars: 10_000,
  quoteChars: 4_000,
  replyChars: 100 * 1024,
  /** Notes sent with an approval: short, for the agent to keep in mind while it executes. */
  notesChars: 2_000,
  revisions: 100,
  idChars: 256,
  labelChars: 500,
  textChars: 100 * 1024,
  urlChars: 2_048,
  pathChars: 1_000,
  /** The execution checklist: steps, todos per step (and not in the plan), files per step. */
  executionSteps: 2_000,
  executionTodos: 200,
  executionFiles: 500,
} as const;

/** Text cut to `max` characters, an ellipsis marking the cut. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** True for an absolute http(s) URL; everything else (command:, javascript:, data:, file:, relative) is refused. */
export function isHttpUrl(href: string): boolean {
  if (href.length > PANEL_LIMITS.urlChars) return false;
  try {
    const url = new URL(href);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

const IdSchema = z.string().min(1).max(PANEL_LIMITS.idChars);
const LabelSchema = z.string().max(PANEL_LIMITS.labelChars);
export const HttpUrlSchema = z.string().max(PANEL_LIMITS.urlChars).refine(isHttpUrl, 'must be an http(s) URL');
export const PlanHashSchema = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters (sha256)');

export const REVISION_STATUSES = ['pending', 'rejected', 'approved', 'approved_edited', 'teleported', 'superseded'] as const;
export const RevisionStatusSchema = z.enum(REVISION_STATUSES);
export type RevisionStatus = z.infer<typeof RevisionStatusSchema>;

export const DECISION_KINDS = ['approve', 'reject', 'edit', 'teleport', 'reply', 'continue'] as const;
export const DecisionKindSchema = z.enum(DECISION_KINDS);
export type DecisionKind = z.infer<typeof DecisionKindSchema>;

/** A comment on plan source lines (1-based, inclusive). `quote` is the commented text as the webview saw it. */
export const LineCommentSchema = z
  .strictObject({
    line: z.number().int().min(1),
    endLine: z.number().int().min(1).optional(),
    quote: z.string().max(PANEL_LIMITS.quoteChars),
    text: z.string().trim().min(1, 'a comment needs text').max(PANEL_LIMITS.commentChars),
  })
  .refine((c) => c.endLine === undefined || c.endLine >= c.line, 'endLine must not be before line');
export type LineComment = z.infer<typeof LineCommentSchema>;

const CommentListSchema = z.array(LineCommentSchema).max(PANEL_LIMITS.comments);
const FeedbackSchema = z.string().max(PANEL_LIMITS.feedbackChars);
/** Notes as typed (a draft may be blank); the bound is the same everywhere. */
const NotesDraftSchema = z.string().max(PANEL_LIMITS.notesChars);
/** Notes sent with an approval: never blank (an approval without notes is a plain approve). */
export const ApprovalNotesSchema = z
  .string()
  .max(PANEL_LIMITS.notesChars, `notes are limited to ${PANEL_LIMITS.notesChars} characters`)
  .refine((text) => text.trim().length > 0, 'notes need text (approve without notes instead)');

export const PlanRevisionSchema = z.strictObject({
  revision: z.number().int().min(1),
  toolUseId: IdSchema,
  plan: z.string().max(PANEL_LIMITS.planChars),
  planHash: PlanHashSchema,
  status: RevisionStatusSchema,
  feedback: FeedbackSchema.optional(),
  comments: CommentListSchema,
  /** Notes the reviewer sent with the approval of this revision. */
  notes: NotesDraftSchema.optional(),
  /** ISO 8601 time of the decision. */
  decidedAt: z.string().max(64).optional(),
  /** Who approved it under a quorum once the quorum released it ("Approved by 2 of 2: alice, bob"). */
  approvedBy: z.string().min(1).max(PANEL_LIMITS.textChars).optional(),
});
export type PlanRevision = z.infer<typeof PlanRevisionSchema>;

export const PanelNoticeSchema = z.strictObject({
  level: z.enum(['info', 'warning', 'error']),
  text: z.string().min(1).max(PANEL_LIMITS.textChars),
});
export type PanelNotice = z.infer<typeof PanelNoticeSchema>;

/** When a draft was last typed (ms since the epoch, the webview's clock): the newer copy wins. */
const DraftTimeSchema = z.number().int().min(0);

/** A line comment still being written (the composer): its lines, its text, which comment it edits. */
export const CommentDraftSchema = z
  .strictObject({
    line: z.number().int().min(1),
    endLine: z.number().int().min(1).optional(),
    text: z.string().max(PANEL_LIMITS.commentChars),
    /** Index of the comment it edits; absent: a new comment. */
    editing: z.number().int().min(0).max(PANEL_LIMITS.comments).optional(),
  })
  .refine((c) => c.endLine === undefined || c.endLine >= c.line, 'endLine must not be before line');
export type CommentDraft = z.infer<typeof CommentDraftSchema>;

export const PanelDraftSchema = z.strictObject({
  toolUseId: IdSchema,
  feedback: FeedbackSchema,
  comments: CommentListSchema,
  /** Approval notes being written (absent: none). */
  notes: NotesDraftSchema.optional(),
  /** The line comment being written, not yet added. */
  comment: CommentDraftSchema.optional(),
  at: DraftTimeSchema.optional(),
});
export type PanelDraft = z.infer<typeof PanelDraftSchema>;

/** A reply to the agent's question being written. */
export const ReplyDraftSchema = z.strictObject({
  text: z.string().max(PANEL_LIMITS.replyChars),
  at: DraftTimeSchema.optional(),
});
export type ReplyDraft = z.infer<typeof ReplyDraftSchema>;

/** At most one draft write per draft in this interval (setState and the host), the last always written. */
export const DRAFT_WRITE_INTERVAL_MS = 200;

/** A file path as an agent reported it (workspace-relative, or absolute outside the workspace). */
export const FilePathSchema = z.string().min(1).max(PANEL_LIMITS.pathChars);

/** One step of the approved plan during execution: what the agent reported of it, and the files it touched. */
export const ExecutionStepSchema = z.strictObject({
  id: z.string().min(1).max(PANEL_LIMITS.labelChars),
  title: LabelSchema,
  status: z.enum(['pending', 'in_progress', 'done', 'not_reported']),
  /** The step's lines in the approved plan (1-based, inclusive). */
  startLine: z.number().int().min(1),
  endLine: z.number().int().min(1),
  /** The agent's todos that reported on it, as written. */
  todos: z.array(LabelSchema).max(PANEL_LIMITS.executionTodos),
  files: z.array(FilePathSchema).max(PANEL_LIMITS.executionFiles),
  /** Files no todo placed, whose path the step names (checklist.ts): a hint, not the agent's report. */
  namedFiles: z.array(FilePathSchema).max(PANEL_LIMITS.executionFiles).optional(),
});
export type ExecutionStep = z.infer<typeof ExecutionStepSchema>;

/** The approved plan as a checklist while (and after) the agent executes it. */
export const PanelExecutionSchema = z.strictObject({
  /** The approved revision's ExitPlanMode call. */
  toolUseId: IdSchema,
  /** "Executing: 3 of 7 steps done". */
  summary: LabelSchema,
  finished: z.boolean(),
  steps: z.array(ExecutionStepSchema).max(PANEL_LIMITS.executionSteps),
  /** Work the agent reported that no step names. */
  notInPlan: z
    .array(z.strictObject({ content: LabelSchema, status: z.enum(['pending', 'in_progress', 'completed']) }))
    .max(PANEL_LIMITS.executionTodos),
  /** Files touched when no single step was in progress. */
  unattributedFiles: z.array(FilePathSchema).max(PANEL_LIMITS.executionFiles),
});
export type PanelExecution = z.infer<typeof PanelExecutionSchema>;

export const PanelStateSchema = z.strictObject({
  /** The extension's own key for the session (stable across reloads). */
  sessionKey: IdSchema,
  /** The backend's session id, echoed in every decision binding. */
  sessionId: IdSchema,
  title: LabelSchema,
  backendLabel: LabelSchema,
  agentLabel: LabelSchema.optional(),
  /** What a decision does on this backend when it is not what it is elsewhere (Jules: no reject). */
  backendLimits: z
    .strictObject({ reject: LabelSchema.optional(), approveEdited: LabelSchema.optional(), teleport: LabelSchema.optional() })
    .optional(),
  /** The agent's mode as it last reported it ("plan (read-only)"). */
  agentMode: LabelSchema.optional(),
  phase: PhaseSchema,
  sessionLink: HttpUrlSchema.optional(),
  /** Oldest first; the last one is the current revision. */
  revisions: z.array(PlanRevisionSchema).max(PANEL_LIMITS.revisions),
  /** The agent's question while phase is needs_input (or its last words when it stopped). */
  question: z.string().min(1).max(PANEL_LIMITS.textChars).optional(),
  /**
   * The session's agent stopped (phase agent_stopped): why, from the session's log, and whether
   * Continue is offered (no plan waits: a plan is decided instead, which starts the new turn).
   */
  agentStopped: z.strictObject({ text: z.string().min(1).max(PANEL_LIMITS.textChars), canContinue: z.boolean() }).optional(),
  /** True while the last revision is pending and the host would accept a decision on it. */
  canDecide: z.boolean(),
  /** A decision the host is sending right now; the webview shows it and keeps the buttons disabled. */
  pendingDecision: DecisionKindSchema.optional(),
  notice: PanelNoticeSchema.optional(),
  outcome: z.strictObject({ text: z.string().max(PANEL_LIMITS.textChars), link: HttpUrlSchema.optional() }).optional(),
  /** Draft feedback/comments the host kept for the pending revision (from saveDraft). */
  draft: PanelDraftSchema.optional(),
  /** The reply the host kept for the question (from saveReplyDraft). */
  replyDraft: ReplyDraftSchema.optional(),
  /** The scripted demo scenario: labelled as a demo everywhere. */
  demo: z.boolean().optional(),
  /** Once a plan is approved: its checklist. The panel is then about the execution, not a decision. */
  execution: PanelExecutionSchema.optional(),
  /** The pending plan's approvals while a quorum is not reached; `mine`: this person's approval was counted. */
  approval: z.strictObject({ summary: z.string().min(1).max(PANEL_LIMITS.textChars), mine: z.boolean() }).optional(),
});
export type PanelState = z.infer<typeof PanelStateSchema>;

export const DecisionBindingSchema = z.strictObject({
  sessionId: IdSchema,
  toolUseId: IdSchema,
  planHash: PlanHashSchema,
});
export type DecisionBinding = z.infer<typeof DecisionBindingSchema>;

// Host -> webview.
export const INVOKABLE_ACTIONS = ['approve', 'reject', 'edit', 'teleport'] as const;
export type InvokableAction = (typeof INVOKABLE_ACTIONS)[number];

/** Names one decision or reply, so its answer finds it. */
export const RequestIdSchema = z.string().min(1).max(64);

/** A revision as the state message carries it: its text is named by planHash and sent once. */
export const WirePlanRevisionSchema = PlanRevisionSchema.omit({ plan: true });
export type WirePlanRevision = z.infer<typeof WirePlanRevisionSchema>;
export const WirePanelStateSchema = PanelStateSchema.extend({ revisions: z.array(WirePlanRevisionSchema).max(PANEL_LIMITS.revisions) });
export type WirePanelState = z.infer<typeof WirePanelStateSchema>;
export const PlanTextSchema = z.strictObject({ hash: PlanHashSchema, text: z.string().max(PANEL_LIMITS.planChars) });
export type PlanText = z.infer<typeof PlanTextSchema>;

export const StateMessageSchema = z.strictObject({
  type: z.literal('state'),
  state: WirePanelStateSchema,
  /** The texts of this state's revisions that the webview does not have yet. */
  plans: z.array(PlanTextSchema).max(PANEL_LIMITS.revisions),
});
export type StateMessage = z.infer<typeof StateMessageSchema>;
export const InvokeMessageSchema = z.strictObject({ type: z.literal('invoke'), action: z.enum(INVOKABLE_ACTIONS) });
/** The one answer to a decision or reply: it went out, or it was refused and why. */
export const AnswerMessageSchema = z.discriminatedUnion('result', [
  z.strictObject({ type: z.literal('answer'), requestId: RequestIdSchema, result: z.literal('sent') }),
  z.strictObject({
    type: z.literal('answer'),
    requestId: RequestIdSchema,
    result: z.literal('refused'),
    reason: z.string().min(1).max(PANEL_LIMITS.textChars),
  }),
]);
export type AnswerMessage = z.infer<typeof AnswerMessageSchema>;
/** What a request handler returns; the panel adds the type and the requestId. */
export type PanelAnswer = { result: 'sent' } | { result: 'refused'; reason: string };
export const HostToWebviewMessageSchema = z.discriminatedUnion('type', [StateMessageSchema, InvokeMessageSchema, AnswerMessageSchema]);
export type HostToWebviewMessage = z.infer<typeof HostToWebviewMessageSchema>;

// Webview -> host.
export const ReadyMessageSchema = z.strictObject({ type: z.literal('ready') });
const requestFields = { requestId: RequestIdSchema, sessionKey: IdSchema };
export const ApproveMessageSchema = z.strictObject({
  type: z.literal('approve'),
  ...requestFields,
  binding: DecisionBindingSchema,
  /** Approve with notes: what the agent should keep in mind while it executes the plan. */
  notes: ApprovalNotesSchema.optional(),
});
export const RejectMessageSchema = z
  .strictObject({
    type: z.literal('reject'),
    ...requestFields,
    binding: DecisionBindingSchema,
    feedback: FeedbackSchema,
    comments: CommentListSchema,
  })
  .refine((m) => m.feedback.trim().length > 0 || m.comments.length > 0, 'a rejection needs feedback text or at least one comment');
export const EditMessageSchema = z.strictObject({ type: z.literal('edit'), ...requestFields, binding: DecisionBindingSchema });
export const TeleportMessageSchema = z.strictObject({ type: z.literal('teleport'), ...requestFields, binding: DecisionBindingSchema });
export const ReplyMessageSchema = z.strictObject({
  type: z.literal('reply'),
  ...requestFields,
  text: z.string().trim().min(1, 'a reply needs text').max(PANEL_LIMITS.replyChars),
});
/** Continue after the agent stopped: a new agent turn goes on from the conversation, with the person's message if any. */
export const ContinueMessageSchema = z.strictObject({
  type: z.literal('continue'),
  ...requestFields,
  text: z.string().max(PANEL_LIMITS.replyChars),
});
export const OpenLinkMessageSchema = z.strictObject({ type: z.literal('openLink'), href: HttpUrlSchema });
/** A file the execution touched, opened in a diff (against the file as it was at approval, when known). */
export const OpenFileDiffMessageSchema = z.strictObject({ type: z.literal('openFileDiff'), sessionKey: IdSchema, path: FilePathSchema });
export type OpenFileDiffMessage = z.infer<typeof OpenFileDiffMessageSchema>;
/** Verify the session's work against its approved plan (the command Verify Against Plan, for this session). */
export const VerifyMessageSchema = z.strictObject({ type: z.literal('verify'), sessionKey: IdSchema });
/** Ask the same session to carry out a step its verification found missing. */
export const ContinueStepMessageSchema = z.strictObject({
  type: z.literal('continueStep'),
  sessionKey: IdSchema,
  stepId: z.string().min(1).max(500),
});
export type ContinueStepMessage = z.infer<typeof ContinueStepMessageSchema>;
export const SaveDraftMessageSchema = PanelDraftSchema.extend({ type: z.literal('saveDraft'), sessionKey: IdSchema });
export const SaveReplyDraftMessageSchema = ReplyDraftSchema.extend({ type: z.literal('saveReplyDraft'), sessionKey: IdSchema });
export const WebviewToHostMessageSchema = z.discriminatedUnion('type', [
  ReadyMessageSchema,
  ApproveMessageSchema,
  RejectMessageSchema,
  EditMessageSchema,
  TeleportMessageSchema,
  ReplyMessageSchema,
  ContinueMessageSchema,
  OpenLinkMessageSchema,
  OpenFileDiffMessageSchema,
  VerifyMessageSchema,
  ContinueStepMessageSchema,
  SaveDraftMessageSchema,
  SaveReplyDraftMessageSchema,
]);
export type WebviewToHostMessage = z.infer<typeof WebviewToHostMessageSchema>;
export type ApproveMessage = z.infer<typeof ApproveMessageSchema>;
export type RejectMessage = z.infer<typeof RejectMessageSchema>;
export type EditMessage = z.infer<typeof EditMessageSchema>;
export type TeleportMessage = z.infer<typeof TeleportMessageSchema>;
export type ReplyMessage = z.infer<typeof ReplyMessageSchema>;
export type ContinueMessage = z.infer<typeof ContinueMessageSchema>;
export type OpenLinkMessage = z.infer<typeof OpenLinkMessageSchema>;
export type SaveDraftMessage = z.infer<typeof SaveDraftMessageSchema>;
export type SaveReplyDraftMessage = z.infer<typeof SaveReplyDraftMessageSchema>;
/** A decision about a plan revision: everything that carries a binding. */
export type DecisionMessage = ApproveMessage | RejectMessage | EditMessage | TeleportMessage;
/** What ReviewPanel hands to its request handler, each answered once (ready and openLink stay inside the panel). */
export type PanelRequest = DecisionMessage | ReplyMessage | ContinueMessage;

export const MAX_SAVED_DRAFTS = 20;

/**
 * What the webview keeps in vscode.setState, which the WebviewPanelSerializer gets back on reload:
 * its drafts and which session it showed, never the panel state itself (the host sends that).
 * Unknown keys (a saved state of an older version, which kept the whole state) are dropped.
 */
export const WebviewSavedStateSchema = z.object({
  /** The session the panel showed. */
  sessionKey: IdSchema.optional(),
  drafts: z.array(PanelDraftSchema.extend({ sessionKey: IdSchema })).max(MAX_SAVED_DRAFTS),
  replies: z
    .array(ReplyDraftSchema.extend({ sessionKey: IdSchema }))
    .max(MAX_SAVED_DRAFTS)
    .optional(),
});
export type WebviewSavedState = z.infer<typeof WebviewSavedStateSchema>;

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

function parseWith<T>(schema: z.ZodType<T>, what: string, data: unknown): ParseResult<T> {
  const result = schema.safeParse(data);
  if (result.success) return { ok: true, value: result.data };
  const details = z.prettifyError(result.error);
  // Keep the error short enough for a notice and a log line; an oversize plan can produce long paths.
  const clipped = details.length > 600 ? `${details.slice(0, 600)}…` : details;
  return { ok: false, error: `invalid ${what}: ${clipped}` };
}

export function parseHostToWebviewMessage(data: unknown): ParseResult<HostToWebviewMessage> {
  return parseWith(HostToWebviewMessageSchema, 'message from the extension', data);
}

export function parseWebviewToHostMessage(data: unknown): ParseResult<WebviewToHostMessage> {
  return parseWith(WebviewToHostMessageSchema, 'message from the review panel', data);
}

export function parsePanelState(data: unknown): ParseResult<PanelState> {
  return parseWith(PanelStateSchema, 'panel state', data);
}

export function parseStateMessage(data: unknown): ParseResult<StateMessage> {
  return parseWith(StateMessageSchema, 'panel state', data);
}

export function parseWebviewSavedState(data: unknown): ParseResult<WebviewSavedState> {
  return parseWith(WebviewSavedStateSchema, 'saved panel state', data);
}

/** The current (last) revision, if any. */
export function currentRevision(state: PanelState): PlanRevision | undefined {
  return state.revisions[state.revisions.length - 1];
}

/**
 * The host's half of "plan texts go once": the state message for `state`, carrying only the texts
 * whose hash is not in `sent`, and the hashes the webview has once it took this message (exactly
 * this state's).
 */
export function splitPlanTexts(state: PanelState, sent: ReadonlySet<string>): { message: StateMessage; has: Set<string> } {
  const plans: PlanText[] = [];
  const has = new Set<string>();
  const revisions = state.revisions.map(({ plan, ...revision }) => {
    if (!has.has(revision.planHash)) {
      has.add(revision.planHash);
      if (!sent.has(revision.planHash)) plans.push({ hash: revision.planHash, text: plan });
    }
    return revision;
  });
  return { message: { type: 'state', state: { ...state, revisions }, plans }, has };
}

/**
 * The webview's half: the state with its texts, taken from the message or from `kept` (the texts of
 * the last state), and the texts to keep for the next one; or the hashes it lacks.
 */
export function joinPlanTexts(
  message: StateMessage,
  kept: ReadonlyMap<string, string>,
): { ok: true; state: PanelState; texts: Map<string, string> } | { ok: false; missing: string[] } {
  const texts = new Map<string, string>();
  const sent = new Map(message.plans.map((p) => [p.hash, p.text]));
  const missing: string[] = [];
  const revisions = message.state.revisions.map((revision): PlanRevision => {
    const plan = texts.get(revision.planHash) ?? sent.get(revision.planHash) ?? kept.get(revision.planHash);
    if (plan === undefined) missing.push(revision.planHash);
    else texts.set(revision.planHash, plan);
    return { ...revision, plan: plan ?? '' };
  });
  if (missing.length > 0) return { ok: false, missing };
  return { ok: true, state: { ...message.state, revisions }, texts };
}

// What the person typed and has not sent, per plan (feedback, line comments, the comment being
// written, approval notes) and per session (the reply to a question): kept from the keystroke,
// stamped with when it was typed, written to setState and to the host (which keeps them with the
// session), and taken back from either after a reload, the newer copy winning. Pure; part of the
// panel model (panelModel.ts).
import {
  MAX_SAVED_DRAFTS,
  currentRevision,
  type CommentDraft,
  type LineComment,
  type PanelState,
  type PlanRevision,
  type SaveDraftMessage,
  type SaveReplyDraftMessage,
  type WebviewSavedState,
} from '../core/panelMessages';
import type { LineRange } from './lineComments';

/** A plan's draft: what will go with its decision. */
export interface Draft {
  sessionKey: string;
  toolUseId: string;
  feedback: string;
  comments: LineComment[];
  /** Approval notes being written. */
  notes?: string;
  /** The line comment being written (mirrors the composer while it is open). */
  comment?: CommentDraft;
  /** When it was last typed (0: never, e.g. made to show a revision's comments). */
  at: number;
}

interface ReplyDraftEntry {
  sessionKey: string;
  text: string;
  at: number;
}

/** The line comment being written, on 0-based source lines. */
export interface Composer {
  range: LineRange;
  /** Index into the draft's comments when editing one. */
  editing?: number;
  text: string;
}

/** Names one draft for the write-out: a plan's, or a session's reply. */
export type DraftKey = string;

export function planDraftKey(sessionKey: string, toolUseId: string): DraftKey {
  return `plan\u0000${sessionKey}\u0000${toolUseId}`;
}

export function replyDraftKey(sessionKey: string): DraftKey {
  return `reply\u0000${sessionKey}`;
}

export function composerToDraft(composer: Composer): CommentDraft {
  const comment: CommentDraft = { line: composer.range.first + 1, text: composer.text };
  if (composer.range.last !== composer.range.first) comment.endLine = composer.range.last + 1;
  if (composer.editing !== undefined) comment.editing = composer.editing;
  return comment;
}

export function composerFromDraft(comment: CommentDraft, comments: number): Composer {
  const composer: Composer = { range: { first: comment.line - 1, last: (comment.endLine ?? comment.line) - 1 }, text: comment.text };
  if (comment.editing !== undefined && comment.editing < comments) composer.editing = comment.editing;
  return composer;
}

export class PanelDrafts {
  readonly #now: () => number;
  readonly #plans = new Map<DraftKey, Draft>();
  readonly #replies = new Map<DraftKey, ReplyDraftEntry>();
  /** Drafts changed since they were last written out. */
  readonly changed = new Set<DraftKey>();
  /** The session shown when the drafts were last saved. */
  #savedSessionKey: string | undefined;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** A plan's draft, made on first use from the comments the revision has. */
  plan(sessionKey: string, revision: PlanRevision): Draft {
    const key = planDraftKey(sessionKey, revision.toolUseId);
    let draft = this.#plans.get(key);
    if (!draft) {
      draft = { sessionKey, toolUseId: revision.toolUseId, feedback: '', comments: [...revision.comments], at: 0 };
      this.#plans.set(key, draft);
    }
    return draft;
  }

  /** The draft was typed now: stamped, and to be written out. */
  touch(draft: Draft): void {
    draft.at = this.#now();
    const key = planDraftKey(draft.sessionKey, draft.toolUseId);
    // Most recently typed last, so the bound on saved drafts drops the oldest.
    this.#plans.delete(key);
    this.#plans.set(key, draft);
    this.changed.add(key);
  }

  replyText(sessionKey: string): string {
    return this.#replies.get(replyDraftKey(sessionKey))?.text ?? '';
  }

  typeReply(sessionKey: string, text: string): void {
    const key = replyDraftKey(sessionKey);
    this.#replies.delete(key);
    this.#replies.set(key, { sessionKey, text, at: this.#now() });
    this.changed.add(key);
  }

  /** The reply went out: its draft is over, and a write still waiting must not bring it back. */
  dropReply(sessionKey: string): void {
    const key = replyDraftKey(sessionKey);
    this.#replies.delete(key);
    this.changed.delete(key);
  }

  /** The plan's decision went out carrying its draft: a write still waiting must not bring it back. */
  decided(sessionKey: string, toolUseId: string): void {
    this.changed.delete(planDraftKey(sessionKey, toolUseId));
  }

  /** Takes the host's copies in `state` where they are newer than this page's (after a reload that cut its save short). */
  takeHostCopies(state: PanelState): void {
    const current = currentRevision(state);
    if (current && state.draft && state.draft.toolUseId === current.toolUseId) {
      const key = planDraftKey(state.sessionKey, current.toolUseId);
      const own = this.#plans.get(key);
      if (!own || (state.draft.at ?? 0) > own.at) {
        const { toolUseId, feedback, comments, notes, comment, at } = state.draft;
        const draft: Draft = { sessionKey: state.sessionKey, toolUseId, feedback, comments: [...comments], at: at ?? 0 };
        if (notes !== undefined) draft.notes = notes;
        if (comment !== undefined) draft.comment = comment;
        this.#plans.set(key, draft);
      }
    }
    if (state.replyDraft) {
      const own = this.#replies.get(replyDraftKey(state.sessionKey));
      if (!own || (state.replyDraft.at ?? 0) > own.at)
        this.#replies.set(replyDraftKey(state.sessionKey), {
          sessionKey: state.sessionKey,
          text: state.replyDraft.text,
          at: state.replyDraft.at ?? 0,
        });
    }
  }

  /**
   * The host's copy of one changed draft, or undefined when the host is not to keep it (its plan
   * is not the one waiting in the session shown). Marks it written.
   */
  take(key: DraftKey, state: PanelState | undefined): SaveDraftMessage | SaveReplyDraftMessage | undefined {
    if (!this.changed.delete(key) || !state) return undefined;
    const reply = this.#replies.get(key);
    if (reply) return state.sessionKey === reply.sessionKey ? { type: 'saveReplyDraft', ...reply } : undefined;
    const draft = this.#plans.get(key);
    const current = currentRevision(state);
    if (!draft || draft.sessionKey !== state.sessionKey || draft.toolUseId !== current?.toolUseId || current.status !== 'pending')
      return undefined;
    const { sessionKey, toolUseId, feedback, comments, notes, comment, at } = draft;
    const message: SaveDraftMessage = { type: 'saveDraft', sessionKey, toolUseId, feedback, comments, at };
    if (notes !== undefined) message.notes = notes;
    if (comment !== undefined) message.comment = comment;
    return message;
  }

  /** Whether `sessionKey` differs from the session in the last saved state. */
  unsaved(sessionKey: string | undefined): boolean {
    return sessionKey !== undefined && sessionKey !== this.#savedSessionKey;
  }

  /** What setState keeps: the drafts typed (the newest, bounded) and the session shown. */
  saved(sessionKey: string | undefined): WebviewSavedState {
    const drafts = [...this.#plans.values()]
      .filter((d) => d.at > 0)
      .slice(-MAX_SAVED_DRAFTS)
      .map((d) => ({ ...d, comments: [...d.comments] }));
    const saved: WebviewSavedState = { drafts };
    const replies = [...this.#replies.values()].filter((r) => r.text).slice(-MAX_SAVED_DRAFTS);
    if (replies.length > 0) saved.replies = replies;
    const shown = sessionKey ?? this.#savedSessionKey;
    if (shown !== undefined) saved.sessionKey = shown;
    this.#savedSessionKey = shown;
    return saved;
  }

  /** Takes back what setState kept (before the host says anything). */
  restore(saved: WebviewSavedState): void {
    for (const { sessionKey, toolUseId, feedback, comments, notes, comment, at } of saved.drafts) {
      const draft: Draft = { sessionKey, toolUseId, feedback, comments: [...comments], at: at ?? 0 };
      if (notes !== undefined) draft.notes = notes;
      if (comment !== undefined) draft.comment = comment;
      this.#plans.set(planDraftKey(sessionKey, toolUseId), draft);
    }
    for (const { sessionKey, text, at } of saved.replies ?? [])
      this.#replies.set(replyDraftKey(sessionKey), { sessionKey, text, at: at ?? 0 });
    this.#savedSessionKey = saved.sessionKey;
  }
}

// Approve with notes: how the reviewer's notes travel with an approval, per backend (see
// docs/agents.md, "Approve with notes"). The approval itself is unchanged; the notes ride along.
// - Agents behind the session host (embedded ACP agents, our server): the approving
//   control_response, then the notes as the next user message, in one batch so both are taken or
//   neither. The ACP agent sends that message as its next prompt.
// - Claude Code on the web: a remote session takes no message the agent would read before it
//   executes, so the notes become part of the approved plan: an edited approval whose
//   `updatedInput.plan` is the plan plus a "## Reviewer notes" section.
// Pure: no I/O.
import { BACKENDS, type BackendDescriptor, type BackendKind } from './backendKinds';
import { decisionEvent, type PlanDecision } from './decision';
import { PANEL_LIMITS } from './panelMessages';
import { userMessageEvent, type AnyEvent } from './protocol';

export type NotesDelivery = BackendDescriptor['notesDelivery'];

export const REVIEWER_NOTES_HEADING = '## Reviewer notes';

/** How a backend of this kind carries approval notes. */
export function notesDeliveryFor(backendKind: BackendKind): NotesDelivery {
  return BACKENDS[backendKind].notesDelivery;
}

/** The notes checked: trimmed, non-empty and within the bound; otherwise why not. */
export function checkNotes(notes: string): { ok: true; notes: string } | { ok: false; message: string } {
  const trimmed = notes.trim();
  if (trimmed.length === 0) return { ok: false, message: 'The notes are empty; write some or approve without notes. Nothing was sent.' };
  if (notes.length > PANEL_LIMITS.notesChars) {
    return {
      ok: false,
      message: `The notes are ${notes.length} characters; at most ${PANEL_LIMITS.notesChars} go with an approval. Nothing was sent.`,
    };
  }
  return { ok: true, notes: trimmed };
}

/** The user message that follows the approval: says what the text is, so the agent does not take it for a new task. */
export function notesPrompt(notes: string): string {
  return (
    'Notes from the reviewer on the approved plan (the plan stands as approved; keep these in mind while you carry it out):\n\n' +
    notes.trim()
  );
}

/** The approved plan with the notes appended as their own section. */
export function planWithNotes(plan: string, notes: string): string {
  return `${plan.trimEnd()}\n\n${REVIEWER_NOTES_HEADING}\n\n${notes.trim()}\n`;
}

/** What an approval with notes sends: the decision (plain or edited) and the events after it. */
export function approvalWithNotes(
  delivery: NotesDelivery,
  plan: string,
  notes: string,
): { decision: Extract<PlanDecision, { kind: 'approve' | 'approve_edited' }>; after: AnyEvent[] } {
  if (delivery === 'plan_edit') return { decision: { kind: 'approve_edited', editedPlan: planWithNotes(plan, notes) }, after: [] };
  return { decision: { kind: 'approve' }, after: [userMessageEvent(notesPrompt(notes))] };
}

/** Every event an approval with notes sends, in order (SessionDecisions sends exactly these). */
export function approvalWithNotesEvents(delivery: NotesDelivery, requestId: string, plan: string, notes: string): AnyEvent[] {
  const { decision, after } = approvalWithNotes(delivery, plan, notes);
  return [decisionEvent(requestId, plan, decision), ...after];
}

// Approvals by a quorum, as every client reads them: the team server records each person's
// approval of one exact plan text (its SHA-256, decision.ts) as a `system` event of subtype
// `plan_approval` in the session's log, and lets the agent go only when the quorum approved that
// text. This module parses those events and words the state the panel, the page and the inbox
// show ("1 of 2 approvals: alice; waiting for one more from platform-reviewers"). Pure.
import * as z from 'zod';
import { SessionsError } from './errors';

export const PLAN_APPROVAL_SUBTYPE = 'plan_approval';

/** `error.reason` of a 403 refusing one person's approval under a quorum; the message says why. */
export const APPROVAL_REFUSED_REASON = 'approval_refused';

/** This person's approval cannot count: already given, the creator's where it does not count, outside the group. */
export class ApprovalRefusedError extends SessionsError {
  readonly reason = APPROVAL_REFUSED_REASON;

  constructor(message: string) {
    super('unauthorized', message, 403);
  }
}

const ApproverSchema = z.object({ id: z.string().min(1), name: z.string().nullable() });
export type Approver = z.infer<typeof ApproverSchema>;

/** The state after one approval: who approved this text so far, and how many it needs. */
export const ApprovalStateSchema = z.object({
  request_id: z.string().min(1),
  plan_hash: z.string().regex(/^[0-9a-f]{64}$/),
  approvers: z.array(ApproverSchema),
  required: z.number().int().min(1),
  /** The review group whose members must approve; null: anyone who may decide the session. */
  group: z.string().nullable(),
  /** The quorum was reached with this approval and the plan went to the agent. */
  released: z.boolean(),
});
export type ApprovalState = z.infer<typeof ApprovalStateSchema>;

const ApprovalEventSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal(PLAN_APPROVAL_SUBTYPE),
  approval: ApprovalStateSchema,
});

/** The approval state an event carries, or null for any other event. */
export function approvalOf(event: unknown): ApprovalState | null {
  const parsed = ApprovalEventSchema.safeParse(event);
  return parsed.success ? parsed.data.approval : null;
}

/** The event the server stores for an approval (host-written: the agent never receives it). */
export function approvalEvent(state: ApprovalState): { type: 'system'; subtype: typeof PLAN_APPROVAL_SUBTYPE; approval: ApprovalState } {
  return { type: 'system', subtype: PLAN_APPROVAL_SUBTYPE, approval: state };
}

const COUNT_WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

function countWord(n: number): string {
  return COUNT_WORDS[n] ?? String(n);
}

/** How a person is named: their name, else their id. */
export function approverName(approver: Approver): string {
  return approver.name ?? approver.id;
}

/** "1 of 2 approvals: alice; waiting for one more from platform-reviewers" (or "… approved by alice, bob"). */
export function approvalSummary(state: ApprovalState): string {
  const have = state.approvers.length;
  const names = state.approvers.map(approverName).join(', ');
  const head = `${have} of ${state.required} approval${state.required === 1 ? '' : 's'}${names ? `: ${names}` : ''}`;
  if (state.released || have >= state.required) return `${head}; approved`;
  const missing = state.required - have;
  const more = missing === 1 ? 'one more' : `${countWord(missing)} more`;
  return `${head}; waiting for ${more}${state.group ? ` from ${state.group}` : ''}`;
}

/** "Approved by 2 of 2: alice, bob": who let a plan go to the agent, once the quorum released it. */
export function approvedBySummary(state: ApprovalState): string {
  return `Approved by ${state.approvers.length} of ${state.required}: ${state.approvers.map(approverName).join(', ')}`;
}

/** Who is still needed, for a notification: the group, or "N more approvals". */
export function approvalsNeeded(state: ApprovalState): string[] {
  const missing = state.required - state.approvers.length;
  if (state.released || missing <= 0) return [];
  return [state.group ? `${missing} more from ${state.group}` : `${missing} more approval${missing === 1 ? '' : 's'}`];
}

/**
 * The approvals of one plan request as they stand after `events` (in log order): the newest
 * state recorded for that request and plan text, or null when nobody approved it yet. Another
 * text (an edit) has its own count, so the hash must match as well.
 */
export function approvalsFor(events: Iterable<unknown>, requestId: string, hash: string): ApprovalState | null {
  let latest: ApprovalState | null = null;
  for (const event of events) {
    const state = approvalOf(event);
    if (state && state.request_id === requestId && state.plan_hash === hash) latest = state;
  }
  return latest;
}

/** The newest approval state of a request, whichever text it was for (what a card shows first). */
export function latestApprovalFor(events: Iterable<unknown>, requestId: string): ApprovalState | null {
  let latest: ApprovalState | null = null;
  for (const event of events) {
    const state = approvalOf(event);
    if (state && state.request_id === requestId) latest = state;
  }
  return latest;
}

// The questions an ACP agent waits on the person for, by the control_request id the session's log
// shows them under: plan reviews, tool permissions after approval, reads outside the workspace.
import { randomUUID } from 'node:crypto';
import type { CreateElicitationResponse, PermissionOption, RequestPermissionResponse } from '@agentclientprotocol/sdk' with {
  'resolution-mode': 'import',
};
import type { AnyEvent, SessionStatus } from '../../core/protocol';
import type { PlanReviewForm } from './planReview';

export type PendingReview =
  | {
      kind: 'plan_permission';
      toolUseId: string;
      /** The agent's own id of the exit tool call. */
      agentToolCallId: string;
      plan: string;
      options: readonly PermissionOption[];
      answer: (response: RequestPermissionResponse) => void;
    }
  | {
      kind: 'plan_elicitation';
      toolUseId: string;
      plan: string;
      form: PlanReviewForm;
      answer: (response: CreateElicitationResponse) => void;
    }
  | {
      /** A plan offered by the end of a planning turn (an agent with no exit request): nothing of the agent waits on it. */
      kind: 'plan_turn_end';
      toolUseId: string;
      plan: string;
    }
  | {
      kind: 'tool_permission';
      toolUseId: string;
      options: readonly PermissionOption[];
      answer: (response: RequestPermissionResponse) => void;
    }
  | {
      /** A read outside the workspace through fs/read_text_file: the person decides. */
      kind: 'file_read';
      answer: (decision: 'allow' | 'deny' | 'cancel') => void;
    };

export type PlanReview = Extract<PendingReview, { kind: 'plan_permission' | 'plan_elicitation' | 'plan_turn_end' }>;

export const CANCELLED: RequestPermissionResponse = { outcome: { outcome: 'cancelled' } };

function cancelReview(review: PendingReview): void {
  if (review.kind === 'plan_elicitation') review.answer({ action: 'cancel' });
  else if (review.kind === 'file_read') review.answer('cancel');
  else if (review.kind !== 'plan_turn_end') review.answer(CANCELLED);
}

export interface PendingReviewsHost {
  emit(event: AnyEvent): void;
  setStatus(status: Exclude<SessionStatus, 'archived'>): void;
  /** A plan review was opened (this turn offered a plan). */
  planOffered(): void;
  log(line: string): void;
}

export class PendingReviews {
  readonly #host: PendingReviewsHost;
  readonly #open = new Map<string, PendingReview>();

  constructor(host: PendingReviewsHost) {
    this.#host = host;
  }

  /** Puts `review` to the person as a control_request for `toolName` with `input`. */
  open(review: PendingReview, toolUseId: string, toolName: string, input: unknown): void {
    const requestId = `acp-${randomUUID()}`;
    if (review.kind !== 'tool_permission') this.#host.planOffered();
    this.#open.set(requestId, review);
    this.#host.emit({
      type: 'control_request',
      request_id: requestId,
      request: { subtype: 'can_use_tool', tool_name: toolName, input, tool_use_id: toolUseId },
    });
    this.#host.setStatus('requires_action');
  }

  /** The review `requestId` stands for, no longer open: a repeated answer cannot decide the next one. */
  take(requestId: string): PendingReview | undefined {
    const review = this.#open.get(requestId);
    this.#open.delete(requestId);
    return review;
  }

  /** Cancels every open review (the agent no longer waits for them), each logged with `why`. */
  cancelAll(why?: (requestId: string) => string): void {
    for (const [requestId, review] of this.#open) {
      if (why) this.#host.log(why(requestId));
      cancelReview(review);
    }
    this.#open.clear();
  }

  /** The session's status once an answer went back: still waiting on the person, or running. */
  settleStatus(): void {
    this.#host.setStatus(this.#open.size ? 'requires_action' : 'running');
  }
}

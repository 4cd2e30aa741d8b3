// Which stored session events a team hears of, and what it is told: a plan ready (the agent's
// ExitPlanMode request), an approval still needed under a quorum (a plan_approval short of it),
// a decision on a plan, a question (the agent stopped planning with a success result and no plan
// waiting), the execution finished or failed (a result after the plan was approved). Pure: the
// store hands in what it knows of the session besides the event.
import { EXIT_PLAN_MODE_TOOL } from '../../core/protocol';
import { approvalOf, approvalsNeeded, approverName } from '../../core/planApprovals';
import type { NotificationEvent } from './notificationEvents';

export interface NoticeContext {
  session: { id: string; title: string | null };
  link: string;
  at: string;
  /** Who must approve a plan of this session (a quorum's group and number), for plan_ready. */
  needed: string[];
  /** Whether a plan of this session was approved before this event (a result is then the execution's). */
  executing: boolean;
  /** For a client's control_response: whether it answers a plan request, and who sent it. */
  answersPlan: boolean;
  decidedBy: string | null;
}

type Body = Record<string, unknown>;

function record(value: unknown): Body | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Body) : null;
}

/** The notification `event` makes, or null when it is nothing a team is told of. */
export function noticeOf(event: unknown, context: NoticeContext): NotificationEvent | null {
  const body = record(event);
  if (!body) return null;
  const base = { at: context.at, session: context.session, link: context.link };
  const request = record(body.request);
  if (body.type === 'control_request' && request?.subtype === 'can_use_tool' && request.tool_name === EXIT_PLAN_MODE_TOOL) {
    const plan = record(request.input)?.plan;
    return { kind: 'plan_ready', ...base, needed: context.needed, ...(typeof plan === 'string' ? { plan } : {}) };
  }
  const approval = approvalOf(body);
  if (approval) {
    if (approval.released) return null;
    const by = approval.approvers.map(approverName).join(', ');
    return { kind: 'approval_needed', ...base, needed: approvalsNeeded(approval), ...(by ? { decidedBy: by } : {}) };
  }
  const response = record(record(body.response)?.response);
  if (body.type === 'control_response' && context.answersPlan && (response?.behavior === 'allow' || response?.behavior === 'deny')) {
    return {
      kind: 'decided',
      ...base,
      needed: [],
      decision: response.behavior === 'allow' ? 'approved' : 'rejected',
      ...(context.decidedBy ? { decidedBy: context.decidedBy } : {}),
    };
  }
  if (body.type === 'result') {
    const success = body.subtype === 'success' && body.is_error !== true;
    if (context.executing) return { kind: success ? 'execution_finished' : 'execution_failed', ...base, needed: [] };
    return success ? { kind: 'question_asked', ...base, needed: [] } : { kind: 'execution_failed', ...base, needed: [] };
  }
  return null;
}

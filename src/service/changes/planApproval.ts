// Which client event approves a plan: an `allow` answering the agent's ExitPlanMode review. Read
// from the session's log as stored, so it holds for a live agent, a resumed one, and a plan whose
// agent stopped before the decision (its request is in the log all the same).
import { CanUseToolRequestSchema, ControlResponseEventSchema, EXIT_PLAN_MODE_TOOL } from '../../core/protocol';

type LogEvent = { readonly type: string } & Readonly<Record<string, unknown>>;

/** Whether `event` is a decision that approves a plan the agent asked about in `log`. */
export function approvesPlan(event: LogEvent, log: readonly LogEvent[]): boolean {
  if (event.type !== 'control_response') return false;
  const response = ControlResponseEventSchema.safeParse(event);
  if (!response.success || response.data.response.response?.behavior !== 'allow') return false;
  const requestId = response.data.response.request_id;
  for (let i = log.length - 1; i >= 0; i--) {
    const candidate = log[i] as LogEvent;
    if (candidate.type !== 'control_request' || candidate.request_id !== requestId) continue;
    const request = CanUseToolRequestSchema.safeParse(candidate.request);
    return request.success && request.data.tool_name === EXIT_PLAN_MODE_TOOL;
  }
  return false;
}

/** Whether any plan in `log` was approved. */
export function anyPlanApproved(log: readonly LogEvent[]): boolean {
  return log.some((event) => event.type === 'control_response' && approvesPlan(event, log));
}

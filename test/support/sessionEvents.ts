// Builders for synthetic session events, shaped like the wire (docs/protocol.md section 2): the one
// set every test that makes events by hand uses.
import { APPROVED_PLAN_EDITED_MARKER, APPROVED_PLAN_MARKER, ULTRAPLAN_TELEPORT_SENTINEL } from '../../src/core/protocol';

let n = 0;
const base = () => ({ uuid: `u-${++n}`, session_id: 'sess-1' });

export function assistantText(text: string, parentToolUseId: string | null = null) {
  return {
    type: 'assistant',
    ...base(),
    parent_tool_use_id: parentToolUseId,
    message: { role: 'assistant', content: [{ type: 'text', text }] },
  };
}

export function toolUse(id: string, name: string, input: unknown = {}) {
  return {
    type: 'assistant',
    ...base(),
    parent_tool_use_id: null,
    message: { role: 'assistant', content: [{ type: 'tool_use', id, name, input }] },
  };
}

export function exitPlan(id: string, plan?: string) {
  return toolUse(id, 'ExitPlanMode', plan === undefined ? {} : { plan });
}

export function toolResult(toolUseId: string, content: unknown, isError?: boolean) {
  const block: Record<string, unknown> = { type: 'tool_result', tool_use_id: toolUseId, content };
  if (isError !== undefined) block.is_error = isError;
  return { type: 'user', ...base(), parent_tool_use_id: null, message: { role: 'user', content: [block] } };
}

export const approvedText = (plan: string) => `User has approved your plan.\n\n${APPROVED_PLAN_MARKER}${plan}`;
export const editedText = (plan: string) => `User has approved your plan.\n\n${APPROVED_PLAN_EDITED_MARKER}${plan}`;

export const approve = (id: string, plan: string) => toolResult(id, approvedText(plan));
export const reject = (id: string, feedback: string) => toolResult(id, feedback, true);
export const teleport = (id: string, plan: string) =>
  toolResult(id, `The user chose to run it locally.\n${ULTRAPLAN_TELEPORT_SENTINEL}\n${plan}`, true);

export function canUseTool(requestId: string, toolUseId: string, plan: string, toolName = 'ExitPlanMode') {
  return {
    type: 'control_request',
    request_id: requestId,
    request: { subtype: 'can_use_tool', tool_name: toolName, input: { plan }, tool_use_id: toolUseId },
  };
}

export function result(subtype: string) {
  return { type: 'result', ...base(), subtype, is_error: subtype !== 'success', num_turns: 3, result: `ended: ${subtype}` };
}

export function userText(text: string) {
  return { type: 'user', ...base(), parent_tool_use_id: null, message: { role: 'user', content: text } };
}

/** Who a session model in a unit test is: a server session that takes decisions. */
export const TEST_IDENTITY = {
  key: 'server:s1',
  sessionId: 's1',
  title: 'dark mode',
  createdAt: 0,
  backendKind: 'server',
  backendLabel: 'Server',
  demo: false,
} as const;

/** The agent asks to run a tool, with its input (a `can_use_tool` control request). */
export function toolRequest(requestId: string, toolUseId: string, toolName = 'ExitPlanMode', input: unknown = {}) {
  return {
    type: 'control_request',
    request_id: requestId,
    request: { subtype: 'can_use_tool', tool_name: toolName, tool_use_id: toolUseId, input },
  };
}

// The wire's fixed strings, apart from its schemas (protocol.ts re-exports them): the ACP agent
// runtime, a file loaded on its own, needs these and none of zod.
export const ULTRAPLAN_TELEPORT_SENTINEL = '__ULTRAPLAN_TELEPORT_LOCAL__';
export const APPROVED_PLAN_MARKER = '## Approved Plan:\n';
export const APPROVED_PLAN_EDITED_MARKER = '## Approved Plan (edited by user):\n';
export const EXIT_PLAN_MODE_TOOL = 'ExitPlanMode';

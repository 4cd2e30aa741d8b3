// The wire's fixed strings, apart from its schemas (protocol.ts re-exports them): the ACP agent
// runtime, a file loaded on its own, needs these and none of zod.
export const ULTRAPLAN_TELEPORT_SENTINEL = '__ULTRAPLAN_TELEPORT_LOCAL__';
export const APPROVED_PLAN_MARKER = '## Approved Plan:\n';
export const APPROVED_PLAN_EDITED_MARKER = '## Approved Plan (edited by user):\n';
export const EXIT_PLAN_MODE_TOOL = 'ExitPlanMode';

/**
 * Our own `system` event subtype: the agent reported its current mode (an ACP agent's session
 * mode, or the config option that holds its plan mode). A reader that does not know the subtype
 * skips it like any other system event; protocol.ts holds its schema.
 */
export const AGENT_MODE_SUBTYPE = 'ultraplan_agent_mode';

/** The mode event as the session host writes it (the schema in protocol.ts reads it back). */
export function agentModeEvent(
  mode: { id: string; name?: string },
  readOnly: boolean,
): { type: 'system'; subtype: typeof AGENT_MODE_SUBTYPE; mode: { id: string; name?: string }; read_only: boolean } {
  return {
    type: 'system',
    subtype: AGENT_MODE_SUBTYPE,
    mode: mode.name === undefined ? { id: mode.id } : { id: mode.id, name: mode.name },
    read_only: readOnly,
  };
}

/**
 * `system` event subtypes the session host writes about a session's agent process:
 * - agent_lost: the host restarted and the agent could not continue (its process is gone). The
 *   session's plan, question and conversation stay; what a person can still do is in
 *   docs/agents.md ("When the agent stops").
 * - ultraplan_agent_resumed: after a restart the agent continued its own conversation (ACP
 *   `session/load`); a request it had open went with its old process and is now answered
 *   through the host.
 * - ultraplan_agent_restarted: the host started a fresh agent turn for a session whose agent had
 *   stopped (a decision on its plan, or a message), carrying over the plan and the conversation.
 * The last two say an agent runs again; any event from the agent itself says the same.
 */
export const AGENT_LOST_SUBTYPE = 'agent_lost';
export const AGENT_RESUMED_SUBTYPE = 'ultraplan_agent_resumed';
export const AGENT_RESTARTED_SUBTYPE = 'ultraplan_agent_restarted';

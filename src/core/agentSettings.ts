// The values of the agent settings a window sends with a session (afterApproval, outsideAccess),
// apart from the ACP code that acts on them: the extension's settings and the agent launch check
// them without loading the agents' runtime.

/**
 * What Approve selects: `default` leaves the agent asking before each edit, `acceptEdits` lets it
 * edit freely; `bypassPermissions` only when a person set it explicitly (never a default).
 */
export type AfterApproval = 'default' | 'acceptEdits' | 'bypassPermissions';
export const AFTER_APPROVAL_VALUES: readonly AfterApproval[] = ['default', 'acceptEdits', 'bypassPermissions'];

/** How reads outside the workspace and fetches are decided: the person, or a standing answer. */
export type OutsideAccess = 'ask' | 'allow' | 'deny';
export const OUTSIDE_ACCESS_VALUES: readonly OutsideAccess[] = ['ask', 'allow', 'deny'];

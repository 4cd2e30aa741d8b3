// The values of the afterApproval setting, apart from planReview.ts (which acts on them): the
// extension's settings and the agent launch check them without loading the ACP review logic.

/**
 * What Approve selects: `default` leaves the agent asking before each edit, `acceptEdits` lets it
 * edit freely; `bypassPermissions` only when a person set it explicitly (never a default).
 */
export type AfterApproval = 'default' | 'acceptEdits' | 'bypassPermissions';
export const AFTER_APPROVAL_VALUES: readonly AfterApproval[] = ['default', 'acceptEdits', 'bypassPermissions'];

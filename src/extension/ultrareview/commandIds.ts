// The review's command ids, for the places outside this folder that start a review.
export const REVIEW_CHANGES_COMMAND = 'ultraplan.reviewChanges';
/** What the review's row and status item run: its findings, or why it failed. */
export const SHOW_FINDINGS_COMMAND = 'ultraplan.review.showFindings';
/** Verify Against Plan: the fleet checks a session's changes since approval against its approved plan. */
export const VERIFY_AGAINST_PLAN_COMMAND = 'ultraplan.verifyAgainstPlan';

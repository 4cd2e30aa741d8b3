// The review's command ids, for the places outside this folder that start a review.
export const REVIEW_CHANGES_COMMAND = 'ultraplan.reviewChanges';

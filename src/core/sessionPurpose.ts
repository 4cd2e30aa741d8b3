// What a session is for. A planning session is the person's: the status bar, the plan
// notifications, the Plan Inbox, the Attach picker and the other windows on its folder follow it.
// A review's session is one agent run of a review's fleet (a finder or a verifier): it belongs to
// its review, whose one inbox row shows its stage and counts, and no planning surface follows it.
// The purpose travels in the creation request's session_context, which every service keeps and
// lists with the session.
import type { CreateSessionRequest, SessionContext, SessionResource } from './protocol';

/** The session_context key that names a session's purpose; absent means planning. */
export const SESSION_PURPOSE_KEY = 'ultraplan_purpose';

export const SESSION_PURPOSES = ['planning', 'review'] as const;
export type SessionPurpose = (typeof SESSION_PURPOSES)[number];

/** The titles the review fleet gives its runs (client/review/fleet.ts). */
export function reviewRunTitle(role: 'finder' | 'verify', n: number): string {
  return `Ultrareview: ${role} ${n}`;
}

/**
 * Sessions a fleet started before its runs carried a purpose are known by their titles alone
 * (a planning session's title is `ultraplan: …`, so none reads like this).
 */
const REVIEW_RUN_TITLE = /^Ultrareview: (?:finder|verify) \d+$/;

/** The creation request marked as one of a review's runs. */
export function asReviewRun(request: CreateSessionRequest): CreateSessionRequest {
  const context: SessionContext = { ...request.session_context, [SESSION_PURPOSE_KEY]: 'review' };
  return { ...request, session_context: context };
}

/** A listed or fetched session's purpose: 'planning' unless it says (or its title shows) it is a review's. */
export function purposeOf(session: Pick<SessionResource, 'title' | 'session_context'>): SessionPurpose {
  return session.session_context?.[SESSION_PURPOSE_KEY] === 'review' || isReviewRunTitle(session.title) ? 'review' : 'planning';
}

/** Whether a title (as listed, or as a followed session keeps it) is a review run's. */
export function isReviewRunTitle(title: string): boolean {
  return REVIEW_RUN_TITLE.test(title.trim());
}

/** Why a review's session is not followed as a plan (the Attach command says it). */
export const REVIEW_RUN_NOT_FOLLOWED =
  "is one of a review's agent runs (a finder or a verifier): its findings are shown by the review (its row in the Plan Inbox and the comment threads), not followed as a plan.";

// A session whose agent must not read what a review withholds (the secret rule of
// core/review/scope.ts): asked for by its creation request, kept in its session_context, so the
// agent started again after a restart, on a worker or in the local service, keeps the same rule.
import type { SessionContext } from './protocol';

/** The session_context key; its one value, "secrets", is the review's secret rule. */
export const WITHHOLD_KEY = 'ultraplan_withhold';

/** The session_context a reviewer's session is created with. */
export const WITHHOLD_SECRETS_CONTEXT: SessionContext = { [WITHHOLD_KEY]: 'secrets' };

/** Whether a session's agent must not read files the secret rule withholds. */
export function withholdsSecrets(context: SessionContext | null | undefined): boolean {
  return context?.[WITHHOLD_KEY] === 'secrets';
}

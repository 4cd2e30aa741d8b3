// What the inbox and the status bar say of a completed session's verification: the words are the
// verifications' store's (loaded in a chunk of its own), so until it is read there are none.
import type { PlanRevision } from '../../core/panelMessages';

export type VerificationWordsOf = (sessionKey: string, revisions: readonly PlanRevision[]) => string | undefined;

let wordsOf: VerificationWordsOf = () => undefined;

/** Set once the store is read (ultrareview/verificationSetup.ts). */
export function setVerificationWords(of: VerificationWordsOf): void {
  wordsOf = of;
}

/**
 * A completed session's entry with what its verification found in place of the progress the agent
 * reported ("Completed, verified: 6 of 7 steps; step 3 missing"), when its approved plan was verified.
 */
export function withVerificationWords<T extends { key: string; attention: string; progress?: string | undefined }>(
  entry: T,
  revisions: readonly PlanRevision[],
): T {
  if (entry.attention !== 'completed') return entry;
  const words = wordsOf(entry.key, revisions);
  return words ? { ...entry, progress: words } : entry;
}

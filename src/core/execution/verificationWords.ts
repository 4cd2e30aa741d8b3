// What the surfaces other than the panel (the inbox row and its tooltip, the status bar's tooltip)
// say of a completed session once its work was verified, and when a verification starts by itself.
// Pure and without schemas.
import type { PanelVerification, VerifiedStep } from './panelVerification';

/** The steps a gap was confirmed on, in plan order: missing or done differently. */
export function gapSteps(verification: PanelVerification): VerifiedStep[] {
  return verification.steps.filter((s) => s.verdict === 'missing' || s.verdict === 'done_differently');
}

/**
 * The words a surface shows for a session once its execution completed: the verification's
 * headline when it is about the plan approved now, with the gaps named ("Completed, verified: 6 of
 * 7 steps; missing: step 3"); nothing when no verification of this plan is known.
 */
export function completedWithVerification(verification: PanelVerification | undefined, planHash: string | undefined): string | undefined {
  if (!verification || verification.planHash !== planHash) return undefined;
  const gaps = gapSteps(verification);
  if (!gaps.length) return verification.headline;
  const named = gaps.map((s) => `step ${s.id} ${s.verdict === 'missing' ? 'missing' : 'done differently'}`);
  return `${verification.headline}; ${named.join(', ')}`;
}

/** What a session's execution ending is told by: once per approved plan and end. */
export interface ExecutionEnd {
  key: string;
  phase: string;
  /** The approved plan's hash, none before approval. */
  planHash: string | undefined;
}

/**
 * The sessions whose execution ended since `seen` was last updated (what this window observed of
 * each before): completed with an approved plan now, in another phase when last seen. A session
 * first seen completed (a reload, a restore) starts none, so each plan and end starts at most one;
 * a Continue that runs the plan again and ends is a new end.
 */
export function endedExecutions(seen: Map<string, string>, sessions: readonly ExecutionEnd[]): ExecutionEnd[] {
  const ended: ExecutionEnd[] = [];
  for (const s of sessions) {
    const before = seen.get(s.key);
    seen.set(s.key, s.phase);
    if (before !== undefined && before !== 'completed' && s.phase === 'completed' && s.planHash) ended.push(s);
  }
  for (const key of [...seen.keys()]) if (!sessions.some((s) => s.key === key)) seen.delete(key);
  return ended;
}

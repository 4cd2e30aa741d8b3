// What the editor keeps of reviews across a reload (workspace state): the threads of the last
// review, each with the code it was raised on and its state, and the dismissals with their reasons.
import * as z from 'zod';
import { SEVERITIES } from './finding';

export const PersistedThreadSchema = z.strictObject({
  id: z.string().min(1),
  file: z.string().min(1),
  startLine: z.number().int().min(1),
  endLine: z.number().int().min(1),
  severity: z.enum(SEVERITIES),
  title: z.string(),
  explanation: z.string(),
  suggestedChange: z.string().optional(),
  foundBy: z.array(z.string()),
  confirmedBy: z.array(z.string()),
  refutedBy: z.array(z.string()),
  confirmations: z.number().int().min(0),
  verdicts: z.number().int().min(0),
  status: z.enum(['confirmed', 'unverified']),
  reasons: z.array(z.string()),
  /** The code the finding was raised on; what re-anchoring looks for. */
  anchor: z.array(z.string()),
  state: z.enum(['unresolved', 'resolved']),
  outdated: z.boolean(),
  /** A verification's claim (core/execution/verificationThreads.ts): its Fix goes to the session that executed the plan. */
  plan: z
    .strictObject({
      sessionKey: z.string().min(1).max(256),
      kind: z.enum(['done_differently', 'out_of_plan']),
      stepId: z.string().min(1).max(500).optional(),
    })
    .optional(),
});
export type PersistedThread = z.infer<typeof PersistedThreadSchema>;

export const DismissalSchema = z.strictObject({
  file: z.string(),
  title: z.string(),
  code: z.array(z.string()),
  reason: z.string(),
  at: z.string(),
});

export const PersistedReviewsSchema = z.strictObject({
  version: z.literal(1),
  /** The repository root the files are relative to. */
  root: z.string(),
  headline: z.string(),
  threads: z.array(PersistedThreadSchema).max(1000),
  dismissals: z.array(DismissalSchema).max(5000),
});
export type PersistedReviews = z.infer<typeof PersistedReviewsSchema>;

/** The stored value, or an empty store when it is missing or does not parse (logged by the caller). */
export function readPersistedReviews(value: unknown): { ok: true; value: PersistedReviews | undefined } | { ok: false; error: string } {
  if (value === undefined) return { ok: true, value: undefined };
  const parsed = PersistedReviewsSchema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, error: parsed.error.issues[0]?.message ?? 'invalid' };
}

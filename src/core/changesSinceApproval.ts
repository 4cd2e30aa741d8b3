// The changes a session's agent made since its plan was approved, as the service answers
// `GET /v1/ultraplan/sessions/{id}/changes` (docs/execution.md, "What changed"): the workspace
// recorded at approval (a commit under refs/ultraplan/approved/<session>), the files that differ
// from it now, and the unified diff. Both sides parse it with this schema.
import * as z from 'zod';

/** The route, under the server's base address. */
export function changesPath(sessionId: string): string {
  return `/v1/ultraplan/sessions/${encodeURIComponent(sessionId)}/changes`;
}

/** The ref that keeps a session's record of the workspace at approval (so `git gc` keeps it). */
export function approvedRef(sessionId: string): string {
  return `refs/ultraplan/approved/${sessionId}`;
}

export const CHANGED_FILE_STATUSES = ['added', 'modified', 'deleted'] as const;

export const ChangedFileSchema = z.strictObject({
  /** Relative to the repository's top folder, with `/`. */
  path: z.string().min(1).max(4096),
  status: z.enum(CHANGED_FILE_STATUSES),
});
export type ChangedFile = z.infer<typeof ChangedFileSchema>;

export const ChangesSinceApprovalSchema = z.strictObject({
  type: z.literal('changes_since_approval'),
  session_id: z.string().min(1),
  /** The commit that records the workspace at approval (its parent: HEAD then, if there was one). */
  approved_commit: z.string().regex(/^[0-9a-f]{40,64}$/),
  /** When the plan was approved (the record's time). */
  approved_at: z.string().min(1),
  /** When this diff was taken: now for a workspace the service reads, else when the worker last stored it. */
  computed_at: z.string().min(1),
  files: z.array(ChangedFileSchema).max(100_000),
  /** `git diff` of the recorded workspace against the workspace (untracked files included, ignored ones not). */
  diff: z.string(),
});
export type ChangesSinceApproval = z.infer<typeof ChangesSinceApprovalSchema>;

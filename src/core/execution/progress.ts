// The execution's progress facts, as the session keeps them after Approve: the agent's todo list
// each time it changes (an ACP `plan` update, Claude Code's TodoWrite) and each file an edit or
// write tool touched. Strict: the session host writes these; readers parse them once.
import * as z from 'zod';

/** The `system` event subtype that carries one progress fact (docs/execution.md). */
export const PROGRESS_SUBTYPE = 'ultraplan_progress';

export const TODO_STATUSES = ['pending', 'in_progress', 'completed'] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

const MAX_TODO_TEXT = 2_000;
const MAX_TODOS = 500;

/** One entry: ACP's `{content, priority, status}` or TodoWrite's `{content, status, activeForm}`. */
export const TodoEntrySchema = z.strictObject({
  content: z.string().min(1).max(MAX_TODO_TEXT),
  status: z.enum(TODO_STATUSES),
  priority: z.enum(['high', 'medium', 'low']).optional(),
  activeForm: z.string().max(MAX_TODO_TEXT).optional(),
});
export type TodoEntry = z.infer<typeof TodoEntrySchema>;

const factBase = {
  /** Order within the session (the reducer sorts by it; equal seq keeps arrival order). */
  seq: z.number().int().min(0),
  /** ISO time the host saw it. */
  at: z.iso.datetime(),
};

/** The agent's whole todo list as it just reported it (both sources send the full list). */
export const TodoSnapshotSchema = z.strictObject({
  kind: z.literal('todos'),
  ...factBase,
  source: z.enum(['acp_plan', 'todo_write']),
  entries: z.array(TodoEntrySchema).max(MAX_TODOS),
});
export type TodoSnapshot = z.infer<typeof TodoSnapshotSchema>;

/** A file an edit/write tool call changed, with the todo in progress then if the host knew it. */
export const FileTouchSchema = z.strictObject({
  kind: z.literal('file_touched'),
  ...factBase,
  /** Workspace-relative, forward slashes. */
  path: z.string().min(1).max(1_000),
  tool: z.string().min(1).max(200),
  toolUseId: z.string().min(1).max(200).optional(),
  /** The content of the todo that was in_progress when the tool ran. */
  todo: z.string().min(1).max(MAX_TODO_TEXT).optional(),
});
export type FileTouch = z.infer<typeof FileTouchSchema>;

export const ProgressFactSchema = z.discriminatedUnion('kind', [TodoSnapshotSchema, FileTouchSchema]);
export type ProgressFact = z.infer<typeof ProgressFactSchema>;

/**
 * The wire event: a `system` event (AnyEvent/SystemEventSchema read it; readers that do not know
 * the subtype skip it), bound to the approved plan by its hash so progress is never shown against
 * another revision.
 */
export const ProgressEventSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal(PROGRESS_SUBTYPE),
  id: z.string().optional(),
  plan_hash: z.string().regex(/^[0-9a-f]{64}$/),
  progress: ProgressFactSchema,
});
export type ProgressEvent = z.infer<typeof ProgressEventSchema>;

export function progressEvent(planHash: string, fact: ProgressFact): ProgressEvent {
  return ProgressEventSchema.parse({ type: 'system', subtype: PROGRESS_SUBTYPE, plan_hash: planHash, progress: fact });
}

/** The progress facts of `events` bound to `planHash`, parsed; other events and other plans' facts are left out. */
export function progressFacts(events: readonly unknown[], planHash: string): ProgressFact[] {
  const facts: ProgressFact[] = [];
  for (const event of events) {
    const parsed = ProgressEventSchema.safeParse(event);
    if (parsed.success && parsed.data.plan_hash === planHash) facts.push(parsed.data.progress);
  }
  return facts;
}

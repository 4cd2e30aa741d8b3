// What survives a window reload: each followed session's backend, id, cursor,
// revisions with their comments and feedback, drafts and the decisions already used. Kept in
// workspaceState as JSON and parsed with zod on the way back in: a damaged or older entry is
// dropped with a log line, never trusted. Pure (no vscode import) so it is unit-tested.
import * as z from 'zod';
import { BACKEND_KINDS } from './backendKinds';
import { PanelDraftSchema, PanelExecutionSchema, PlanRevisionSchema, HttpUrlSchema, ReplyDraftSchema } from './panelMessages';
import { PhaseSchema } from './phase';
import { MAX_NOTIFIED_PER_SESSION } from './inbox';
import { MAX_SAVED_PLANS } from './hostActs';

export { MAX_SAVED_PLANS } from './hostActs';

export { PERSISTED_SESSIONS_KEY } from './stateKeys';
/**
 * The history bound: how many finished sessions are kept (with their revisions and decisions) for
 * the inbox's Done group. Beyond it the oldest finished are forgotten first; live sessions are
 * always kept and do not count.
 */
export const MAX_FINISHED_SESSIONS = 50;

export const PersistedSessionSchema = z.strictObject({
  key: z.string().min(1),
  backendKind: z.enum(BACKEND_KINDS),
  backendLabel: z.string(),
  /** For server backends: the URL the session lives on (a changed setting must not re-point it). */
  serverUrl: z.string().optional(),
  sessionId: z.string().min(1),
  title: z.string(),
  createdAt: z.number(),
  phaseChangedAt: z.number(),
  cursor: z.string().nullable(),
  phase: PhaseSchema,
  revisions: z.array(PlanRevisionSchema),
  drafts: z.array(PanelDraftSchema),
  /** The reply being written to the question. */
  replyDraft: ReplyDraftSchema.optional(),
  usedBindings: z.array(z.strictObject({ sessionId: z.string(), toolUseId: z.string() })),
  question: z.string().optional(),
  outcome: z.strictObject({ text: z.string(), link: HttpUrlSchema.optional() }).optional(),
  demo: z.boolean().optional(),
  /** The agent that planned (embedded), shown in the panel and tooltip. */
  agentLabel: z.string().optional(),
  /** Why this session takes no decisions from here (attached read-only); absent: it does. */
  readOnly: z.string().max(500).optional(),
  /** True once a decision that ends the review (approve, teleport, stop) was made. */
  finished: z.boolean(),
  /** Plan files saved from this session (teleports), absolute paths, oldest first. */
  savedPlans: z.array(z.string().min(1).max(4096)).max(MAX_SAVED_PLANS).optional(),
  /** The agent's mode as it last reported it. */
  agentMode: z
    .strictObject({ id: z.string().min(1).max(200), name: z.string().max(200).optional(), readOnly: z.boolean().optional() })
    .optional(),
  /** A finished session's checklist as the panel showed it, with its plan's hash: its log is not read again after a reload. */
  execution: PanelExecutionSchema.extend({ planHash: z.string().max(64) }).optional(),
  /** The needs already announced by a notification (inbox.ts needNotificationKey), so a reload does not repeat them. */
  notified: z.array(z.string().max(300)).max(MAX_NOTIFIED_PER_SESSION).optional(),
});
export type PersistedSession = z.infer<typeof PersistedSessionSchema>;

export interface ParsedSessions {
  sessions: PersistedSession[];
  dropped: string[];
}

/** Parses each entry on its own, so one damaged entry does not lose the others. */
export function parsePersistedSessions(raw: unknown): ParsedSessions {
  if (raw === undefined || raw === null) return { sessions: [], dropped: [] };
  if (!Array.isArray(raw)) return { sessions: [], dropped: ['stored sessions were not a list'] };
  const sessions: PersistedSession[] = [];
  const dropped: string[] = [];
  raw.forEach((entry, i) => {
    const parsed = PersistedSessionSchema.safeParse(entry);
    if (parsed.success) sessions.push(parsed.data);
    else dropped.push(`entry ${i}: ${parsed.error.issues[0]?.message ?? 'invalid'} at ${parsed.error.issues[0]?.path.join('.') ?? '?'}`);
  });
  return { sessions, dropped };
}

/** Keeps every unfinished session and the newest finished ones, up to the history bound. */
export function trimPersistedSessions<T extends Pick<PersistedSession, 'finished' | 'phaseChangedAt'>>(
  sessions: readonly T[],
  maxFinished = MAX_FINISHED_SESSIONS,
): T[] {
  const finished = sessions
    .filter((s) => s.finished)
    .sort((a, b) => b.phaseChangedAt - a.phaseChangedAt)
    .slice(0, Math.max(0, maxFinished));
  const keep = new Set(finished);
  return sessions.filter((s) => !s.finished || keep.has(s));
}

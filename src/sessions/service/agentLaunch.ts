// What a session of the local service runs, chosen by the window that starts it: the service is
// shared by every window of the user, each with its own folder and agent settings, so the agent
// travels with the session's creation request (in its session_context, kept in the session's
// meta) instead of being one per process. The service rebuilds the same agent from the stored
// session when it must start one again (a message after the agent was lost, a restart):
// launchedAgent.ts, in the service only.
import * as path from 'node:path';
import * as z from 'zod';
import type { CreateSessionRequest, SessionContext } from '../../core/protocol';
import { AFTER_APPROVAL_VALUES, OUTSIDE_ACCESS_VALUES } from '../acp';

/** The session_context key that carries the launch. */
export const AGENT_LAUNCH_KEY = 'ultraplan_agent';

const absolutePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => path.isAbsolute(p), 'must be an absolute path');
const label = z.string().min(1).max(200);

export const AgentLaunchSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('scripted'), file: absolutePath, label }),
  z.strictObject({
    kind: z.literal('acp'),
    argv: z.array(z.string().min(1).max(4096)).min(1).max(200),
    cwd: absolutePath,
    label,
    afterApproval: z.enum(AFTER_APPROVAL_VALUES),
    outsideAccess: z.enum(OUTSIDE_ACCESS_VALUES),
    firstEventTimeoutMs: z.number().int().positive().max(3_600_000).optional(),
  }),
]);
export type AgentLaunch = z.infer<typeof AgentLaunchSchema>;

/** The creation request with the launch in its session_context. */
export function withAgentLaunch(request: CreateSessionRequest, launch: AgentLaunch): CreateSessionRequest {
  return { ...request, session_context: { ...request.session_context, [AGENT_LAUNCH_KEY]: launch } };
}

/** The launch a session was created with; undefined when it names none; throws when it is malformed. */
export function agentLaunchOf(context: SessionContext | null | undefined): AgentLaunch | undefined {
  const raw = context?.[AGENT_LAUNCH_KEY];
  if (raw === undefined) return undefined;
  const parsed = AgentLaunchSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${AGENT_LAUNCH_KEY}${issue?.path.length ? `.${issue.path.join('.')}` : ''}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

// What a session of the local service runs, chosen by the window that starts it: the service is
// shared by every window of the user, each with its own folder and agent settings, so the agent
// travels with the session's creation request (in its session_context, kept in the session's
// meta) instead of being one per process. The service rebuilds the same agent from the stored
// session when it must start one again (a message after the agent was lost, a restart):
// launchedAgent.ts, in the service only.
import * as z from 'zod';
import type { CreateSessionRequest, SessionContext } from './protocol';
import { AFTER_APPROVAL_VALUES, OUTSIDE_ACCESS_VALUES } from './agentSettings';

/** The session_context key that carries the launch. */
export const AGENT_LAUNCH_KEY = 'ultraplan_agent';
/**
 * The session_context key that names the workspace folder of the window that started the session:
 * the other windows on that folder follow it too (otherWindows.ts).
 */
export const WORKSPACE_KEY = 'ultraplan_workspace';

const absolutePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => isAbsolutePath(p), 'must be an absolute path');
const label = z.string().min(1).max(200);

/**
 * What node:path's isAbsolute says on the machine that runs both the window and the service,
 * without importing Node, so this module stays in the pure core: `/…` on POSIX; on Windows also a
 * drive (`C:\\…`, `C:/…`), a share (`\\\\server\\…`) or a rooted `\\…`.
 */
export function isAbsolutePath(p: string, windows = globalThis.process?.platform === 'win32'): boolean {
  if (p.startsWith('/')) return true;
  return windows && (/^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\'));
}

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

/** The creation request with the launch (and the window's workspace folder, when it has one) in its session_context. */
export function withAgentLaunch(request: CreateSessionRequest, launch: AgentLaunch, workspace?: string): CreateSessionRequest {
  const context: SessionContext = { ...request.session_context, [AGENT_LAUNCH_KEY]: launch };
  if (workspace !== undefined) context[WORKSPACE_KEY] = workspace;
  return { ...request, session_context: context };
}

/** The workspace folder a session was started for, if its creation request named one. */
export function workspaceOf(context: SessionContext | null | undefined): string | undefined {
  const folder = context?.[WORKSPACE_KEY];
  return typeof folder === 'string' && folder.length > 0 ? folder : undefined;
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

/**
 * The agent's name a session was started with, for a window that did not start it (Attach, another
 * window): undefined when the session carries no launch or one this build cannot read, since a
 * label is worth showing, not worth failing an attach over.
 */
export function agentLabelOf(context: SessionContext | null | undefined): string | undefined {
  const parsed = AgentLaunchSchema.safeParse(context?.[AGENT_LAUNCH_KEY]);
  return parsed.success ? parsed.data.label : undefined;
}

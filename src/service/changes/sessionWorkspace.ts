// Where a session's agent works, for the hosts whose agents work on this machine (the local
// service: the folder its window sent with the agent; the single-process server: its
// --workspace), and the approval hooks that record that workspace when a plan is approved.
import { agentLaunchOf, workspaceOf } from '../../core/agentLaunch';
import type { SessionContext } from '../../core/protocol';
import type { ApprovalHooks } from '../runtime/agentRuntime';
import { recordApproval } from './approvalSnapshot';

export interface SessionPlace {
  readonly id: string;
  readonly session_context?: SessionContext | null;
}

/** The folder a session's agent works in, when this process knows it. */
export type WorkspaceOf = (session: SessionPlace) => string | undefined;

/** The local service: the ACP agent's folder, else the folder of the window that started the session. */
export const localServiceWorkspace: WorkspaceOf = (session) => {
  let launch;
  try {
    launch = agentLaunchOf(session.session_context);
  } catch {
    launch = undefined; // a malformed launch starts no agent either
  }
  return launch?.kind === 'acp' ? launch.cwd : workspaceOf(session.session_context);
};

/** The hooks that record the workspace of `session` at each approval of its plan. */
export function recordingApprovals(where: WorkspaceOf, log: (line: string) => void): (session: SessionPlace) => ApprovalHooks | undefined {
  return (session) => {
    const workspace = where(session);
    if (workspace === undefined) return undefined;
    return {
      approved: async () => {
        const record = await recordApproval(workspace, session.id);
        log(
          record.kind === 'recorded'
            ? `session ${session.id}: the workspace at approval is recorded (${record.commit.slice(0, 12)})`
            : `session ${session.id}: the workspace at approval is not recorded: ${record.reason}`,
        );
      },
    };
  };
}

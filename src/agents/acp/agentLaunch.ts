// An ACP agent's process, started in its sandbox when it has one (the workspace read-only while it
// plans, writable once the plan is approved), and the connection that routes its every request
// and update to the parts of AcpAgent that answer them.
import type { ClientConnection, SessionNotification } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { prepareAgentSandbox, type AgentSandboxSettings } from '../sandbox/agentSandbox';
import { AgentProcess, type AgentExit } from './agentProcess';
import type { AgentRequests } from './agentRequests';
import { acpSdk } from './sdk';

export interface AgentLaunchOptions {
  argv: readonly string[];
  workspace: string;
  env: NodeJS.ProcessEnv;
  sandbox?: AgentSandboxSettings | undefined;
  sessionId: string;
  /** Carrying out an approved plan: the sandbox's workspace is writable. */
  approved: boolean;
  onMalformedLine: (line: string) => void;
}

export interface LaunchedAgent {
  proc: AgentProcess;
  /** Removes the sandbox's folders; run once the process has exited. */
  cleanup: () => Promise<void>;
  /** How the process runs, for the log. */
  where: string;
}

/** Starts the process; `stopping()` is asked again once the sandbox is ready, so a stop meanwhile starts nothing. */
export async function launchAgentProcess(options: AgentLaunchOptions, stopping: () => boolean): Promise<LaunchedAgent | undefined> {
  let command = { argv: [...options.argv], cwd: options.workspace, env: options.env };
  let cleanup = async (): Promise<void> => {};
  if (options.sandbox) {
    const sandboxed = await prepareAgentSandbox(options.sandbox, {
      sessionId: options.sessionId,
      argv: options.argv,
      workspace: options.workspace,
      env: options.env,
      mode: options.approved ? 'executing' : 'planning',
      uid: process.geteuid?.(),
    });
    cleanup = sandboxed.cleanup;
    command = { argv: [sandboxed.command, ...sandboxed.args], cwd: sandboxed.cwd, env: sandboxed.env };
  }
  if (stopping()) {
    await cleanup();
    return undefined;
  }
  try {
    const proc = new AgentProcess({ ...command, onMalformedLine: options.onMalformedLine });
    const where = options.sandbox ? `sandboxed, ${options.approved ? 'workspace writable' : 'workspace read-only'}` : 'unsandboxed';
    return { proc, cleanup, where };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** The client side of the connection: every method the agent may call, answered by `requests`. */
export function connectAgent(
  proc: AgentProcess,
  requests: AgentRequests,
  onSessionUpdate: (notification: SessionNotification) => void,
): ClientConnection {
  const acp = acpSdk();
  const app = acp.client({ name: 'ultraplan' });
  app.onNotification('session/update', ({ params }) => onSessionUpdate(params));
  app.onRequest('session/request_permission', ({ params }) => requests.permission(params));
  app.onRequest('fs/read_text_file', ({ params }) => requests.readFile(params, acp.RequestError));
  app.onRequest('fs/write_text_file', ({ params }) => requests.writeFile(params, acp.RequestError));
  for (const method of ['terminal/create', 'terminal/output', 'terminal/release', 'terminal/wait_for_exit', 'terminal/kill'] as const) {
    app.onRequest(method, () => requests.terminal(method, acp.RequestError));
  }
  app.onRequest('elicitation/create', ({ params }) => requests.elicitation(params));
  app.onNotification('elicitation/complete', () => undefined);
  return app.connect(acp.ndJsonStream(proc.input(), proc.output()));
}

/** Why the process ended, for the person: a spawn that failed says what to check. */
export function describeExit(label: string, program: string | undefined, exit: AgentExit): string {
  if (exit.spawnError) {
    return `Could not start ${label} (${program}): ${exit.spawnError}. Is it installed and on PATH? Choose another agent or set ultraplan.agent.command.`;
  }
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  return `${label} ${how} unexpectedly.`;
}

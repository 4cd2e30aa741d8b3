// The ACP agent runtime (acpAgent.ts, the ACP SDK and what only they use) is imported when a
// factory is made, that is when an ACP agent is about to plan: choosing an agent, the demo, a
// server or Claude Code on the web never load it. In the bundles it is a chunk of its own
// (docs/packaging.md).
import type { AgentFactory } from '../agent';
import type { AcpAgentOptions } from './acpAgentOptions';
import { isWithheldFromReviewers } from '../../core/review/scope';

/**
 * One AcpAgent per session, all running the same command in the same workspace (each in its own
 * sandbox, when given one). A session that withholds secrets (a reviewer's) gets the review's
 * secret rule as its read policy, and its sandbox hides those files.
 */
export async function createAcpAgentFactory(options: AcpAgentOptions): Promise<AgentFactory> {
  if (options.argv.length === 0 || !options.argv[0]) throw new Error('The ACP agent command is empty.');
  const { AcpAgent } = await import('./acpAgent');
  const forSession = (withholdSecrets: boolean | undefined): AcpAgentOptions => {
    if (!withholdSecrets) return options;
    return {
      ...options,
      withheld: isWithheldFromReviewers,
      ...(options.sandbox ? { sandbox: { ...options.sandbox, hidden: isWithheldFromReviewers } } : {}),
    };
  };
  const sandbox = options.sandbox;
  if (!sandbox) return ({ withholdSecrets }) => new AcpAgent(forSession(withholdSecrets));
  const { sandboxFolders } = await import('../sandbox/agentSandbox');
  // The agent's plans folder is in the session's own HOME, the one its sandbox shows.
  return ({ sessionId, withholdSecrets }) =>
    new AcpAgent({ ...forSession(withholdSecrets), home: sandboxFolders(sandbox, sessionId).home });
}

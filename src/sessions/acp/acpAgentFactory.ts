// The ACP agent runtime (acpAgent.ts, the ACP SDK and what only they use) is imported when a
// factory is made, that is when an ACP agent is about to plan: choosing an agent, the demo, a
// server or Claude Code on the web never load it. In the bundles it is a chunk of its own
// (docs/packaging.md).
import type { AgentFactory } from '../agent';
import type { AcpAgentOptions } from './acpAgent';

/** One AcpAgent per session, all running the same command in the same workspace. */
export async function createAcpAgentFactory(options: AcpAgentOptions): Promise<AgentFactory> {
  if (options.argv.length === 0 || !options.argv[0]) throw new Error('The ACP agent command is empty.');
  const { AcpAgent } = await import('./acpAgent');
  return () => new AcpAgent({ ...options });
}

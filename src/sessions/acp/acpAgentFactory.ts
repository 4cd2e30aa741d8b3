// The ACP agent runtime (acpAgent.ts and the modules only it uses) is loaded when the first agent
// of a factory starts, not when the factory is made: choosing an agent, the demo, a server or
// Claude Code on the web never need it. In the bundles it is a file of its own
// (dist/acp-agent.js, see esbuild.mjs `lazyFiles`); under tsx (tests) it is the source module.
import type { AgentFactory } from '../agent';
import type { AcpAgentOptions } from './acpAgent';

type AcpAgentModule = typeof import('./acpAgent');

let runtime: AcpAgentModule | undefined;

export function acpAgentRuntime(): AcpAgentModule {
  runtime ??= require('./acpAgent') as AcpAgentModule;
  return runtime;
}

/** One AcpAgent per session, all running the same command in the same workspace. */
export function createAcpAgentFactory(options: AcpAgentOptions): AgentFactory {
  if (options.argv.length === 0 || !options.argv[0]) throw new Error('The ACP agent command is empty.');
  return () => new (acpAgentRuntime().AcpAgent)({ ...options });
}

// What a window may know of the agents without their runtime: the known agents, how to find and
// install them, their labels and Claude's root rule. The ACP runtime (src/agents/acp) runs in the
// session service only.
export { labelFromArgv } from './agentLabel';
export { claudeBypassProblem, currentProcessIdentity, type ProcessIdentity } from './claudeBypass';
export {
  KNOWN_AGENTS,
  KNOWN_AGENT_IDS,
  detectKnownAgents,
  detectCustomAgent,
  findOnPath,
  resolveAgentCommand,
  splitCommandLine,
  type DetectedAgent,
  type KnownAgent,
  type KnownAgentId,
} from './knownAgents';

// The ACP agents as the extension and the server use them. The runtime itself (AcpAgent) is not
// re-exported: importing it from here would bundle it into everything that chooses an agent;
// createAcpAgentFactory loads it when an agent first starts.
export { createAcpAgentFactory } from './acpAgentFactory';
export type { AcpAgentOptions } from './acpAgent';
export { labelFromArgv } from './agentLabel';
export { claudeBypassProblem, currentProcessIdentity, type ProcessIdentity } from './claudeBypass';
export { AFTER_APPROVAL_VALUES, type AfterApproval } from './afterApproval';
export { OUTSIDE_ACCESS_VALUES, type OutsideAccess } from './readOnlyPolicy';
export {
  KNOWN_AGENTS,
  detectKnownAgents,
  detectCustomAgent,
  findOnPath,
  resolveAgentCommand,
  splitCommandLine,
  type DetectedAgent,
  type KnownAgent,
  type KnownAgentId,
} from './knownAgents';

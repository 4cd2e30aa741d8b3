// A sandbox per session: each agent sees only its own workspace, HOME and temp folder, in its own
// PID and network namespaces, and reaches only its allowed hosts through a filtering proxy.
export { SandboxSpecSchema, SandboxEnvSchema, type SandboxSpec, type SandboxEnv, type HeldKey } from './spec';
export { heldKeyPlan, modelKeyNames, type HeldKeyPlan } from './heldKeys';
export { sandboxSupport, multiUserRefusal, type SandboxSupport, type SandboxTools } from './support';
export { prepareSandboxedSpawn, sandboxEnvironment, type SandboxedSpawn } from './sandboxedSpawn';
export { egressPolicy, decideTarget, addressDenial, type EgressPolicy } from './hostPolicy';
export type { EgressDecision, EgressProxy } from './egressProxy';
export {
  prepareAgentSandbox,
  sandboxFolders,
  modelAccess,
  programFolders,
  type AgentSandboxSettings,
  type AgentSandboxRequest,
} from './agentSandbox';

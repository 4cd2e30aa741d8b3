// The ACP agent runner: what the extension and the server use.
export {
  AcpAgent,
  createAcpAgentFactory,
  labelFromArgv,
  DEFAULT_FIRST_EVENT_TIMEOUT_MS,
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_STOP_GRACE_MS,
  type AcpAgentOptions,
} from './acpAgent';
export { AFTER_APPROVAL_VALUES, type AfterApproval } from './planReview';
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

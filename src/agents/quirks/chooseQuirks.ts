// The quirks of the agent `initialize` introduced, chosen once per agent: the catalogue knows it by
// the name it gives (agents.json `agentInfoNames`), and each known agent has its quirks here; an
// agent of its own kind with no quirks is plain ACP.
import type { InitializeResponse } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { knownAgentNamed, type KnownAgentId } from '../catalogue/knownAgents';
import { PLAIN_ACP, type AgentQuirks } from './agentQuirks';
import { CLAUDE_QUIRKS } from './claude';
import { CODEX_QUIRKS } from './codex';
import { COPILOT_QUIRKS } from './copilot';
import { GEMINI_QUIRKS } from './gemini';
import { OPENCODE_QUIRKS } from './opencode';
import { QWEN_QUIRKS } from './qwen';

/** Every catalogue entry has its quirks (PLAIN_ACP where it speaks ACP as the spec says). */
export const QUIRKS_BY_AGENT: { readonly [id in KnownAgentId]: AgentQuirks } = {
  claude: CLAUDE_QUIRKS,
  gemini: GEMINI_QUIRKS,
  codex: CODEX_QUIRKS,
  qwen: QWEN_QUIRKS,
  copilot: COPILOT_QUIRKS,
  opencode: OPENCODE_QUIRKS,
};

export function chooseQuirks(agentInfo: InitializeResponse['agentInfo']): AgentQuirks {
  const known = knownAgentNamed(agentInfo?.name);
  return known ? QUIRKS_BY_AGENT[known.id] : PLAIN_ACP;
}

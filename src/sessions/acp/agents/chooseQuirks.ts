// The quirks of the agent `initialize` introduced, chosen once per agent.
import type { InitializeResponse } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { PLAIN_ACP, type AgentQuirks } from './agentQuirks';
import { CLAUDE_QUIRKS, isClaudeAdapter } from './claude';
import { CODEX_QUIRKS, isCodex } from './codex';
import { GEMINI_QUIRKS, isGemini } from './gemini';

export function chooseQuirks(agentInfo: InitializeResponse['agentInfo']): AgentQuirks {
  if (isCodex(agentInfo)) return CODEX_QUIRKS;
  if (isClaudeAdapter(agentInfo)) return CLAUDE_QUIRKS;
  if (isGemini(agentInfo)) return GEMINI_QUIRKS;
  return PLAIN_ACP;
}

// Gemini CLI over ACP (`gemini --acp`), as it behaves (version 0.61.0):
// - modes `default`, `autoEdit`, `yolo`, `plan`; a switch is announced as the assistant text
//   `[MODE_UPDATE] <mode>`, not as current_mode_update;
// - in plan mode the model writes its plan itself (not through the client's fs) to
//   ~/.gemini/tmp/<project>/<sessionId>/plans/<name>.md, announced only as an `edit` tool call
//   whose diff `newText` is the whole file; then `exit_plan_mode` asks a permission whose tool
//   call id starts `exit_plan_mode__`, titled `Requesting plan approval for: <absolute path>`,
//   kind `other`, with no rawInput and no content, options `proceed_once` / `cancel`;
// - once approved it switches itself to `default` when the exit tool call runs (after our
//   answer), so a different mode chosen by the person is set after that tool call completes;
//   `autoEdit` and `yolo` are refused in a folder Gemini does not trust;
// - its edit tools read the file first through fs/read_text_file, and it cannot tell any error
//   answer from "file exists but is unreadable" (its SDK rejects with a plain object, which its
//   not-found check does not recognise): a missing file must be answered as empty for a new file
//   to be created.
import type { ToolCallUpdate } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { chooseApproveOption, type AfterApproval } from '../acp/planReview';
import { PLAIN_ACP, type AgentQuirks } from './agentQuirks';

const EXIT_PLAN_ID_PREFIX = 'exit_plan_mode__';
const EXIT_PLAN_TITLE = /^Requesting plan approval for: (.+)$/s;
const MODE_UPDATE_TEXT = /^\s*\[MODE_UPDATE\]\s+(\S+)\s*$/;

/** Whether a permission request is Gemini's exit_plan_mode. */
export function isGeminiPlanExit(toolCall: Pick<ToolCallUpdate, 'toolCallId' | 'title'>): boolean {
  return toolCall.toolCallId.startsWith(EXIT_PLAN_ID_PREFIX) || EXIT_PLAN_TITLE.test(toolCall.title ?? '');
}

/** The plan file an exit request names (its title), if any. */
export function geminiPlanPath(toolCall: Pick<ToolCallUpdate, 'title'>): string | undefined {
  const match = EXIT_PLAN_TITLE.exec(toolCall.title ?? '');
  return match?.[1]?.trim() || undefined;
}

/** The mode a `[MODE_UPDATE] <mode>` message announces, if the update is one. */
export function geminiModeUpdate(update: { sessionUpdate: string } & Record<string, unknown>): string | undefined {
  if (update.sessionUpdate !== 'agent_message_chunk') return undefined;
  const content = update.content as { type?: unknown; text?: unknown } | undefined;
  if (content?.type !== 'text' || typeof content.text !== 'string') return undefined;
  return MODE_UPDATE_TEXT.exec(content.text)?.[1];
}

/**
 * The mode to set once the approved plan's exit tool call has run, as ultraplan.afterApproval
 * asks; undefined for `default`, which Gemini switches to by itself.
 */
export function geminiModeAfterApproval(afterApproval: AfterApproval): string | undefined {
  if (afterApproval === 'acceptEdits') return 'autoEdit';
  if (afterApproval === 'bypassPermissions') return 'yolo';
  return undefined;
}

/** What a person can do when Gemini refuses autoEdit/yolo. */
export const GEMINI_TRUST_HINT =
  'Gemini CLI allows that mode only in a folder it trusts: trust this folder in Gemini CLI (run `gemini` in it once), then start again.';

export const GEMINI_QUIRKS: AgentQuirks = {
  ...PLAIN_ACP,
  name: 'Gemini CLI',
  readUpdate(update) {
    const mode = geminiModeUpdate(update);
    return mode === undefined ? undefined : { kind: 'mode', mode };
  },
  ownPlanExit: (toolCall) => (isGeminiPlanExit(toolCall) ? { planFile: geminiPlanPath(toolCall) } : undefined),
  // Gemini offers a plain Allow only: the mode chosen is set once its exit tool call ran.
  approval: (label, options, afterApproval) => ({
    choice: chooseApproveOption(label, options, 'default'),
    modeAfterExitTool: geminiModeAfterApproval(afterApproval),
  }),
  readsMissingAsEmptyOnceApproved: true,
  modeSwitchHint: (message) => (/untrusted/i.test(message) ? GEMINI_TRUST_HINT : undefined),
  carryOutMode: (afterApproval) => geminiModeAfterApproval(afterApproval) ?? 'default',
  // 0.61.0 offers session/load, but it opens the session's chat record anew before it reads it
  // back: in our runs after a kill it answered "No previous sessions found for this project." in 9
  // of 11 loads. A fresh turn from the session's log is dependable (docs/agents.md).
  loadsSessions: false,
};

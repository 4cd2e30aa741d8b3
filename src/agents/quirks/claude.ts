// Claude's ACP adapter (@agentclientprotocol/claude-agent-acp), as it behaves (version 0.101.0):
// - session/new answers in mode `auto`, where a classifier lets writes through with no permission
//   request at all: plan mode must be set before the first prompt (the caller does, and waits for
//   the switch to be answered);
// - in plan mode the model writes its plan itself to ~/.claude/plans/<slug>.md and calls
//   ExitPlanMode with no input; the adapter fills the permission request's rawInput with
//   {plan, planFilePath} from that file. When the model passed the plan inline instead, the
//   permission arrives with an empty rawInput and the plan is in the tool call's update; the request
//   also comes empty when Claude Code's cache of the plan file lags the model's Write (it fills the
//   input from that cache): then the plan is the file the model wrote, at once (acp/planText.ts);
// - the exit request's options: `exit-plan-default` (manual edits), `exit-plan-clear-auto` (clear
//   the context, then auto mode), `exit-plan-auto` (auto mode), `exit-plan-bypass`, `reject`
//   ("No, keep planning"); there is no accept-edits option, so that choice is `exit-plan-default`
//   followed by a switch to the `acceptEdits` mode;
// - a reject ends the turn with stopReason `cancelled`; the model hears only that the tool use
//   was rejected, so the reviewer's feedback goes in the next prompt;
// - Claude Code's own notices (e.g. about auto-mode billing when the model is not Anthropic's API)
//   arrive as agent_message_chunk with `_meta.claudeCode.kind: "informational"`: not the model's words.
import { claudeSessionMeta, claudeStartupRefusal } from '../catalogue/claudeBypass';
import type { PermissionOption } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { chooseRejectOption, type AfterApproval } from '../acp/planReview';
import { PLAIN_ACP, type AgentQuirks } from './agentQuirks';

export const CLAUDE_EXIT_OPTIONS = {
  manual: 'exit-plan-default',
  bypass: 'exit-plan-bypass',
  reject: 'reject',
} as const;
export const CLAUDE_ACCEPT_EDITS_MODE = 'acceptEdits';

/**
 * Approve on Claude's exit request: the option to select and the mode to switch to afterwards;
 * undefined when the request does not carry today's option ids (the generic choice then applies).
 */
export function claudeApproval(
  options: readonly PermissionOption[],
  afterApproval: AfterApproval,
): { option: PermissionOption; thenMode?: string } | undefined {
  const byId = (id: string): PermissionOption | undefined => options.find((option) => option.optionId === id);
  if (afterApproval === 'bypassPermissions') {
    const option = byId(CLAUDE_EXIT_OPTIONS.bypass);
    return option && { option };
  }
  const manual = byId(CLAUDE_EXIT_OPTIONS.manual);
  if (!manual) return undefined;
  return afterApproval === 'acceptEdits' ? { option: manual, thenMode: CLAUDE_ACCEPT_EDITS_MODE } : { option: manual };
}

/** Reject on Claude's exit request ("No, keep planning"). */
export function claudeRejectOption(options: readonly PermissionOption[]): PermissionOption | undefined {
  return options.find((option) => option.optionId === CLAUDE_EXIT_OPTIONS.reject);
}

/** The text of one of Claude Code's own notices (not the model's words), if the update is one. */
export function claudeNotice(update: { sessionUpdate: string } & Record<string, unknown>): string | undefined {
  if (update.sessionUpdate !== 'agent_message_chunk') return undefined;
  const meta = update._meta as { claudeCode?: { kind?: unknown } } | undefined;
  const content = update.content as { type?: unknown; text?: unknown } | undefined;
  if (meta?.claudeCode?.kind !== 'informational' || content?.type !== 'text' || typeof content.text !== 'string') return undefined;
  return content.text;
}

export const CLAUDE_QUIRKS: AgentQuirks = {
  ...PLAIN_ACP,
  name: "Claude's adapter",
  sessionMeta: claudeSessionMeta,
  startupRefusal: claudeStartupRefusal,
  readUpdate(update) {
    const text = claudeNotice(update);
    return text === undefined ? undefined : { kind: 'notice', text };
  },
  approval(label, options, afterApproval) {
    const claude = claudeApproval(options, afterApproval);
    return claude
      ? { choice: { ok: true, option: claude.option }, thenMode: claude.thenMode }
      : PLAIN_ACP.approval(label, options, afterApproval);
  },
  rejectOption(label, options) {
    const reject = claudeRejectOption(options);
    return reject ? { ok: true, option: reject } : chooseRejectOption(label, options);
  },
  // Claude's adapter queues a prompt sent during a turn into Claude Code's input, and Claude Code
  // shows it to the model at its next request, inside the running turn ("The user sent a new
  // message while you were working"): after approval that is where the reviewer's notes belong.
  joinsTurnAfterApproval: true,
};

// Qwen Code over ACP (`qwen --acp`), as it behaves (version 0.24.4, read from its package and run
// with only the model scripted):
// - session/new answers in mode `auto` (a classifier lets actions through): plan mode must be set
//   before the first prompt. Modes `plan`, `default`, `auto-edit`, `auto`, `yolo`, also offered as
//   the `mode` config option;
// - in plan mode the model calls `exit_plan_mode {plan}`: a permission request whose rawInput holds
//   the plan, options `restore_previous` ("Yes, restore previous mode (<mode before plan>)"),
//   `proceed_always` ("Yes, and auto-accept edits": mode auto-edit), `proceed_once` ("Yes, and
//   manually approve edits": mode default), `cancel` ("No, keep planning (esc)");
// - the mode chosen is set when the exit tool runs, after the answer: a mode of the person's
//   (yolo, which no option offers) is set once that tool call has completed;
// - `restore_previous` goes back to the mode before plan mode, `auto` when Ultraplan set plan mode
//   on a new session: never chosen, since a classifier, not the person, would then approve edits;
// - todo_write sends ACP `plan` updates (entries with content, priority, status).
import type { PermissionOption } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { chooseApproveOption, type AfterApproval } from '../acp/planReview';
import { PLAIN_ACP, type AgentQuirks } from './agentQuirks';

/** The exit option that hands the decisions back to Qwen's classifier. */
export const QWEN_RESTORE_PREVIOUS = 'restore_previous';

/** Qwen's mode for each ultraplan.afterApproval value. */
export const QWEN_CARRY_OUT_MODES: Record<AfterApproval, string> = {
  default: 'default',
  acceptEdits: 'auto-edit',
  bypassPermissions: 'yolo',
};

const withoutRestore = (options: readonly PermissionOption[]): PermissionOption[] =>
  options.filter((option) => option.optionId !== QWEN_RESTORE_PREVIOUS);

export const QWEN_QUIRKS: AgentQuirks = {
  ...PLAIN_ACP,
  name: 'Qwen Code',
  // No bypass among the exit options: approve with manual edits, then yolo once the exit tool ran.
  approval: (label, options, afterApproval) =>
    afterApproval === 'bypassPermissions'
      ? {
          choice: chooseApproveOption(label, withoutRestore(options), 'default'),
          modeAfterExitTool: QWEN_CARRY_OUT_MODES.bypassPermissions,
        }
      : { choice: chooseApproveOption(label, withoutRestore(options), afterApproval) },
  carryOutMode: (afterApproval, available) =>
    available.includes(QWEN_CARRY_OUT_MODES[afterApproval]) ? QWEN_CARRY_OUT_MODES[afterApproval] : undefined,
};

// What sets one ACP agent apart from the protocol's plain reading, as one interface: the runtime
// asks these questions and never which agent it talks to. One implementation per agent (claude.ts,
// codex.ts, gemini.ts, and PLAIN_ACP below for any other), chosen once after `initialize`
// (chooseQuirks.ts).
import type { InitializeResponse, PermissionOption, ToolCallUpdate } from '@agentclientprotocol/sdk' with {
  'resolution-mode': 'import',
};
import type { PlanModeTarget } from '../acp/planMode';
import { chooseApproveOption, chooseRejectOption, type AfterApproval, type OptionChoice } from '../acp/planReview';

/** An update that means something else than the protocol says (never the model's own words). */
export type UpdateReading =
  /** A status line (Codex's "Reconnecting…"): logged, and quoted if the turn times out; the update goes on. */
  | { kind: 'status'; text: string }
  /** A mode switch announced as text (Gemini's `[MODE_UPDATE] plan`). */
  | { kind: 'mode'; mode: string }
  /** The adapter's own notice (Claude Code's informational messages). */
  | { kind: 'notice'; text: string };

/** How Approve answers a plan's exit request. */
export interface PlanApprovalChoice {
  choice: OptionChoice;
  /** A mode to switch to just after the answer. */
  thenMode?: string;
  /** A mode to switch to once the approved exit tool call has completed (the agent switches itself first). */
  modeAfterExitTool?: string;
}

/**
 * An agent that carries out an approved plan at once, in the same prompt, with the permission
 * preset that prompt began with (Codex): to run it with another preset, the preset is set, plan
 * mode left, the review closed and the plan handed to a prompt of its own.
 */
export interface PresetHandover {
  /** The option that approves and implements at once; undefined: this request is not of that kind. */
  implementOption(options: readonly PermissionOption[]): PermissionOption | undefined;
  /** The preset ultraplan.afterApproval asks for, if the agent offers it. */
  preset(afterApproval: AfterApproval, availableModeIds: readonly string[]): string | undefined;
  /** The config change that leaves plan mode, when plan mode is a config option. */
  leavePlanMode(target: PlanModeTarget | undefined): { configId: string; value: string } | undefined;
  /** The prompt that starts the implementation; with the plan when the reviewer edited it. */
  implementPrompt(editedPlan: string | undefined): string;
}

/**
 * An agent whose plan mode has no request to leave it over ACP (GitHub Copilot CLI, OpenCode): the
 * end of a planning turn is where its plan is offered for review. Approve leaves plan mode and
 * sends the plan back as a prompt to carry out; Reject sends the feedback as the next prompt.
 */
export interface TurnEndPlan {
  /**
   * The file the agent saves the session's plan to (absolute), when it keeps one: a turn that
   * changed it offers its text; a turn that did not is a question or a remark. Undefined: the
   * turn's last words are the plan, unless their last line asks a question.
   */
  planFile?(agent: { home: string; env: Readonly<Record<string, string | undefined>>; sessionId: string }): string;
  /** After approval, the config option that leaves plan mode, when plan mode is one. */
  readonly leavePlanMode?: { configId: string; value: string };
}

export interface AgentQuirks {
  /** For the log. */
  readonly name: string;
  /** The `authenticate` call the agent needs before session/new, or why none is made; undefined: it needs none. */
  authentication?(
    init: Pick<InitializeResponse, 'authMethods'>,
    env: Record<string, string | undefined>,
  ): { methodId: string } | { skip: string };
  /**
   * A session mode (permission preset) to hold while planning besides plan mode, because plan mode
   * alone does not stop edits; the agent is refused when it does not offer it.
   */
  readonly planningPreset?: { modeId: string; missing(label: string, offered: readonly string[]): string };
  /** What a person can do when the agent wants a login (in session/new, authenticate or a prompt's failure). */
  readonly loginHint?: string;
  /** What an update means besides the protocol's reading, if it is one of the agent's own. */
  readUpdate(update: { sessionUpdate: string } & Record<string, unknown>): UpdateReading | undefined;
  /**
   * An exit request recognised by its own shape, not the protocol's (Gemini's exit_plan_mode), with
   * the plan file it names; undefined: not one.
   */
  ownPlanExit(toolCall: Pick<ToolCallUpdate, 'toolCallId' | 'title'>): { planFile: string | undefined } | undefined;
  /** How Approve answers the exit request's options. */
  approval(label: string, options: readonly PermissionOption[], afterApproval: AfterApproval): PlanApprovalChoice;
  /** How Reject answers the exit request's options. */
  rejectOption(label: string, options: readonly PermissionOption[]): OptionChoice;
  readonly presetHandover?: PresetHandover;
  /**
   * After approval, a message sent during a turn joins it (the model reads it with the approval,
   * before the plan is carried out) instead of waiting for the turn's end.
   */
  readonly joinsTurnAfterApproval: boolean;
  /** Once approved, a missing workspace file is read as empty (an edit tool that must read before it creates). */
  readonly readsMissingAsEmptyOnceApproved: boolean;
  /** Words added when a mode switch after approval fails with `message`. */
  modeSwitchHint(message: string): string | undefined;
  /**
   * The mode a fresh turn that carries out an approved plan runs in (its planning agent had
   * stopped), as ultraplan.afterApproval asks; undefined: the agent offers none, its own stays.
   */
  carryOutMode(afterApproval: AfterApproval, availableModeIds: readonly string[]): string | undefined;
  /**
   * After a restart of the host, the agent's session is resumed with ACP session/load (when the
   * agent offers it); false: a fresh turn goes on from the session's log instead.
   */
  readonly loadsSessions: boolean;
  /** An agent with no exit request: its planning turn's end offers the plan. */
  readonly planAtTurnEnd?: TurnEndPlan;
  /** session/new's `_meta` for this agent, if it takes one. */
  sessionMeta?(afterApproval: AfterApproval): Record<string, unknown> | undefined;
  /** A refusal of session/new this agent explains in full (cause and fix), so no stderr follows it. */
  startupRefusal?(error: unknown, afterApproval: AfterApproval): string | undefined;
}

/** The usual mode ids for what Approve allows: manual edits, accepted edits, no permission prompts. */
const CARRY_OUT_MODES: Record<AfterApproval, string> = {
  default: 'default',
  acceptEdits: 'acceptEdits',
  bypassPermissions: 'bypassPermissions',
};

/** An agent that reads the protocol plainly. */
export const PLAIN_ACP: AgentQuirks = {
  name: 'plain ACP',
  readUpdate: () => undefined,
  ownPlanExit: () => undefined,
  approval: (label, options, afterApproval) => ({ choice: chooseApproveOption(label, options, afterApproval) }),
  rejectOption: chooseRejectOption,
  joinsTurnAfterApproval: false,
  readsMissingAsEmptyOnceApproved: false,
  modeSwitchHint: () => undefined,
  loadsSessions: true,
  carryOutMode: (afterApproval, available) =>
    available.includes(CARRY_OUT_MODES[afterApproval]) ? CARRY_OUT_MODES[afterApproval] : undefined,
};

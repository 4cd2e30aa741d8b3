// Codex through its ACP adapter (@agentclientprotocol/codex-acp), as it behaves (version 2.6.0):
// - it needs `authenticate` before `session/new` ("Authentication required" otherwise); method
//   `api-key` reads CODEX_API_KEY or OPENAI_API_KEY from the adapter's environment;
// - plan mode is the config option `collaboration_mode` = `plan`; the session modes are permission
//   presets (read-only, workspace-write, agent, agent-full-access). In plan mode with its default
//   preset (`agent`) Codex edits files without asking, so planning also needs `read-only`;
// - the plan comes after the turn as a permission request, kind `switch_mode`, "Implement this
//   plan?", rawInput.plan, options implement_plan / revise_plan. On implement_plan the adapter
//   switches itself back to `default` and starts an implementation turn at once, in the same
//   prompt, with the preset that was in force when that prompt began (a preset set meanwhile
//   applies from the next prompt);
// - with no model reachable a prompt never ends: it sends `session_info_update`s whose
//   _meta.codex.error says "Reconnecting…".
import type { InitializeResponse, PermissionOption } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import type { PlanModeTarget } from '../acp/planMode';
import type { AfterApproval } from '../acp/planReview';
import { agentEntry } from '../catalogue/knownAgents';
import { PLAIN_ACP, type AgentQuirks } from './agentQuirks';

const CODEX = agentEntry('codex');

export const CODEX_READ_ONLY_PRESET = 'read-only';
export const CODEX_API_KEY_VARIABLES = ['CODEX_API_KEY', 'OPENAI_API_KEY'] as const;
const IMPLEMENT_PLAN_OPTION = 'implement_plan';

/**
 * How to authenticate before session/new: `api-key` when the adapter offers it and a key is in
 * its environment; otherwise nothing (a `codex login` the adapter finds itself may still work,
 * and session/new says so when it does not).
 */
export function codexAuthentication(
  init: Pick<InitializeResponse, 'authMethods'>,
  env: Record<string, string | undefined>,
): { methodId: string } | { skip: string } {
  // Protocol v1 names a method `id`; the adapter's v2 answer names it `methodId`.
  const offered = ((init.authMethods ?? []) as unknown as Array<Record<string, unknown>>)
    .map((method) => method.id ?? method.methodId)
    .filter((id): id is string => typeof id === 'string');
  if (!offered.includes('api-key')) return { skip: `it offers no api-key login (offered: ${offered.join(', ') || 'none'})` };
  const variable = CODEX_API_KEY_VARIABLES.find((name) => env[name]?.trim());
  if (!variable) return { skip: `neither ${CODEX_API_KEY_VARIABLES.join(' nor ')} is set` };
  return { methodId: 'api-key' };
}

/** What a person can do when Codex wants a login. */
export const CODEX_LOGIN_HINT =
  `Set ${CODEX_API_KEY_VARIABLES.join(' or ')} in the environment VS Code starts from (Ultraplan authenticates with it), ` +
  `or log in once with \`codex login\`, then start again.`;

/**
 * The preset Approve selects, as ultraplan.afterApproval asks: `default` keeps edits asking
 * (read-only: every change is a permission request the reviewer answers), `acceptEdits` lets
 * Codex edit the workspace, `bypassPermissions` gives it full access. undefined when the agent
 * does not offer that preset.
 */
export function codexPresetAfterApproval(afterApproval: AfterApproval, availableModeIds: readonly string[]): string | undefined {
  const preset =
    afterApproval === 'acceptEdits'
      ? 'workspace-write'
      : afterApproval === 'bypassPermissions'
        ? 'agent-full-access'
        : CODEX_READ_ONLY_PRESET;
  return availableModeIds.includes(preset) ? preset : undefined;
}

/** What codex-acp itself sends to start implementing an approved plan. */
export const CODEX_IMPLEMENT_PROMPT = 'Implement the approved plan.';

/** The config change that leaves plan mode (`collaboration_mode` back to `default`), when plan mode is that option. */
export function codexLeavePlanMode(target: PlanModeTarget | undefined): { configId: string; value: string } | undefined {
  return target?.via === 'config_option' && target.configId === 'collaboration_mode'
    ? { configId: target.configId, value: 'default' }
    : undefined;
}

/** The option that approves Codex's plan. */
export function codexImplementOption(options: readonly PermissionOption[]): PermissionOption | undefined {
  return options.find((option) => option.optionId === IMPLEMENT_PLAN_OPTION);
}

/** The status line of a `session_info_update` (Codex's "Reconnecting… waiting for network"), if any. */
export function codexStatusText(update: Record<string, unknown>): string | undefined {
  if (update.sessionUpdate !== 'session_info_update') return undefined;
  const meta = update._meta as { codex?: { error?: { message?: unknown; additionalDetails?: unknown } } } | undefined;
  const error = meta?.codex?.error;
  if (!error || typeof error.message !== 'string') return undefined;
  return typeof error.additionalDetails === 'string' && error.additionalDetails
    ? `${error.message} (${error.additionalDetails})`
    : error.message;
}

export const CODEX_QUIRKS: AgentQuirks = {
  ...PLAIN_ACP,
  name: "Codex's adapter",
  authentication: codexAuthentication,
  // In plan mode alone Codex edits without asking: only its read-only preset turns edits into
  // permission requests (which are refused while planning).
  planningPreset: {
    modeId: CODEX_READ_ONLY_PRESET,
    missing: (label, offered) =>
      `${label} offers no "${CODEX_READ_ONLY_PRESET}" preset (it offers ${offered.join(', ') || 'none'}), ` +
      `and in plan mode alone it edits files without asking. Ultraplan will not plan with it; install ${CODEX.package} ${CODEX.version}.`,
  },
  loginHint: CODEX_LOGIN_HINT,
  readUpdate(update) {
    const text = codexStatusText(update);
    return text ? { kind: 'status', text } : undefined;
  },
  presetHandover: {
    implementOption: codexImplementOption,
    preset: codexPresetAfterApproval,
    leavePlanMode: codexLeavePlanMode,
    implementPrompt: (editedPlan) =>
      editedPlan === undefined
        ? CODEX_IMPLEMENT_PROMPT
        : `${CODEX_IMPLEMENT_PROMPT} The reviewer edited it before approving; follow this version:\n\n${editedPlan}`,
  },
  // Its presets are its permission modes; a new session's collaboration mode is already `default`.
  carryOutMode: codexPresetAfterApproval,
};

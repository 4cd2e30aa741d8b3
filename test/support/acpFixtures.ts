// ACP shapes the tests hand the fake agent and the pure pieces, as real agents send them: the modes
// of an agent with a plan mode, and the permission options of a plain agent, Claude's adapter
// (0.101.0) and Gemini CLI (0.61.0).
import type { PermissionOption } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };

/** The text of src/app.ts in every fake workspace (fakeRun) and in the real agents' workspaces. */
export const ORIGINAL_APP = 'export const original = true;\n';

/** What the real agents' scripted models write to src/app.ts once a plan is approved. */
export const UPDATED_APP = 'export const original = false;\n';

/** An agent that starts in `default` and offers `plan`. */
export const DEFAULT_AND_PLAN_MODES = {
  currentModeId: 'default',
  availableModes: [
    { id: 'default', name: 'Default' },
    { id: 'plan', name: 'Plan' },
  ],
};

export const REJECT_OPTION = { optionId: 'reject', name: 'Reject', kind: 'reject_once' } as const satisfies PermissionOption;

/** A plain agent's permission options: allow once, or reject. */
export const ALLOW_OR_REJECT: PermissionOption[] = [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }, REJECT_OPTION];

/** Claude's adapter's options on its exit-plan request. */
export const CLAUDE_EXIT_OPTIONS: PermissionOption[] = [
  { optionId: 'exit-plan-default', name: 'Yes, manually approve edits', kind: 'allow_once' },
  { optionId: 'exit-plan-clear-auto', name: 'Yes, clear context (0% used) and use auto mode', kind: 'allow_always' },
  { optionId: 'exit-plan-auto', name: 'Yes, and use auto mode', kind: 'allow_always' },
  { optionId: 'exit-plan-bypass', name: 'Yes, and bypass permissions', kind: 'allow_always' },
  { optionId: 'reject', name: 'No, keep planning', kind: 'reject_once' },
];

/** Gemini CLI's options on any permission, its exit_plan_mode included. */
export const GEMINI_OPTIONS: PermissionOption[] = [
  { optionId: 'proceed_once', name: 'Allow', kind: 'allow_once' },
  { optionId: 'cancel', name: 'Reject', kind: 'reject_once' },
];

// Claude Code and the bypass-permissions mode when it runs as root.
//
// Claude's adapter (0.101.0) asks Claude Code for bypass-permissions support on every session by
// default, so that the mode is on offer; Claude Code refuses to start that way as root outside a
// sandbox ("--dangerously-skip-permissions cannot be used with root/sudo privileges"). The adapter
// only checks that IS_SANDBOX is set at all, Claude Code that it is exactly "1", so IS_SANDBOX=true
// ends in that refusal at session/new. Ultraplan plans read-only and never needs the mode unless
// the person chose it for after approval, so it opts the session out of it (the adapter's
// `_meta.claudeCode.options.allowDangerouslySkipPermissions: false`, read from its session/new).
// When the person did choose it, the refusal is said before the session starts, with the fix.
import type { AfterApproval } from '../../core/agentSettings';

/** session/new's `_meta` for Claude's adapter: no bypass-permissions support unless it is wanted. */
export function claudeSessionMeta(afterApproval: AfterApproval): Record<string, unknown> | undefined {
  if (afterApproval === 'bypassPermissions') return undefined;
  return { claudeCode: { options: { allowDangerouslySkipPermissions: false } } };
}

export interface ProcessIdentity {
  /** The effective uid, or undefined where there is none (Windows). */
  uid: number | undefined;
  env: Readonly<Record<string, string | undefined>>;
}

/** True when Claude Code refuses bypass permissions here: root, and not in a sandbox it accepts. */
export function claudeRefusesBypass(identity: ProcessIdentity): boolean {
  return identity.uid === 0 && identity.env.IS_SANDBOX !== '1' && !identity.env.CLAUDE_CODE_BUBBLEWRAP;
}

/** What to tell the person before a Claude session that would be refused starts; undefined when it would not be. */
export function claudeBypassProblem(afterApproval: AfterApproval, identity: ProcessIdentity): string | undefined {
  if (afterApproval !== 'bypassPermissions' || !claudeRefusesBypass(identity)) return undefined;
  return (
    'ultraplan.afterApproval is "bypassPermissions", and Claude Code refuses to bypass permissions when it runs as root ' +
    'outside a sandbox. Choose "acceptEdits" or "default" for ultraplan.afterApproval, or, only if this machine is a ' +
    'disposable sandbox (a container you throw away), start VS Code with IS_SANDBOX=1 in its environment.'
  );
}

/** The adapter's refusal at session/new, worded with its cause and fix; undefined for other errors. */
export function claudeStartupRefusal(error: unknown, afterApproval: AfterApproval): string | undefined {
  const data = (error as { data?: { startupFailureReason?: unknown } } | null)?.data;
  if (data?.startupFailureReason !== 'bypass_root') return undefined;
  return (
    claudeBypassProblem(afterApproval, { uid: 0, env: {} }) ??
    'Claude Code refused to start: it does not bypass permissions as root outside a sandbox (IS_SANDBOX must be exactly "1").'
  );
}

export function currentProcessIdentity(): ProcessIdentity {
  return { uid: process.geteuid?.() ?? process.getuid?.(), env: process.env };
}

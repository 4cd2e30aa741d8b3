// Whether the running local service's agents would run with this window's environment
// (docs/service.md, "A window with another environment"): the service's fingerprint (in
// `/v1/service`) against this window's, hashed with the service's salt, so only names are compared
// and told, never values.
import { envDifferences, envFingerprint } from '../../core/envFingerprint';
import type { SandboxMode, ServiceStatus } from '../../core/serviceStatus';
import { AGENT_ENV_NAMES } from '../../agents/catalogue/agentEnvNames';

export interface EnvironmentMismatch {
  /** The variables whose values differ (or are set on one side only), by name. */
  differing: string[];
  /** HOME differs: the service keeps its sessions under the HOME it was started for, not this window's. */
  home: boolean;
  /** Sessions whose agent works or whose plan waits: the service is not stopped under them. */
  liveSessions: number;
}

/** null when the environments match, or the service publishes no fingerprint (an older version). */
export async function environmentMismatch(
  status: ServiceStatus,
  env: Readonly<Record<string, string | undefined>>,
): Promise<EnvironmentMismatch | null> {
  const theirs = status.environment;
  if (!theirs) return null;
  const differing = envDifferences(theirs, await envFingerprint(env, AGENT_ENV_NAMES, theirs.salt));
  if (differing.length === 0) return null;
  return { differing, home: differing.includes('HOME'), liveSessions: status.live_sessions };
}

/** What a person reads: which variables, what it means for their agents and sessions. */
export function describeMismatch(mismatch: EnvironmentMismatch): string {
  const names = mismatch.differing.join(', ');
  const parts = [`The Ultraplan session service was started from another environment than this window's (different: ${names}).`];
  if (mismatch.home) parts.push("Its sessions are stored under the HOME it was started for, not this window's.");
  parts.push(
    mismatch.liveSessions > 0
      ? `${mismatch.liveSessions} session(s) are live on it, so it keeps running: agents started from this window would run with that other environment. It can restart once nothing is live.`
      : "Restart it to run this window's agents with this window's environment.",
  );
  return parts.join(' ');
}

/** The running service's sandbox choice against this window's (ultraplan.localService.sandbox). */
export interface SandboxMismatch {
  running: SandboxMode;
  wanted: SandboxMode;
  /** Whether its agents run in a sandbox now. */
  sandboxed: boolean;
  liveSessions: number;
}

/** null when the choices match, or the service publishes none (an older version). */
export function sandboxMismatch(status: ServiceStatus, wanted: SandboxMode): SandboxMismatch | null {
  const theirs = status.sandbox;
  if (!theirs || theirs.mode === wanted) return null;
  return { running: theirs.mode, wanted, sandboxed: theirs.sandboxed, liveSessions: status.live_sessions };
}

/** What a person reads; `advice` false when the environment's text (which gives it) follows. */
export function describeSandboxMismatch(mismatch: SandboxMismatch, advice = true): string {
  const first = `The Ultraplan session service was started with ultraplan.localService.sandbox "${mismatch.running}" (its agents run ${
    mismatch.sandboxed ? 'in a sandbox of their own' : 'unsandboxed, with your permissions'
  }), and this window asks for "${mismatch.wanted}".`;
  if (!advice) return first;
  return `${first} ${
    mismatch.liveSessions > 0
      ? `${mismatch.liveSessions} session(s) are live on it, so it keeps running: agents started from this window would run as it does. It can restart once nothing is live.`
      : "Restart it to run this window's agents as this window asks."
  }`;
}

/** How the service's agents run, in a sentence (the log, Show Session Service Status). */
export function describeServiceSandbox(status: ServiceStatus): string {
  const sandbox = status.sandbox;
  if (!sandbox) return 'This service does not say whether its agents are sandboxed (an older version).';
  if (sandbox.sandboxed)
    return 'Each agent runs in a sandbox of its own (its workspace, its own HOME and temp folder, its model API only).';
  if (sandbox.mode === 'off') return 'Agents run unsandboxed, with your permissions: ultraplan.localService.sandbox is "off".';
  return `Agents run unsandboxed, with your permissions: ${sandbox.reason ?? 'this machine cannot sandbox them'}`;
}

export interface SandboxNotice {
  /** For the log, on every connection. */
  line: string;
  /** The agents run unsandboxed though the window asked for a sandbox. */
  warning: boolean;
  /** Said once per reason: absent when the person was told this reason already. */
  notice?: string;
  /** The reasons told, with this one (the last few kept). */
  told: string[];
}

/** What a window says of the service's sandbox; `told`: the reasons the person was already told of. */
export function sandboxNotice(status: ServiceStatus, told: readonly string[]): SandboxNotice {
  const line = describeServiceSandbox(status);
  const sandbox = status.sandbox;
  if (!sandbox || sandbox.sandboxed || sandbox.mode === 'off') return { line, warning: false, told: [...told] };
  const reason = sandbox.reason ?? 'this machine cannot sandbox them';
  if (told.includes(reason)) return { line, warning: true, told: [...told] };
  return {
    line,
    warning: true,
    notice: `Ultraplan: agents run without a sandbox on this machine, with your permissions. ${reason}`,
    told: [...told, reason].slice(-10),
  };
}

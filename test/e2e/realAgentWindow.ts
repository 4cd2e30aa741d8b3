// Shared by the e2e suites that run a real agent (only its model scripted) as the embedded agent.
import { rmSync } from 'node:fs';
import type { TestWindow } from './harness';
import { killGroupsLeft, processesWithHome } from '../support/processes';
import type { ScriptedModelServer } from '../support/modelApi/scenario';

/**
 * The real-agent windows run their agent unsandboxed (ultraplan.localService.sandbox "off"): its
 * command sets HOME to a throwaway folder of the test's, where the test writes the agent's settings
 * and finds its processes by their HOME. A sandbox shows no such folder (the path lands in the
 * sandbox's own /tmp), and the agent's conversation kept there is gone when Approve restarts it in
 * a writable sandbox. The sandboxed local service is tested without that override:
 * test/client/localService/sandboxedService.test.ts, test/agents/sandbox/serverClaudeSandboxed.test.ts.
 */
export const UNSANDBOXED_AGENT = { 'ultraplan.localService.sandbox': 'off' } as const;

/** The agent as the custom command: `env` sets its model's address and a throwaway home, then execs it; edits accepted after approval. */
export function realAgentSettings(env: Record<string, string>, argv: readonly string[]): Record<string, unknown> {
  return {
    'ultraplan.backend': 'embedded',
    'ultraplan.agent.choice': 'custom',
    'ultraplan.agent.command': ['/usr/bin/env', ...Object.entries(env).map(([key, value]) => `${key}=${value}`), ...argv],
    'ultraplan.afterApproval': 'acceptEdits',
    ...UNSANDBOXED_AGENT,
  };
}

/** For after(): the window, every process of the agent (found by its home), the scripted model, the home. */
export async function closeRealAgentRun(window: TestWindow | undefined, home: string, model: ScriptedModelServer): Promise<void> {
  await window?.close();
  killGroupsLeft(processesWithHome(home));
  await model.close();
  rmSync(home, { recursive: true, force: true });
}

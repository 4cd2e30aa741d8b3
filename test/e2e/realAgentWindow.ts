// Shared by the e2e suites that run a real agent (only its model scripted) as the embedded agent.
import { rmSync } from 'node:fs';
import type { TestWindow } from './harness';
import { killGroupsLeft, processesWithHome } from '../support/processes';
import type { ScriptedModelServer } from '../support/modelApi/scenario';

/** The agent as the custom command: `env` sets its model's address and a throwaway home, then execs it; edits accepted after approval. */
export function realAgentSettings(env: Record<string, string>, argv: readonly string[]): Record<string, unknown> {
  return {
    'ultraplan.backend': 'embedded',
    'ultraplan.agent.choice': 'custom',
    'ultraplan.agent.command': ['/usr/bin/env', ...Object.entries(env).map(([key, value]) => `${key}=${value}`), ...argv],
    'ultraplan.afterApproval': 'acceptEdits',
  };
}

/** For after(): the window, every process of the agent (found by its home), the scripted model, the home. */
export async function closeRealAgentRun(window: TestWindow | undefined, home: string, model: ScriptedModelServer): Promise<void> {
  await window?.close();
  killGroupsLeft(processesWithHome(home));
  await model.close();
  rmSync(home, { recursive: true, force: true });
}

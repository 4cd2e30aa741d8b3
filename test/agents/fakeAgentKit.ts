// The fake ACP agent (test/support/fakeAcpAgent.ts) behind the real session host: its factory as
// the host tests start it, the check after each test that no agent process is left behind, and
// the session model the editor would make of a session's log.
import { strict as assert } from 'node:assert';
import { createAcpAgentFactory } from '../../src/agents/acp/acpAgentFactory';
import type { AcpAgentOptions } from '../../src/agents/acp/acpAgentOptions';
import type { AgentFactory } from '../../src/agents/agent';
import { startChecklist } from '../../src/core/execution/startChecklist';
import { parseEventBatch } from '../../src/core/eventBatch';
import type { AnyEvent } from '../../src/core/protocol';
import { SessionModel } from '../../src/core/sessionModel';
import { readAgentRecord, type FakeRun } from '../support/fakeAcpAgent';
import { waitGone } from '../support/processes';
import { TEST_IDENTITY } from '../support/sessionEvents';

/** The fake agent's factory, run in the run's workspace, stopped with a short grace. */
export function fakeAgentFactory(run: FakeRun, options: Partial<AcpAgentOptions> = {}): Promise<AgentFactory> {
  return createAcpAgentFactory({ argv: run.argv, cwd: run.workspace, label: 'Fake (ACP)', stopGraceMs: 500, ...options });
}

/** Every agent process the run started has exited; then the run's files go. */
export async function endFakeRun(run: FakeRun | undefined): Promise<void> {
  if (!run) return;
  for (const entry of readAgentRecord(run.record).filter((e) => e.kind === 'started')) {
    assert.ok(await waitGone(entry.pid as number), `agent ${String(entry.pid)} left behind`);
  }
  await run.cleanup();
}

/** The editor's path: the log parsed once, the scanner, the one reducer, with the plan-steps reader. */
export function modelOfLog(events: readonly AnyEvent[]): SessionModel {
  const model = new SessionModel({
    identity: TEST_IDENTITY,
    initialPhase: 'planning',
    cursor: null,
    at: 0,
    planSteps: () => startChecklist,
  });
  const batch = parseEventBatch(events);
  model.scanner.ingestParsed(batch);
  model.reduce({
    type: 'poll',
    poll: { batch, status: 'idle', cursor: (events.at(-1) as { id?: string } | undefined)?.id ?? null },
    at: 1,
  });
  return model;
}

// A session from a plan file over the wire, against the real server process with the scripted
// agent: the extension's HttpBackend creates it (the plan and its hash survive both create forms),
// the poller shows the file's plan as the plan to review, and Approve through the wire ends in the
// approved plan, carried out by the agent; a plan whose hash is not its own is refused with 400.
import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { SessionsError } from '../../src/core/errors';
import { planHash } from '../../src/core/decision';
import { pollForApprovedPlan } from '../../src/core/poller';
import { PLAN_FILE_SUBTYPE, planFileOf, planFileSessionRequest } from '../../src/core/planFileSession';
import { serverForSuite } from '../support/serverProcess';
import { clientRig, rawEvents, scenario, scriptedReviewer, type Rig } from './clientHarness';
import { watchPhases } from '../support/pollPhases';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy';
import { waitFor } from '../support/wait';

const PLAN = '# Rename the flag\n\n1. Rename `--old` to `--new` in src/cli.ts.\n2. Update the README.\n';
const SOURCE = '.copilot/plans/plan-rename-flag.md';

describe('A session from a plan file, against the real server', function () {
  this.timeout(60_000);
  const server = serverForSuite({ scenario: scenario('approve') });
  let proxy: FaultProxy | undefined;
  let rig: Omit<Rig, 'close'> | undefined;
  beforeEach(async () => {
    proxy = await startFaultProxy({ target: server.url });
    rig = clientRig(server, proxy, { mode: 'polling' });
  });
  afterEach(async () => {
    await rig?.backend.dispose();
    await proxy?.close();
  });

  it('reviews the file plan first; Approve over the wire carries it out and the poller reads it approved', async () => {
    const { id } = await rig!.backend.createSession(planFileSessionRequest(planFileOf(PLAN, SOURCE), 'ultraplan: rename', randomUUID));
    const seen: string[] = [];
    const reviewer = scriptedReviewer(rig!.client, id, [
      {
        on: 'plan_ready',
        decide: (plan) => {
          seen.push(plan);
          return { behavior: 'allow', updatedInput: { plan } };
        },
      },
    ]);
    const approved = await pollForApprovedPlan({
      sessionId: id,
      transport: rig!.backend.transport,
      pollIntervalMs: 100,
      timeoutMs: 20_000,
      ...watchPhases(reviewer.onPhase),
    });
    await reviewer.settled();
    assert.deepEqual(reviewer.failures, []);
    assert.deepEqual(seen, [PLAN], 'the panel is shown the file plan, exactly');
    assert.equal(approved.plan.trimEnd(), PLAN.trimEnd());
    const events = await waitFor(() => rawEvents(rig!.client, id), {
      message: 'the carried-out turn to end',
      timeoutMs: 10_000,
      until: (log) => log.some((e) => e.type === 'result' && e.subtype === 'success'),
    });
    const origin = events.find((e) => e.type === 'system' && e.subtype === PLAN_FILE_SUBTYPE);
    assert.equal(origin?.plan_hash, planHash(PLAN));
    assert.equal(origin?.source, SOURCE);
    assert.ok(
      events.some((e) => e.type === 'system' && e.subtype === 'init' && e.permissionMode === 'default'),
      'the agent started after the approval, out of plan mode',
    );
  });

  it('refuses a plan whose SHA-256 is not its own with 400, and creates nothing', async () => {
    const request = planFileSessionRequest({ ...planFileOf(PLAN, SOURCE), sha256: planHash('another') }, 'ultraplan: x', randomUUID);
    const before = (await rig!.client.listSessions()).length;
    await assert.rejects(rig!.backend.createSession(request), (err: unknown) => {
      assert.ok(err instanceof SessionsError, String(err));
      assert.equal(err.status, 400);
      assert.match(err.message, /sha256 is not the SHA-256 of the plan sent/);
      return true;
    });
    assert.equal((await rig!.client.listSessions()).length, before);
  });
});

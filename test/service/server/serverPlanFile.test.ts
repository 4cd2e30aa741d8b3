// Review Plan File on the team server: a session created from a plan file (core/planFileSession.ts)
// on two real replicas and two real workers over one real PostgreSQL database. The plan is
// stored with its hash as the host's ExitPlanMode request and no agent runs while it waits (the
// worker that claims it holds it); a decision sent to the other replica starts the worker's agent
// once: Approve carries out exactly the approved text (bound to its hash), Reject with comments
// revises it in plan mode. A worker killed before the decision leaves the plan to the other,
// still waiting. A plan_file that is not its hash's is refused and creates nothing.
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { planHash } from '../../../src/core/decision';
import { formatRejectFeedback } from '../../../src/core/feedback';
import { ExitPlanModeScanner } from '../../../src/core/scanner';
import { approvedPlan } from '../../../src/core/executionProgress';
import { PLAN_FILE_SUBTYPE, planFileOf, planFileSessionRequest } from '../../../src/core/planFileSession';
import { APPROVED_PLAN_MARKER, AGENT_LOST_SUBTYPE, controlResponseEvent, type CreateSessionRequest } from '../../../src/core/protocol';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { EXAMPLES_DIR, startServer, startWorker, type ServerProcess, type WorkerProcess } from '../../support/serverProcess';
import { waitFor } from '../../support/wait';
import { pendingPlanRequest, toolResults, types } from '../hostTestKit';
import { allEvents, assertError, call, waitForStatus } from './serverTestKit';

const LEASE_MS = 2_000;
const PLAN = '# Add a changelog\n\n1. Create CHANGELOG.md with the 1.0 entry.\n2. Link it from README.md.\n';
const SOURCE = '.copilot/plans/plan-changelog.md';

let ids = 0;
function planFileRequest(planFile: Record<string, unknown> = planFileOf(PLAN, SOURCE)): CreateSessionRequest {
  return {
    ...planFileSessionRequest(planFileOf(PLAN, SOURCE), 'ultraplan: changelog', () => `t${++ids}`),
    plan_file: planFile,
    session_context: { sources: [], outcomes: [], model: 'scripted' },
  };
}

describe('ultraplan-server: a session from a plan file on PostgreSQL (two replicas, two workers)', function () {
  this.timeout(120_000);
  let database: string;
  let replicas: ServerProcess[] = [];
  let workers: WorkerProcess[] = [];
  const token = randomUUID();
  const replica = (i: number) => replicas[i] as ServerProcess;

  beforeEach(async () => {
    database = await (await sharedPostgresCluster()).createDatabase();
    replicas = await Promise.all([0, 1].map(() => startServer({ store: database, token })));
    workers = await Promise.all(
      ['worker_a', 'worker_b'].map((workerId) =>
        startWorker({ store: database, agent: `scripted:${path.join(EXAMPLES_DIR, 'approve.json')}`, leaseMs: LEASE_MS, workerId }),
      ),
    );
  });
  afterEach(async () => {
    await Promise.all([...replicas, ...workers].map((p) => p.stop()));
  });

  const create = async (): Promise<string> => {
    const answer = await call(replica(0), 'POST', '/v1/sessions', planFileRequest());
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.body.id as string;
  };
  /** Waits until a worker holds the session; the index of the one that does. */
  const claimedBy = (id: string): Promise<number> =>
    waitFor(() => workers.findIndex((w) => w.stderr().includes(`claimed session ${id}`)), {
      message: `a worker to claim ${id}`,
      timeoutMs: 20_000,
      until: (index) => index >= 0,
    });
  const decide = (on: number, id: string, requestId: string, decision: Parameters<typeof controlResponseEvent>[1]) =>
    call(replica(on), 'POST', `/v1/sessions/${id}/events`, { events: [controlResponseEvent(requestId, decision)] });
  const said = (log: any[], text: string) =>
    log.filter((e) => e.type === 'assistant' && JSON.stringify(e.message?.content ?? '').includes(text)).length;
  const untilSaid = (id: string, text: string) =>
    waitFor(() => allEvents(replica(0), id), {
      message: `"${text}" in ${id}`,
      timeoutMs: 30_000,
      until: (log) => said(log, text) > 0,
    });

  it('holds the plan with its hash and runs no agent; Approve on the other replica releases one agent that carries it out', async () => {
    const id = await create();
    await waitForStatus(replica(1), id, 'requires_action');
    await claimedBy(id);
    // The worker holds the session: time it would need to start an agent, if it wrongly did.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const before = await allEvents(replica(1), id);
    assert.deepEqual(types(before), ['control_request', 'user', 'system', 'assistant', 'control_request']);
    const origin = before.find((e) => e.subtype === PLAN_FILE_SUBTYPE);
    assert.equal(origin.source, SOURCE);
    assert.equal(origin.plan_hash, planHash(PLAN));
    const pending = pendingPlanRequest(before);
    assert.equal(pending.plan, PLAN, 'the review shows exactly the file text');
    await waitForStatus(replica(0), id, 'requires_action');

    const approved = await decide(1, id, pending.requestId, { behavior: 'allow', updatedInput: { plan: PLAN } });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    const again = await decide(0, id, pending.requestId, { behavior: 'allow', updatedInput: { plan: PLAN } });
    assertError(again, 409, 'conflict_error', /already answered/);

    const log = await untilSaid(id, 'Done.');
    await waitForStatus(replica(0), id, 'idle', 20_000);
    const after = await allEvents(replica(0), id);
    assert.equal(said(after, 'Done.'), 1, 'the agent carried the plan out once');
    const init = after.filter((e) => e.type === 'system' && e.subtype === 'init');
    assert.equal(init.length, 1, 'one agent started');
    assert.equal(init[0].permissionMode, 'default', 'out of plan mode');
    const [result] = toolResults(log, pending.toolUseId);
    assert.ok(result && !result.isError && result.text.includes(`${APPROVED_PLAN_MARKER}${PLAN}`), JSON.stringify(result));
    const scanner = new ExitPlanModeScanner();
    scanner.ingest(after);
    assert.equal(scanner.revisions.length, 1);
    const revision = scanner.revisions[0]!;
    assert.equal(revision.outcome.kind, 'approved');
    assert.equal(planHash(approvedPlan(revision)!), planHash(PLAN), 'the approval is bound to the reviewed text');
    assert.ok(!after.some((e) => e.subtype === AGENT_LOST_SUBTYPE), 'no agent was lost: none had run');
  });

  it('Reject with line comments: a worker agent revises it in plan mode and its revision waits in the same session', async () => {
    const id = await create();
    await waitForStatus(replica(0), id, 'requires_action');
    const pending = pendingPlanRequest(await allEvents(replica(0), id));
    const feedback = formatRejectFeedback(PLAN, 'Keep the README untouched.', [{ startLine: 4, endLine: 4, text: 'No link here.' }]);
    const rejected = await decide(1, id, pending.requestId, { behavior: 'deny', message: feedback });
    assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
    const log = await waitFor(() => allEvents(replica(0), id), {
      message: 'the revised plan',
      timeoutMs: 30_000,
      until: (events) => events.filter((e) => e.type === 'control_request' && e.request?.tool_name === 'ExitPlanMode').length === 2,
    });
    const init = log.find((e) => e.type === 'system' && e.subtype === 'init');
    assert.equal(init?.permissionMode, 'plan', 'the revising turn plans');
    const [result] = toolResults(log, pending.toolUseId);
    assert.ok(result?.isError && result.text === feedback, 'the feedback closes the file plan whole');
    const scanner = new ExitPlanModeScanner();
    scanner.ingest(log);
    assert.deepEqual(
      scanner.revisions.map((r) => r.outcome.kind),
      ['rejected', 'pending'],
    );
    await waitForStatus(replica(1), id, 'requires_action', 20_000);
  });

  it('a worker killed before the decision: the other claims the session, the plan still waits, and Approve carries it out once', async () => {
    const id = await create();
    const holder = await claimedBy(id);
    const other = workers[1 - holder] as WorkerProcess;
    await (workers[holder] as WorkerProcess).kill();
    await waitFor(() => other.stderr(), {
      message: 'the other worker to take the session over',
      timeoutMs: 20_000,
      until: (stderr) => new RegExp(`claimed session ${id} \\(epoch 2\\)`).test(stderr),
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = await allEvents(replica(1), id);
    assert.deepEqual(types(before), ['control_request', 'user', 'system', 'assistant', 'control_request'], 'nothing written on takeover');
    await waitForStatus(replica(1), id, 'requires_action');
    const pending = pendingPlanRequest(before);
    const approved = await decide(0, id, pending.requestId, { behavior: 'allow', updatedInput: { plan: PLAN } });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    await untilSaid(id, 'Done.');
    await waitForStatus(replica(1), id, 'idle', 20_000);
    const after = await allEvents(replica(1), id);
    assert.equal(said(after, 'Done.'), 1);
    assert.equal(after.filter((e) => e.subtype === 'init').length, 1);
  });

  it('refuses a plan_file whose sha256 is not its plan, an empty plan and an unknown field with 400, creating nothing', async () => {
    const refused = async (planFile: Record<string, unknown>, message: RegExp) =>
      assertError(await call(replica(0), 'POST', '/v1/sessions', planFileRequest(planFile)), 400, 'invalid_request_error', message);
    await refused({ ...planFileOf(PLAN, SOURCE), sha256: planHash('another plan') }, /sha256 is not the SHA-256 of the plan sent/);
    await refused({ plan: ' \n', sha256: planHash(' \n'), source: SOURCE }, /the plan is empty/);
    await refused({ ...planFileOf(PLAN, SOURCE), extra: 1 }, /extra/);
    const list = await call(replica(1), 'GET', '/v1/sessions');
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data, []);
  });
});

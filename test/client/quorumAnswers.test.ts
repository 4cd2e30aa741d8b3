// A team server's answers to an approval under a quorum, through the real client and a real
// followed session on real HTTP (127.0.0.1): a 202 with the state is "counted, waiting for more",
// not a decision sent to the agent; a 403 `approval_refused` is told as such, and a reject still
// goes out.
import { strict as assert } from 'node:assert';
import { HttpBackend } from '../../src/client/httpBackend';
import { SessionsClient } from '../../src/client/sessionsClient';
import { serverErrorReason } from '../../src/client/sessionsHttp';
import { bindingFor, planHash } from '../../src/core/decision';
import { SessionsError } from '../../src/core/errors';
import { approvalEvent, type ApprovalState } from '../../src/core/planApprovals';
import type { FollowedSession } from '../../src/extension/sessions/followedSession';
import { followSession } from '../support/followedSession';
import { exitPlan, toolRequest } from '../support/sessionEvents';
import { waitFor } from '../support/wait';
import { startWireTestServer, type WireTestServer } from './wireTestServer';

const PLAN = '# Plan\n\n1. Add the toggle';
const ALREADY = 'you already approved this exact plan text';

function counted(names: string[]): ApprovalState {
  return {
    request_id: 'req_1',
    plan_hash: planHash(PLAN),
    approvers: names.map((name) => ({ id: `user-${name}`, name })),
    required: 2,
    group: 'platform-reviewers',
    released: false,
  };
}

const HELLO = { type: 'user' as const, message: { role: 'user' as const, content: 'hi' } };

const behaviorOf = (payload: Record<string, unknown>): unknown =>
  (payload.response as { response?: { behavior?: unknown } } | undefined)?.response?.behavior;

describe('approvals under a quorum: the client and the decision path (real HTTP)', function () {
  this.timeout(20_000);
  let server: WireTestServer;
  let client: SessionsClient;
  let session: FollowedSession | undefined;

  beforeEach(async () => {
    server = await startWireTestServer();
    client = new SessionsClient({ baseUrl: server.url, getToken: async () => server.token, requestTimeoutMs: 2_000 });
  });
  afterEach(async () => {
    session?.dispose();
    await session?.settled();
    session = undefined;
    await server.close();
  });

  it('sendEvents hands back the state a 202 carries, nothing for a plain 200, and keeps the reason of a 403', async () => {
    server.addSession('cse_1');
    assert.deepEqual(await client.sendEvents('cse_1', [HELLO]), {});
    server.answerEvents = () => ({ status: 202, body: { results: [], approval: { ...counted(['alice']), summary: 'x', needed: [] } } });
    assert.deepEqual(await client.sendEvents('cse_1', [HELLO]), {
      approval: counted(['alice']),
    });
    server.answerEvents = () => ({ status: 202, body: { results: [], approval: { request_id: 'req_1' } } });
    await assert.rejects(client.sendEvents('cse_1', [HELLO]), (err) => err instanceof SessionsError && err.kind === 'bad_response');
    server.answerEvents = () => ({
      status: 403,
      body: { type: 'error', error: { type: 'permission_error', message: ALREADY, reason: 'approval_refused' } },
    });
    await assert.rejects(client.sendEvents('cse_1', [HELLO]), (err) => {
      assert.equal(serverErrorReason(err), 'approval_refused');
      assert.match(String(err), /refused the request \(HTTP 403: you already approved/);
      return true;
    });
  });

  it("a 202 leaves the plan pending with the summary and Approve marked mine; a second approval is refused in the server's words; Reject goes out", async () => {
    const wire = server.addSession('cse_2', 'requires_action');
    server.append('cse_2', exitPlan('toolu_1', PLAN), toolRequest('req_1', 'toolu_1', 'ExitPlanMode', { plan: PLAN }));
    const approvals: string[] = [];
    server.answerEvents = (_s, payloads) => {
      const first = payloads[0];
      if (!first || first.type !== 'control_response' || behaviorOf(first) !== 'allow') return undefined;
      if (approvals.length > 0) {
        return { status: 403, body: { type: 'error', error: { type: 'permission_error', message: ALREADY, reason: 'approval_refused' } } };
      }
      approvals.push('alice');
      // As the team server does: the count is in the log, and in the answer.
      server.append('cse_2', approvalEvent(counted(['alice'])));
      return { status: 202, body: { results: [], approval: { ...counted(['alice']), summary: 'x', needed: [] } } };
    };
    session = followSession(new HttpBackend({ client, preferStream: false }), 'cse_2', 15_000);
    const s = session;
    await waitFor(() => s.canDecide, { message: 'a plan to decide', timeoutMs: 10_000 });
    const binding = bindingFor('cse_2', 'toolu_1', PLAN);

    assert.deepEqual(await s.decisions.approve(binding), { sent: true });
    assert.equal(s.snapshot.state.phase, 'plan_ready', 'counted, not sent: the agent has nothing yet');
    assert.equal(s.snapshot.panel.revisions.at(-1)?.status, 'pending');
    assert.deepEqual(s.snapshot.panel.approval, {
      summary: '1 of 2 approvals: alice; waiting for one more from platform-reviewers',
      mine: true,
    });
    assert.equal(s.snapshot.inbox.approval, '1 of 2 approvals: alice; waiting for one more from platform-reviewers');
    assert.equal(s.snapshot.panel.notice?.level, 'info');
    assert.equal(wire.events.filter((e) => e.type === 'control_response').length, 0, 'no answer to the agent is stored');

    const again = await s.decisions.approve(binding);
    assert.equal(again.sent, false);
    assert.match(again.sent ? '' : again.message, new RegExp(`^Your approval was not counted: .*HTTP 403: ${ALREADY}`));
    assert.equal(s.snapshot.panel.notice?.level, 'warning');
    assert.match(s.snapshot.panel.notice?.text ?? '', /not counted/);
    assert.doesNotMatch(s.snapshot.panel.notice?.text ?? '', /token/);
    assert.equal(s.snapshot.state.canDecide, true, 'released: the plan can still be rejected');

    assert.deepEqual(await s.decisions.reject(binding, 'Not this way', []), { sent: true });
    assert.equal(behaviorOf(wire.events.filter((e) => e.type === 'control_response').at(-1) ?? {}), 'deny');
  });
});

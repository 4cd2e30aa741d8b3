// Approvals by a quorum on the team server: two real replicas and a worker on one real PostgreSQL,
// per-user tokens from a stand-in OIDC issuer. Sessions of platform-reviewers need two approvals
// from its members, the creator not counting. Who cannot approve is told why (403); an approval
// short of the quorum is a 202 with the state, stored as a plan_approval event every client
// reads; an edited text is counted apart; and two approvals completing the quorum at once on two
// replicas let the agent go exactly once, over many sessions.
import { strict as assert } from 'node:assert';
import { Client } from 'pg';
import { controlResponseEvent, userMessageEvent } from '../../../src/core/protocol';
import { notesPrompt } from '../../../src/core/approvalNotes';
import { approvalOf } from '../../../src/core/planApprovals';
import { planHash } from '../../../src/core/decision';
import { planFileOf, planFileSessionRequest } from '../../../src/core/planFileSession';
import { randomUUID } from 'node:crypto';
import { SessionsError } from '../../../src/core/errors';
import { SessionsHttp } from '../../../src/client/sessionsHttp';
import { startOidcIssuer, type OidcIssuer } from '../../support/oidcIssuer';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { waitFor } from '../../support/wait';
import { EXAMPLES_DIR, startServer, startWorker, type ServerProcess, type WorkerProcess } from '../../support/serverProcess';
import { createRequest } from '../hostTestKit';
import { call, type Answer } from './serverTestKit';

const GROUP = 'platform-reviewers';
/** Sessions whose two approvals are fired at once, each pair on the two replicas. */
const CONCURRENT_ITERATIONS = 40;
const AT_ONCE = 10;

describe('ultraplan-server approvals by a quorum (two replicas, PostgreSQL)', function () {
  this.timeout(300_000);
  let issuer: OidcIssuer;
  let users: Record<'alice' | 'bob' | 'carol' | 'dave', string>;
  let replicas: ServerProcess[] = [];
  let worker: WorkerProcess | undefined;
  let database: string;

  before(async () => {
    issuer = await startOidcIssuer();
    users = {
      alice: await issuer.token('user-alice', { email: 'alice@example.com', groups: [GROUP, 'engineering'] }),
      bob: await issuer.token('user-bob', { email: 'bob@example.com', groups: [GROUP] }),
      carol: await issuer.token('user-carol', { email: 'carol@example.com', groups: [GROUP] }),
      dave: await issuer.token('user-dave', { email: 'dave@example.com', groups: ['engineering'] }),
    };
    database = await (await sharedPostgresCluster()).createDatabase();
    const args = [
      '--oidc-issuer',
      issuer.url,
      '--oidc-audience',
      issuer.audience,
      '--oidc-review-groups',
      `${GROUP},engineering`,
      '--require-approvals',
      `${GROUP}=2`,
      '--creator-approval-counts',
      'false',
      // One user creates every session of this file, each waiting on its plan at once.
      '--max-live-per-user',
      '100',
    ];
    replicas = await Promise.all([0, 1].map(() => startServer({ store: database, extraArgs: args })));
    // Sessions stay claimed once idle: room for every session of this file.
    worker = await startWorker({ store: database, agent: `scripted:${EXAMPLES_DIR}/approve.json`, extraArgs: ['--max-sessions', '100'] });
  });
  after(async () => {
    await Promise.all([...replicas.map((r) => r.stop()), worker?.stop()]);
    await issuer.close();
  });

  const as = (replica: number, token: string, method: string, path: string, body?: unknown): Promise<Answer> => {
    const server = replicas[replica % replicas.length] as ServerProcess;
    return call(server, method, path, body, { headers: server.headers({ authorization: `Bearer ${token}` }) });
  };
  const events = async (id: string): Promise<any[]> => {
    const page = await as(0, users.alice, 'GET', `/v1/sessions/${id}/events?limit=1000`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    return page.body.data;
  };
  const planOf = async (id: string): Promise<{ requestId: string; plan: string }> => {
    const request = await waitFor(
      async () => (await events(id)).find((e) => e.type === 'control_request' && e.request?.subtype === 'can_use_tool'),
      {
        message: `the plan request of ${id}`,
        timeoutMs: 60_000,
      },
    );
    return { requestId: request.request_id, plan: request.request.input.plan };
  };
  const create = async (): Promise<string> => {
    const answer = await as(0, users.alice, 'POST', '/v1/sessions', createRequest('Plan the changelog'));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.body.id;
  };
  const approve = (replica: number, token: string, id: string, requestId: string, plan: string) =>
    as(replica, token, 'POST', `/v1/sessions/${id}/events`, {
      events: [controlResponseEvent(requestId, { behavior: 'allow', updatedInput: { plan } })],
    });
  const allows = (log: any[]) => log.filter((e) => e.type === 'control_response' && e.response?.response?.behavior === 'allow');
  const said = (log: any[], text: string) =>
    log.filter((e) => e.type === 'assistant' && JSON.stringify(e.message?.content ?? '').includes(text)).length;
  /** The log once the agent said "Done." (it carried the plan out). */
  const carriedOut = (id: string, message: string, timeoutMs = 60_000): Promise<any[]> =>
    waitFor(
      async () => {
        const now = await events(id);
        return said(now, 'Done.') > 0 ? now : undefined;
      },
      { message, timeoutMs },
    );

  it('counts distinct approvers of one exact text; tells each refused person why; releases the plan once', async () => {
    const id = await create();
    const { requestId, plan } = await planOf(id);

    const creator = await approve(0, users.alice, id, requestId, plan);
    assert.equal(creator.status, 403, JSON.stringify(creator.body));
    assert.match(creator.body.error.message, /does not count the session's creator/);
    assert.equal(creator.body.error.reason, 'approval_refused');
    // The extension's own client words it as a refused request with the server's reason, not as a refused token.
    const extension = new SessionsHttp({
      baseUrl: (replicas[0] as ServerProcess).url,
      getToken: async () => users.alice,
      requestTimeoutMs: 10_000,
      userAgent: 'ultraplan-test',
      fetch,
    });
    await assert.rejects(
      extension.json({
        method: 'POST',
        path: `/v1/sessions/${id}/events`,
        body: { events: [controlResponseEvent(requestId, { behavior: 'allow', updatedInput: { plan } })] },
      }),
      (err: unknown) =>
        err instanceof SessionsError &&
        /refused the request \(HTTP 403: this server does not count the session's creator/.test(err.message),
    );
    const outsider = await approve(1, users.dave, id, requestId, plan);
    assert.equal(outsider.status, 403, JSON.stringify(outsider.body));
    assert.match(outsider.body.error.message, /approved by members of platform-reviewers/);

    const first = await approve(1, users.bob, id, requestId, plan);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.equal(first.body.approval.summary, '1 of 2 approvals: bob@example.com; waiting for one more from platform-reviewers');
    assert.deepEqual(first.body.approval.needed, ['1 more from platform-reviewers']);
    const again = await approve(0, users.bob, id, requestId, plan);
    assert.equal(again.status, 403);
    assert.match(again.body.error.message, /already approved this exact plan text/);

    // An edited text is another plan: its count starts with its editor.
    const edited = await approve(0, users.carol, id, requestId, `${plan}\n3. Tag a release.\n`);
    assert.equal(edited.status, 202, JSON.stringify(edited.body));
    assert.equal(edited.body.approval.summary, '1 of 2 approvals: carol@example.com; waiting for one more from platform-reviewers');

    const second = await approve(1, users.carol, id, requestId, plan);
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.approval.released, true);
    assert.equal(second.body.approval.summary, '2 of 2 approvals: bob@example.com, carol@example.com; approved');

    const log = await carriedOut(id, 'the agent to carry the plan out');
    assert.equal(allows(log).length, 1, 'one allow reached the agent');
    assert.equal(allows(log)[0].response.response.updatedInput.plan, plan);
    assert.equal(said(log, 'Done.'), 1);
    const states = log.map(approvalOf).filter((s) => s !== null);
    assert.deepEqual(
      states.map((s) => [s.approvers.map((a) => a.id), s.plan_hash === planHash(plan), s.released]),
      [
        [['user-bob'], true, false],
        [['user-carol'], false, false],
        [['user-bob', 'user-carol'], true, true],
      ],
    );

    const client = new Client({ connectionString: database });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT actor_sub, action FROM audit WHERE session_id = $1 ORDER BY id', [id]);
      assert.deepEqual(
        rows.map((r) => `${r.action}:${r.actor_sub}`),
        ['approve:user-bob', 'approve:user-carol', 'approve:user-carol', 'allow:user-carol'],
      );
    } finally {
      await client.end();
    }
  });

  it('a plan from a plan file (Review Plan File) counts like any plan: one approval holds it, the quorum releases its agent once', async () => {
    const PLAN = '# Rotate the keys\n\n1. Add the new key.\n2. Retire the old one.\n';
    const created = await as(0, users.alice, 'POST', '/v1/sessions', {
      ...planFileSessionRequest(planFileOf(PLAN, '.cursor/plans/keys.plan.md'), 'ultraplan: keys', () => randomUUID()),
      session_context: { sources: [], outcomes: [], model: 'scripted' },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id as string;
    const { requestId, plan } = await planOf(id);
    assert.equal(plan, PLAN);
    const first = await approve(1, users.bob, id, requestId, plan);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.equal(first.body.approval.plan_hash, planHash(PLAN), 'counted on the hash the file was stored with');
    // Held: no agent starts on one approval of two.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const held = await events(id);
    assert.equal(allows(held).length, 0);
    assert.ok(!held.some((e) => e.type === 'system' && e.subtype === 'init'), 'no agent runs before the quorum');
    const second = await approve(0, users.carol, id, requestId, plan);
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.approval.released, true);
    const log = await carriedOut(id, 'the agent to carry the plan file out');
    assert.equal(allows(log).length, 1, 'one allow');
    assert.equal(said(log, 'Done.'), 1);
    assert.equal(log.filter((e) => e.type === 'system' && e.subtype === 'init').length, 1, 'one agent started');
  });

  it("approve with notes: each approver's notes are held with the approval and follow the allow once the quorum releases it", async () => {
    const id = await create();
    const { requestId, plan } = await planOf(id);
    const withNotes = (replica: number, token: string, notes: string) =>
      as(replica, token, 'POST', `/v1/sessions/${id}/events`, {
        events: [controlResponseEvent(requestId, { behavior: 'allow', updatedInput: { plan } }), userMessageEvent(notesPrompt(notes))],
      });
    // Anything but user messages after the approval, or an approval not first, could slip past the count.
    for (const events of [
      [userMessageEvent('first'), controlResponseEvent(requestId, { behavior: 'allow', updatedInput: { plan } })],
      [
        controlResponseEvent(requestId, { behavior: 'allow', updatedInput: { plan } }),
        controlResponseEvent('other', { behavior: 'allow', updatedInput: {} }),
      ],
    ]) {
      const refused = await as(0, users.bob, 'POST', `/v1/sessions/${id}/events`, { events });
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.match(refused.body.error.message, /followed only by user messages/);
    }

    const first = await withNotes(1, users.bob, 'Keep the changelog short.');
    assert.equal(first.status, 202, JSON.stringify(first.body));
    const held = await events(id);
    assert.equal(
      held.filter((e) => e.type === 'user' && JSON.stringify(e.message).includes('Keep the changelog short')).length,
      0,
      'nothing reaches the session before the quorum',
    );

    const second = await withNotes(0, users.carol, 'Link it from the README too.');
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.approval.released, true);
    const log = await events(id);
    const allowAt = log.findIndex((e) => e.type === 'control_response' && e.response?.response?.behavior === 'allow');
    const notesAt = (text: string) => log.findIndex((e) => e.type === 'user' && JSON.stringify(e.message).includes(text));
    assert.ok(allowAt >= 0, 'the allow is stored');
    assert.deepEqual([notesAt('Keep the changelog short'), notesAt('Link it from the README too')], [allowAt + 1, allowAt + 2]);
    assert.equal(allows(log).length, 1);
  });

  it('a reject needs no quorum: its feedback goes to the agent at once', async () => {
    const id = await create();
    const { requestId } = await planOf(id);
    const denied = await as(1, users.bob, 'POST', `/v1/sessions/${id}/events`, {
      events: [controlResponseEvent(requestId, { behavior: 'deny', message: 'Add tests first.' })],
    });
    assert.equal(denied.status, 200, JSON.stringify(denied.body));
    const late = await approve(0, users.carol, id, requestId, 'x');
    assert.equal(late.status, 409, 'the request was answered by the reject');
  });

  it(`the last two approvals at once on two replicas let the agent go exactly once (${CONCURRENT_ITERATIONS} sessions)`, async () => {
    const outcomes: string[] = [];
    for (let start = 0; start < CONCURRENT_ITERATIONS; start += AT_ONCE) {
      const ids = await Promise.all(Array.from({ length: Math.min(AT_ONCE, CONCURRENT_ITERATIONS - start) }, create));
      await Promise.all(
        ids.map(async (id, index) => {
          const { requestId, plan } = await planOf(id);
          // bob on one replica, carol on the other, sent together; which replica each uses alternates.
          const answers = await Promise.all([
            approve(index, users.bob, id, requestId, plan),
            approve(index + 1, users.carol, id, requestId, plan),
          ]);
          const statuses = answers.map((a) => a.status).sort();
          assert.deepEqual(
            statuses,
            [200, 202],
            `one completes the quorum, the other waits: ${JSON.stringify(answers.map((a) => a.body))}`,
          );
          const log = await carriedOut(id, `session ${id} to carry the plan out`, 90_000);
          assert.equal(allows(log).length, 1, `session ${id}: exactly one allow stored`);
          assert.equal(said(log, 'Done.'), 1, `session ${id}: the agent carried the plan out once`);
          outcomes.push(id);
        }),
      );
    }
    assert.equal(outcomes.length, CONCURRENT_ITERATIONS);
  });
});

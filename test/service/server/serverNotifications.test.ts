// Webhook notifications wired to the team server: two real replicas, both started with the same
// --notify-webhook, and a worker, on one real PostgreSQL; a real receiver on 127.0.0.1 checks each
// post's HMAC signature. A plan ready, its decision and the execution's end each arrive exactly
// once (the outbox is claimed by one replica), with the session's link and without the plan text.
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { controlResponseEvent } from '../../../src/core/protocol';
import { GenericPayloadSchema, type GenericPayload } from '../../../src/service/notifications/notificationEvents';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifySignature } from '../../../src/service/notifications/webhookSigning';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { waitFor } from '../../support/wait';
import { EXAMPLES_DIR, secretFile, startServer, startWorker, type ServerProcess, type WorkerProcess } from '../../support/serverProcess';
import { call, createSession, waitForEvents } from './serverTestKit';

const SECRET = 'the-team-webhook-secret';

describe('ultraplan-server notifications (two replicas, PostgreSQL, a signed webhook)', function () {
  this.timeout(120_000);
  const received: Array<{ payload: GenericPayload; verified: boolean; reason: string }> = [];
  let receiver: http.Server;
  let replicas: ServerProcess[] = [];
  let worker: WorkerProcess | undefined;

  before(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const check = verifySignature(
          SECRET,
          {
            signature: req.headers[SIGNATURE_HEADER] as string | undefined,
            timestamp: req.headers[TIMESTAMP_HEADER] as string | undefined,
          },
          body,
        );
        received.push({ payload: GenericPayloadSchema.parse(JSON.parse(body)), verified: check.ok, reason: check.ok ? '' : check.reason });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `generic:http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const database = await (await sharedPostgresCluster()).createDatabase();
    const secret = secretFile(SECRET, 'webhook-secret');
    const args = ['--notify-webhook', hook, '--notify-webhook-secret-file', secret, '--notify-link-base', 'https://plans.example.com'];
    // One after the other: the first applies the schema; both then claim from one outbox.
    replicas = [await startServer({ store: database, extraArgs: args })];
    replicas.push(await startServer({ store: database, extraArgs: args }));
    worker = await startWorker({ store: database, agent: `scripted:${EXAMPLES_DIR}/approve.json` });
  });
  after(async () => {
    await Promise.all([...replicas.map((r) => r.stop()), worker?.stop()]);
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('posts plan ready, decided and execution finished once each, signed, with the link and no plan text', async () => {
    const server = replicas[0] as ServerProcess;
    const id = await createSession(server);
    const events = await waitForEvents(
      server,
      id,
      (e) => e.some((x) => x.type === 'control_request' && x.request?.subtype === 'can_use_tool'),
      30_000,
    );
    const request = events.find((x) => x.type === 'control_request' && x.request?.subtype === 'can_use_tool');
    const ofSession = () => received.filter((r) => r.payload.session.id === id);
    await waitFor(() => ofSession().some((r) => r.payload.kind === 'plan_ready') || undefined, {
      message: 'plan_ready posted',
      timeoutMs: 15_000,
    });

    const sent = await call(replicas[1] as ServerProcess, 'POST', `/v1/sessions/${id}/events`, {
      events: [controlResponseEvent(request.request_id, { behavior: 'allow', updatedInput: request.request.input })],
    });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    await waitFor(() => ofSession().some((r) => r.payload.kind === 'execution_finished') || undefined, {
      message: 'execution_finished posted',
      timeoutMs: 30_000,
    });
    // Time for a second replica's duplicate to arrive, were there one (each polls every 0.5 s).
    await new Promise((resolve) => setTimeout(resolve, 2_000));

    const posts = ofSession();
    assert.deepEqual(
      posts.map((r) => r.payload.kind),
      ['plan_ready', 'decided', 'execution_finished'],
      'each event posted once, in order',
    );
    for (const post of posts) {
      assert.ok(post.verified, `signature checked: ${post.reason}`);
      assert.equal(post.payload.link, `https://plans.example.com/v1/code/sessions/${id.replace('session_', 'cse_')}`);
      assert.equal(post.payload.plan, undefined, 'no plan text without --notify-include-plan');
      assert.ok(!JSON.stringify(post.payload).includes('CHANGELOG'), 'the plan text is nowhere in the post');
    }
    const decided = posts[1]?.payload;
    assert.equal(decided?.decision, 'approved');
    assert.equal(decided?.decided_by, 'shared_token');
    assert.match(decided?.summary ?? '', /^Plan decided: approved by shared_token: /);
  });
});

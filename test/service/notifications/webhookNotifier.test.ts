// Webhook notifications against real HTTP receivers on 127.0.0.1: the generic form signed with
// HMAC-SHA256 (checked as a receiver checks it), the Slack form, retries with backoff after 500s,
// giving up after the attempts, a hung receiver that holds up neither the caller nor the other
// targets, no plan text unless asked, and failures logged once per cause.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GenericPayloadSchema, type NotificationEvent } from '../../../src/service/notifications/notificationEvents';
import { WebhookNotifier, type WebhookNotifierOptions } from '../../../src/service/notifications/webhookNotifier';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifySignature } from '../../../src/service/notifications/webhookSigning';
import { parseWebhookTarget } from '../../../src/service/notifications/webhookTargets';
import { waitFor } from '../../support/wait';

const SECRET = 'a-shared-secret-of-the-team';
const PLAN = '# Plan\n1. Rotate the key in config/secrets.yml';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

interface Receiver {
  url: string;
  received: Received[];
  /** Answers the n-th request (0-based) with this status; `hang` never answers. */
  close(): Promise<void>;
}

async function startReceiver(answer: (n: number) => number | 'hang' = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = received.length;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const status = answer(n);
      if (status !== 'hang') res.writeHead(status).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/T000/B000/secret-part`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function event(overrides: Partial<NotificationEvent> = {}): NotificationEvent {
  return {
    kind: 'approval_needed',
    at: '2026-12-03T16:00:00.000Z',
    session: { id: 'session_0123', title: 'Add <rate limits> & retries' },
    link: 'https://ultraplan.example.com/review/session_0123',
    needed: ['reviewers'],
    revision: 2,
    plan: PLAN,
    ...overrides,
  };
}

describe('webhook notifications (real receivers on 127.0.0.1)', function () {
  this.timeout(20_000);
  const receivers: Receiver[] = [];
  const notifiers: WebhookNotifier[] = [];
  let logs: string[];

  async function receiver(answer?: (n: number) => number | 'hang'): Promise<Receiver> {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  }
  function notifier(targets: string[], options: Partial<WebhookNotifierOptions> = {}): WebhookNotifier {
    const n = new WebhookNotifier({
      targets: targets.map(parseWebhookTarget),
      secret: SECRET,
      log: (line) => logs.push(line),
      baseDelayMs: 20,
      maxDelayMs: 100,
      timeoutMs: 2000,
      ...options,
    });
    notifiers.push(n);
    return n;
  }

  beforeEach(() => {
    logs = [];
  });
  afterEach(async () => {
    for (const n of notifiers.splice(0)) n.close();
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  it('posts the generic form signed with HMAC-SHA256 over the timestamp and the body, without the plan', async () => {
    const r = await receiver();
    const n = notifier([r.url]);
    n.notify(event());
    await n.idle();
    assert.equal(r.received.length, 1);
    const [delivery] = r.received;
    assert.ok(delivery);
    const signature = delivery.headers[SIGNATURE_HEADER] as string;
    const timestamp = delivery.headers[TIMESTAMP_HEADER] as string;
    assert.match(signature, /^sha256=[0-9a-f]{64}$/);
    assert.ok(Math.abs(Number(timestamp) - Date.now() / 1000) < 5);
    assert.deepEqual(verifySignature(SECRET, { signature, timestamp }, delivery.body), { ok: true });
    // What a receiver must refuse: another secret, a changed body, a replay an hour later.
    assert.deepEqual(verifySignature('another-secret', { signature, timestamp }, delivery.body), { ok: false, reason: 'bad signature' });
    assert.deepEqual(verifySignature(SECRET, { signature, timestamp }, delivery.body.replace('reviewers', 'everyone')), {
      ok: false,
      reason: 'bad signature',
    });
    assert.deepEqual(verifySignature(SECRET, { signature, timestamp }, delivery.body, { nowMs: Date.now() + 3600_000 }), {
      ok: false,
      reason: 'timestamp outside the tolerance',
    });
    const payload = GenericPayloadSchema.parse(JSON.parse(delivery.body));
    assert.equal(payload.kind, 'approval_needed');
    assert.equal(payload.link, 'https://ultraplan.example.com/review/session_0123');
    assert.deepEqual(payload.needed, ['reviewers']);
    assert.equal(payload.summary, 'Approval needed: Add <rate limits> & retries (revision 2); needed: reviewers');
    assert.equal(payload.plan, undefined);
    assert.ok(!delivery.body.includes('secrets.yml'), 'the plan text was sent');
  });

  it('sends the plan text only when asked', async () => {
    const r = await receiver();
    const n = notifier([r.url], { includePlan: true });
    n.notify(event());
    await n.idle();
    assert.equal(GenericPayloadSchema.parse(JSON.parse(r.received[0]?.body ?? '')).plan, PLAN);
  });

  it('posts the Slack incoming-webhook form with the link, escaped, unsigned', async () => {
    const r = await receiver();
    const n = notifier([`slack:${r.url}`]);
    n.notify(event({ kind: 'decided', decision: 'approved', decidedBy: 'alice@example.com', needed: [] }));
    await n.idle();
    const [delivery] = r.received;
    assert.ok(delivery);
    assert.equal(delivery.headers[SIGNATURE_HEADER], undefined);
    assert.deepEqual(JSON.parse(delivery.body), {
      text: 'Plan decided (approved by alice@example.com): <https://ultraplan.example.com/review/session_0123|Add &lt;rate limits&gt; &amp; retries>',
      blocks: [
        {
          type: 'section',
          text: {
            type: 'mrkdwn',
            text: 'Plan decided (approved by alice@example.com): <https://ultraplan.example.com/review/session_0123|Add &lt;rate limits&gt; &amp; retries>',
          },
        },
      ],
    });
    assert.ok(!delivery.body.includes('secrets.yml'));
    assert.equal(parseWebhookTarget('https://hooks.slack.com/services/T/B/X').format, 'slack');
    assert.equal(parseWebhookTarget('https://hooks.slack.com/services/T/B/X').label, 'slack webhook https://hooks.slack.com');
  });

  it('retries after 500s with growing waits, then delivers; the failure is logged once and the recovery once', async () => {
    const r = await receiver((n) => (n < 3 ? 500 : 200));
    const n = notifier([r.url], { baseDelayMs: 40, maxDelayMs: 1000, random: () => 1 });
    n.notify(event());
    await n.idle();
    assert.equal(r.received.length, 4);
    const gaps = r.received.slice(1).map((d, i) => d.at - (r.received[i]?.at ?? 0));
    // Backoff with the jitter at its top: 40, 80, 160 ms.
    gaps.forEach((gap, i) => assert.ok(gap >= 40 * 2 ** i - 5, `retry ${i + 1} came after ${gap} ms`));
    // The same delivery each time: one id, so a receiver can drop a repeat.
    assert.equal(new Set(r.received.map((d) => JSON.parse(d.body).id)).size, 1);
    assert.deepEqual(logs, [
      `notifications: generic webhook ${new URL(r.url).origin}: HTTP 500 (retrying with backoff)`,
      `notifications: generic webhook ${new URL(r.url).origin} delivers again`,
    ]);
    assert.ok(!logs.join('\n').includes('secret-part'), 'the webhook path (a secret) is in the log');
  });

  it('gives up after the attempts, logging the cause and the giving up once for many notifications', async () => {
    const r = await receiver(() => 503);
    const n = notifier([r.url], { maxAttempts: 3 });
    n.notify(event());
    n.notify(event({ kind: 'execution_failed' }));
    await n.idle();
    assert.equal(r.received.length, 6);
    assert.equal(logs.length, 2, logs.join('\n'));
    assert.match(logs[0] ?? '', /HTTP 503 \(retrying with backoff\)$/);
    assert.match(logs[1] ?? '', /gave up on a approval_needed notification after 3 attempts$/);
  });

  it('does not retry an answer that will not change (400)', async () => {
    const r = await receiver(() => 400);
    const n = notifier([r.url]);
    n.notify(event());
    await n.idle();
    assert.equal(r.received.length, 1);
    assert.match(logs[0] ?? '', /refused with HTTP 400; not retried$/);
  });

  it('a hung receiver holds up neither the caller nor another target; close aborts it', async () => {
    const hung = await receiver(() => 'hang');
    const healthy = await receiver();
    const n = notifier([hung.url, `slack:${healthy.url}`], { timeoutMs: 10_000 });
    const started = performance.now();
    for (let i = 0; i < 50; i++) n.notify(event({ revision: i + 1 }));
    const callerMs = performance.now() - started;
    // A held caller would wait the receiver's 10 s timeout; the bound leaves room for a loaded machine.
    assert.ok(callerMs < 500, `notify held the caller ${callerMs.toFixed(1)} ms`);
    await waitFor(() => healthy.received.length, {
      until: (n) => n >= 50,
      message: 'the 50 deliveries to the healthy receiver',
      timeoutMs: 10_000,
    });
    assert.equal(healthy.received.length, 50);
    assert.equal(hung.received.length, 1, 'the hung receiver got a second delivery before answering the first');
    const closing = performance.now();
    n.close();
    await n.idle();
    assert.ok(performance.now() - closing < 1000, 'close waited for the hung receiver');
  });

  it('a receiver that times out is retried; the timeout is logged once', async () => {
    const r = await receiver((n) => (n === 0 ? 'hang' : 200));
    const n = notifier([r.url], { timeoutMs: 1_000 });
    n.notify(event());
    await n.idle();
    // The hung delivery, then the retry (on a loaded machine a slow answer may be retried once more).
    assert.ok(r.received.length >= 2, `${r.received.length} deliveries`);
    assert.equal(logs.filter((line) => /no answer within 1000 ms/.test(line)).length, 1);
    assert.match(logs[0] ?? '', /no answer within 1000 ms \(retrying with backoff\)$/);
  });

  it('drops the oldest waiting notification when a target falls behind its bound', async () => {
    const r = await receiver(() => 'hang');
    const n = notifier([r.url], { queueLimit: 3, timeoutMs: 300, maxAttempts: 1 });
    for (let i = 1; i <= 6; i++) n.notify(event({ revision: i }));
    assert.equal(logs.filter((l) => l.includes('dropping its oldest')).length, 1);
  });

  it('refuses a generic target without a secret, and a URL with credentials', () => {
    assert.throws(
      () => new WebhookNotifier({ targets: [parseWebhookTarget('https://example.com/hook')], log: () => {} }),
      /signing secret/,
    );
    assert.throws(() => parseWebhookTarget('https://user:pw@example.com/hook'), /credentials/);
    assert.throws(() => parseWebhookTarget('ftp://example.com/hook'), /not http/);
  });
});

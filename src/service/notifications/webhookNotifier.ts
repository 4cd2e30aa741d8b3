// Sends notifications to the configured webhooks without ever holding up the write that caused
// them: `notify` only puts the event in each target's bounded queue and returns. Each target has
// its own sender, one delivery at a time (in order), so a hung or failing receiver delays only
// itself. A delivery is retried on a network failure, a timeout, 408, 429 or 5xx, with
// exponential backoff and full jitter, up to a number of attempts; any other answer is final.
// Failures are logged once per cause (LogOnce). `close` aborts what is in flight and drops the rest.
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { LogOnce } from './logOnce';
import { genericPayload, NotificationEventSchema, slackPayload, type NotificationEvent } from './notificationEvents';
import { signedHeaders } from './webhookSigning';
import type { WebhookTarget } from './webhookTargets';
import { errorMessage } from '../../core/errors';

export interface WebhookNotifierOptions {
  targets: readonly WebhookTarget[];
  /** The HMAC key for generic targets (required when there is one). */
  secret?: string | Buffer;
  /** Send the plan's text (--notify-include-plan); off by default. */
  includePlan?: boolean;
  log: (line: string) => void;
  /** Attempts per delivery, the first included (default 6). */
  maxAttempts?: number;
  /** Backoff: the n-th retry waits a random time up to min(maxDelayMs, baseDelayMs * 2^(n-1)). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Per attempt (default 10 s). */
  timeoutMs?: number;
  /** Per target; when full, the oldest waiting notification is dropped (default 100). */
  queueLimit?: number;
  random?: () => number;
}

interface Delivery {
  id: string;
  event: NotificationEvent;
}

/** Answers worth another attempt: the receiver may be back in a moment. */
const RETRY_STATUSES = new Set([408, 425, 429, 500, 502, 503, 504]);

export class WebhookNotifier {
  private readonly senders: TargetSender[];
  private readonly closing = new AbortController();
  private readonly log: (line: string) => void;

  constructor(options: WebhookNotifierOptions) {
    this.log = options.log;
    if (options.targets.some((t) => t.format === 'generic') && !options.secret) {
      throw new Error('a generic --notify-webhook needs a signing secret (--notify-webhook-secret-file)');
    }
    const logOnce = new LogOnce(options.log);
    this.senders = options.targets.map((target) => new TargetSender(target, options, logOnce, this.closing.signal));
  }

  /** Queues the event for every target and returns at once; never throws (a malformed event is logged). */
  notify(event: NotificationEvent): void {
    if (this.closing.signal.aborted || this.senders.length === 0) return;
    const parsed = NotificationEventSchema.safeParse(event);
    if (!parsed.success) {
      this.log(`notifications: a ${event.kind} notification was not sent: ${z.prettifyError(parsed.error).replace(/\s*\n\s*/g, '; ')}`);
      return;
    }
    const delivery = { id: randomUUID(), event: parsed.data };
    for (const sender of this.senders) sender.enqueue(delivery);
  }

  /** Resolves when every queue is empty and nothing is in flight (tests, and a clean stop with a deadline). */
  async idle(): Promise<void> {
    await Promise.all(this.senders.map((s) => s.idle()));
  }

  /** Aborts what is in flight and drops what waits. */
  close(): void {
    this.closing.abort();
    for (const sender of this.senders) sender.drop();
  }
}

class TargetSender {
  private readonly queue: Delivery[] = [];
  private running: Promise<void> | undefined;

  constructor(
    private readonly target: WebhookTarget,
    private readonly options: WebhookNotifierOptions,
    private readonly logOnce: LogOnce,
    private readonly closing: AbortSignal,
  ) {}

  enqueue(delivery: Delivery): void {
    if (this.queue.length >= (this.options.queueLimit ?? 100)) {
      this.queue.shift();
      this.logOnce.failure(
        this.target.label,
        'queue full',
        `notifications: ${this.target.label} is behind; dropping its oldest waiting notification`,
      );
    }
    this.queue.push(delivery);
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  drop(): void {
    this.queue.length = 0;
  }

  private async drain(): Promise<void> {
    // Started from enqueue: let the caller's write go on before any work here.
    await Promise.resolve();
    for (let next = this.queue.shift(); next && !this.closing.aborted; next = this.queue.shift()) {
      await this.deliver(next);
    }
  }

  private async deliver(delivery: Delivery): Promise<void> {
    const body = JSON.stringify(
      this.target.format === 'slack'
        ? slackPayload(delivery.event, { includePlan: this.options.includePlan ?? false })
        : genericPayload(delivery.event, delivery.id, { includePlan: this.options.includePlan ?? false }),
    );
    const maxAttempts = this.options.maxAttempts ?? 6;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const outcome = await this.attempt(body);
      if (outcome.kind === 'delivered') {
        this.logOnce.success(this.target.label, `notifications: ${this.target.label} delivers again`);
        return;
      }
      if (this.closing.aborted) return;
      this.logOnce.failure(
        this.target.label,
        outcome.cause,
        `notifications: ${this.target.label}: ${outcome.cause}${outcome.kind === 'retry' ? ' (retrying with backoff)' : ''}`,
      );
      if (outcome.kind === 'final') return;
      if (attempt === maxAttempts) break;
      await this.sleep(this.backoffMs(attempt, outcome.retryAfterMs));
      if (this.closing.aborted) return;
    }
    this.logOnce.failure(
      this.target.label,
      'gave up',
      `notifications: ${this.target.label}: gave up on a ${delivery.event.kind} notification after ${maxAttempts} attempts`,
    );
  }

  private async attempt(body: string): Promise<{ kind: 'delivered' } | { kind: 'retry' | 'final'; cause: string; retryAfterMs?: number }> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'ultraplan-server' };
    if (this.target.format === 'generic' && this.options.secret) Object.assign(headers, signedHeaders(this.options.secret, body));
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    let response: Response;
    try {
      response = await fetch(this.target.url, {
        method: 'POST',
        headers,
        body,
        redirect: 'error',
        signal: AbortSignal.any([this.closing, AbortSignal.timeout(timeoutMs)]),
      });
    } catch (err) {
      if (err instanceof Error && err.name === 'TimeoutError') return { kind: 'retry', cause: `no answer within ${timeoutMs} ms` };
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
      const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : undefined;
      return { kind: 'retry', cause: `could not deliver (${code ?? errorMessage(cause)})` };
    }
    // The answer's body is not ours to read; drop it so the connection is freed.
    await response.body?.cancel().catch(() => {});
    if (response.ok) return { kind: 'delivered' };
    if (RETRY_STATUSES.has(response.status)) {
      return { kind: 'retry', cause: `HTTP ${response.status}`, retryAfterMs: retryAfterMs(response.headers.get('retry-after')) };
    }
    return { kind: 'final', cause: `refused with HTTP ${response.status}; not retried` };
  }

  private backoffMs(retry: number, retryAfter: number | undefined): number {
    const cap = this.options.maxDelayMs ?? 30_000;
    const ceiling = Math.min(cap, (this.options.baseDelayMs ?? 500) * 2 ** (retry - 1));
    const jittered = Math.floor((this.options.random ?? Math.random)() * ceiling);
    return retryAfter === undefined ? jittered : Math.min(cap, Math.max(jittered, retryAfter));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.closing.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.closing.addEventListener('abort', done, { once: true });
    });
  }
}

/** Retry-After in seconds (the form receivers use); an HTTP date is ignored. */
function retryAfterMs(value: string | null): number | undefined {
  return value !== null && /^\d{1,6}$/.test(value) ? Number(value) * 1000 : undefined;
}

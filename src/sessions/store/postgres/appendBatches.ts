// Group commit of clients' appends within one process. Appends that arrive while earlier ones
// are being committed wait and then go together: one statement, one transaction, one commit (one
// WAL flush) for all of them, instead of one each. Under load this is where the time goes: every
// commit waits for the disk, and every statement for a turn on a busy CPU.
//
// What each append is promised does not change: its events are numbered under its session's row
// lock, stored all or none, and acknowledged only after the commit that holds them. Refusals are
// answered per append (appendFunction.ts) and leave the others of the batch whole. An error that
// undoes the whole batch (a constraint the function did not foresee, a deadlock) is not taken as
// every append's: each is then tried alone, and answered with its own result.
import type { Pool } from 'pg';
import { SessionsError } from '../../../core/errors';
import { appendOutputs, appendTogether, type AppendOutput, type PendingAppend } from './appendFunction';

/** Batches committing at once: one can fill while another waits for its commit. */
const BATCHES_IN_FLIGHT = 2;
/** Appends in one batch at most (each holds at most the store's events-per-append limit). */
const APPENDS_PER_BATCH = 64;

interface Waiting extends PendingAppend {
  resolve(outputs: AppendOutput[]): void;
  reject(err: unknown): void;
}

export class AppendBatches {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(private readonly pool: Pool) {}

  /** Stores one append with whatever others are waiting; resolves after its commit. */
  append(append: PendingAppend): Promise<AppendOutput[]> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ ...append, resolve, reject });
      this.sendNext();
    });
  }

  private sendNext(): void {
    while (this.inFlight < BATCHES_IN_FLIGHT && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, APPENDS_PER_BATCH);
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.sendNext();
      });
    }
  }

  private async send(batch: readonly Waiting[]): Promise<void> {
    let rows;
    try {
      rows = await appendTogether(this.pool, batch, new Date());
    } catch (err) {
      const unavailable = err instanceof SessionsError && err.status === 503;
      if (batch.length === 1 || unavailable) {
        for (const append of batch) append.reject(err);
        return;
      }
      await Promise.all(batch.map((append) => this.send([append])));
      return;
    }
    batch.forEach((append, index) => {
      try {
        append.resolve(appendOutputs(append, rows[index] as NonNullable<(typeof rows)[number]>));
      } catch (refusal) {
        append.reject(refusal);
      }
    });
  }
}

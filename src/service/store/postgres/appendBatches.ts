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
import { appendRoutes, appendWaking, type AppendRoute } from './wakes';
import { LIVE_STATUSES, type UserQuotas } from '../quotas';

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

  /** `quotas`: an append that would wake an idle session past its owner's live limit is refused (wakes.ts). */
  constructor(
    private readonly pool: Pool,
    private readonly quotas?: UserQuotas,
  ) {}

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

  private async send(all: readonly Waiting[]): Promise<void> {
    const quotas = this.quotas;
    if (!quotas) return this.commit(all, [], undefined);
    let routes: AppendRoute[];
    try {
      routes = await appendRoutes(this.pool, all);
    } catch (err) {
      for (const append of all) append.reject(err);
      return;
    }
    const waking = all.filter((_, index) => routes[index] === 'wake');
    const together = all.filter((_, index) => routes[index] !== 'wake');
    const atWork = routes.filter((route) => route !== 'wake').map((route) => route === 'at_work');
    await Promise.all([...waking.map((append) => this.wake(append, quotas)), this.commit(together, atWork, quotas)]);
  }

  /** A wake, alone in its transaction under the creation lock (wakes.ts). */
  private async wake(append: Waiting, quotas: UserQuotas): Promise<void> {
    await appendWaking(this.pool, append, quotas, new Date()).then(append.resolve, append.reject);
  }

  /** Appends in one statement; one whose session is no longer at work (`atWork`) goes back as a wake. */
  private async commit(batch: readonly Waiting[], atWork: readonly boolean[], quotas: UserQuotas | undefined): Promise<void> {
    if (batch.length === 0) return;
    let rows;
    try {
      rows = await appendTogether(this.pool, batch, new Date(), atWork, LIVE_STATUSES);
    } catch (err) {
      const unavailable = err instanceof SessionsError && err.status === 503;
      if (batch.length === 1 || unavailable) {
        for (const append of batch) append.reject(err);
        return;
      }
      await Promise.all(batch.map((append, index) => this.commit([append], [atWork[index] === true], quotas)));
      return;
    }
    const woken: Array<Promise<void>> = [];
    batch.forEach((append, index) => {
      const row = rows[index] as NonNullable<(typeof rows)[number]>;
      if (row.outcome === 'not_at_work' && quotas) return void woken.push(this.wake(append, quotas));
      try {
        append.resolve(appendOutputs(append, row));
      } catch (refusal) {
        append.reject(refusal);
      }
    });
    await Promise.all(woken);
  }
}

// Many ultraplan-servers started at once on one data directory, on a fresh directory and on one
// whose lock was left by a server killed with SIGKILL: exactly one may serve.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { startServer, tempDir, type ServerProcess } from '../../support/serverProcess';
import { example } from '../hostTestKit';
import { errorMessage } from '../../../src/core/errors';

const RACERS = 15;
const ROUNDS = 4;

/** Starts RACERS servers at once on dataDir; returns the ones that listen and the refusals. */
async function race(dataDir: string, token: string): Promise<{ winners: ServerProcess[]; refusals: string[] }> {
  const starts = await Promise.allSettled(
    Array.from({ length: RACERS }, () => startServer({ scenario: example('approve.json'), dataDir, token, startTimeoutMs: 90_000 })),
  );
  const winners: ServerProcess[] = [];
  const refusals: string[] = [];
  for (const start of starts) {
    if (start.status === 'fulfilled') winners.push(start.value);
    else refusals.push(errorMessage(start.reason));
  }
  return { winners, refusals };
}

describe('ultraplan-server: one server per data directory, however many start at once', function () {
  this.timeout(300_000);

  it(`${RACERS} racing starts, ${ROUNDS} rounds (fresh, then after SIGKILL left the lock stale): exactly one serves`, async () => {
    const dataDir = tempDir();
    const token = 'race-token';
    // A lock left by a process that is gone: its pid, written as a server would.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    await fs.writeFile(path.join(dataDir, 'server.lock'), `${dead.stdout}\n`);
    for (let round = 0; round < ROUNDS; round++) {
      if (round === 1) await fs.rm(path.join(dataDir, 'server.lock')); // one round on a fresh directory
      const { winners, refusals } = await race(dataDir, token);
      try {
        assert.equal(
          winners.length,
          1,
          `round ${round}: ${winners.length} servers serve one data directory (pids ${winners.map((w) => w.pid).join(', ')})`,
        );
        assert.equal(refusals.length, RACERS - 1);
        for (const refusal of refusals) assert.match(refusal, /is in use by another ultraplan-server \(pid \d+\)/, refusal);
        const winner = winners[0] as ServerProcess;
        assert.equal((await fs.readFile(path.join(dataDir, 'server.lock'), 'utf8')).trim(), String(winner.pid));
      } finally {
        // SIGKILL: the lock stays behind, stale, for the next round.
        await Promise.all(winners.map((w) => w.kill()));
      }
    }
    const leftovers = (await fs.readdir(dataDir)).filter((name) => name.includes('lock') && name !== 'server.lock');
    assert.deepEqual(leftovers, [], 'no temporary or takeover files are left behind');
  });
});

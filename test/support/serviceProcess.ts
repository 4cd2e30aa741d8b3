// The local session service in tests: each test run gets a service folder of its own
// (ULTRAPLAN_SERVICE_DIR), and whatever services ran from it are found by their data folders'
// locks and stopped at the end (they are detached: nothing else would end them).
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { SERVICE_DIR_ENV } from '../../src/core/node/servicePaths';
import { isAlive, waitGone } from './processes';

export { SERVICE_DIR_ENV };

/** The pids of the services that hold a data folder under `serviceDir` (state/data-<version>/server.lock). */
export function servicePids(serviceDir: string): number[] {
  const state = path.join(serviceDir, 'state');
  let names: string[];
  try {
    names = readdirSync(state);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    try {
      const pid = Number(readFileSync(path.join(state, name, 'server.lock'), 'utf8').trim());
      return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? [pid] : [];
    } catch {
      return [];
    }
  });
}

/** SIGTERM (the service stops its agents), then SIGKILL to the group of whatever is left. */
export async function stopServices(serviceDir: string, graceMs = 5_000): Promise<void> {
  const pids = servicePids(serviceDir);
  for (const pid of pids) signal(pid, 'SIGTERM');
  for (const pid of pids) if (!(await waitGone(pid, graceMs))) signal(-pid, 'SIGKILL');
}

/** kill -9 of a service (what a crash or an OOM kill does): its agents are left to notice alone. */
export function killService(pid: number): void {
  signal(pid, 'SIGKILL');
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

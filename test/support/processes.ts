// Process checks shared by the tests that start real agent processes (unit, e2e and in-host
// suites): is a pid still running, wait (bounded) until it is gone, what is left in its group.
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { waitFor } from './wait';

/** True while a process with this pid runs (a zombie, exited but not yet reaped, has ended). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists, owned by someone else.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // On Linux it went between the two looks; without /proc the signal's answer stands.
    return process.platform !== 'linux';
  }
  return !/^State:\s+Z/m.test(status);
}

/** Waits (bounded) until `pid` is gone; answers whether it is. */
export async function waitGone(pid: number, timeoutMs = 5000): Promise<boolean> {
  return waitFor(() => !isAlive(pid), { timeoutMs }).catch(() => !isAlive(pid));
}

/** Checks (bounded) that each agent of `pids` is gone and its process group empty. */
export async function assertAgentGroupsGone(pids: readonly number[]): Promise<void> {
  for (const pid of pids) {
    assert.ok(await waitGone(pid, 10_000), `agent ${pid} left behind`);
    await waitFor(() => processGroupMembers(pid), {
      message: `no process left in agent group ${pid}`,
      timeoutMs: 5000,
      until: (left) => left.length === 0,
    });
  }
}

/** SIGKILLs the process group of each of `pids` still running (cleanup after a suite, whatever failed). */
export function killGroupsLeft(pids: Iterable<number>): void {
  for (const pid of pids) {
    if (!isAlive(pid)) continue;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}

/** Live (non-zombie) processes whose process group is `pgid` (Linux /proc). */
export function processGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(entry));
  }
  return members;
}

/** Live processes whose environment sets HOME to `home` (a throwaway home given to one agent). */
export function processesWithHome(home: string): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`HOME=${home}`) && isAlive(Number(entry)))
        members.push(Number(entry));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return members;
}

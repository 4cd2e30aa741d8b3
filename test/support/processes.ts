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
      timeoutMs: 10_000,
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

/** Each live (non-zombie) process: its pid, parent and process group (Linux /proc). */
function liveProcesses(): Array<{ pid: number; ppid: number; pgrp: number }> {
  const found: Array<{ pid: number; ppid: number; pgrp: number }> = [];
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
    if (fields[0] !== 'Z') found.push({ pid: Number(entry), ppid: Number(fields[1]), pgrp: Number(fields[2]) });
  }
  return found;
}

/** Live (non-zombie) processes whose process group is `pgid` (Linux /proc). */
export function processGroupMembers(pgid: number): number[] {
  return liveProcesses()
    .filter((p) => p.pgrp === pgid)
    .map((p) => p.pid);
}

/**
 * Live processes whose environment sets HOME to `home` (a throwaway home given to one agent), or,
 * with `under`, to any folder inside it (the sessions' sandbox homes under a data directory).
 */
export function processesWithHome(home: string, { under = false } = {}): number[] {
  const members: number[] = [];
  const matches = (entry: string) => entry === `HOME=${home}` || (under && entry.startsWith(`HOME=${home}/`));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').some(matches) && isAlive(Number(entry))) members.push(Number(entry));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return members;
}

/** `root` and every live process descended from it (Linux /proc), sandboxed agents included. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const { pid, ppid } of liveProcesses()) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const tree: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** What `/proc` shows of a process to whoever may read it: its environment and command line (NUL-separated). */
export function procExposure(pid: number): { environ: string; cmdline: string } | undefined {
  try {
    return { environ: readFileSync(`/proc/${pid}/environ`, 'utf8'), cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8') };
  } catch {
    return undefined;
  }
}

/** The pid the server's log names for the agent it started last ("started … (pid N, …)"). */
export function loggedAgentPid(log: string): number {
  const pids = [...log.matchAll(/\] started .* \(pid (\d+)[,)]/g)].map((match) => Number(match[1]));
  const pid = pids.at(-1);
  if (pid === undefined) throw new Error(`no agent start in the log:\n${log}`);
  return pid;
}

/**
 * The agents among processesWithHome(home): each whose parent does not share that HOME. Its
 * children (a shell, a search) come and go while it waits, so a check that the agent kept running
 * looks at these.
 */
export function agentRootsWithHome(home: string): number[] {
  const members = new Set(processesWithHome(home));
  const parents = new Map(liveProcesses().map((p) => [p.pid, p.ppid]));
  return [...members].filter((pid) => !members.has(parents.get(pid) ?? 0));
}

/** Live processes whose command line names `file` (a script given to node, say). */
export function processesRunning(file: string): number[] {
  const found: number[] = [];
  for (const { pid } of liveProcesses()) {
    if (pid === process.pid) continue;
    const exposure = procExposure(pid);
    if (exposure?.cmdline.split('\0').includes(file)) found.push(pid);
  }
  return found;
}

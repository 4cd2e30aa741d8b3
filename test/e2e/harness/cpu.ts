// Where a window's CPU went, for the timing lines the harness prints: the CPU seconds (user + sys)
// a process group has used so far, read from /proc: each live member's own time plus the time of
// the members it has reaped. code-server's group holds its extension hosts, pty host and watchers;
// Chromium's (playwright starts it detached) its renderers and helpers. Linux only.
import * as fs from 'node:fs';

/** USER_HZ: the unit of /proc's CPU times (100 on every Linux we run on). */
const CLOCK_TICKS = 100;

interface ProcStat {
  pid: number;
  comm: string;
  ppid: number;
  pgrp: number;
  /** utime + stime + cutime + cstime, in clock ticks. */
  ticks: number;
}

function readStat(pid: string): ProcStat | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // gone meanwhile
  }
  const close = text.lastIndexOf(')');
  // After "pid (comm) ": state ppid pgrp session … utime(14) stime(15) cutime(16) cstime(17).
  const fields = text.slice(close + 2).split(' ');
  return {
    pid: Number(pid),
    comm: text.slice(text.indexOf('(') + 1, close),
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]),
  };
}

function allStats(): ProcStat[] {
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return pids.flatMap((pid) => readStat(pid) ?? []);
}

/** CPU seconds of the groups led by `leaders` (undefined off Linux). */
export function groupsCpuSeconds(leaders: readonly number[]): number | undefined {
  if (process.platform !== 'linux') return undefined;
  const groups = new Set(leaders);
  return allStats().reduce((sum, p) => (groups.has(p.pgrp) ? sum + p.ticks : sum), 0) / CLOCK_TICKS;
}

/** The process groups this process started detached whose program is `comm` (e.g. chromium). */
export function childGroupLeaders(comm: string): number[] {
  if (process.platform !== 'linux') return [];
  return allStats()
    .filter((p) => p.ppid === process.pid && p.comm === comm && p.pgrp === p.pid)
    .map((p) => p.pid);
}

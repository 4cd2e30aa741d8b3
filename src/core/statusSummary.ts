// What the single status bar item says when one or several sessions are followed: the session
// that needs the person first (a plan to review, then a question, then a failure), plus a count.
// Pure, so its ordering is unit-tested without VS Code.

import { PHASE_LABELS, type Phase } from './phase';

const PRIORITY: Record<Phase, number> = {
  // The agent is blocked on the person in both: equal, the most recent first.
  needs_permission: 0,
  plan_ready: 0,
  needs_input: 1,
  // Waits on the person too (its plan or question can still be answered), after a live agent.
  agent_stopped: 1,
  failed: 2,
  starting: 3,
  planning: 3,
  rejected: 3,
  executing: 4,
  approved: 5,
  completed: 6,
  teleported: 7,
  stopped: 8,
};

function phaseText(phase: Phase): string {
  return PHASE_LABELS.statusBar[phase];
}

export interface StatusEntry {
  sessionId: string;
  phase: Phase;
  /** When the phase last changed (ms since epoch): among equals, the most recent change wins. */
  changedAt: number;
}

/** Sessions ordered for the status bar: by attention priority, then most recent change. */
export function orderForStatus<T extends StatusEntry>(entries: readonly T[]): T[] {
  return orderByAttention(entries, (e) => e);
}

/** Anything that stands for a session, in the status bar's order, read through `entryOf`. */
export function orderByAttention<T>(items: readonly T[], entryOf: (item: T) => Pick<StatusEntry, 'phase' | 'changedAt'>): T[] {
  return items
    .map((item) => ({ item, entry: entryOf(item) }))
    .sort((a, b) => PRIORITY[a.entry.phase] - PRIORITY[b.entry.phase] || b.entry.changedAt - a.entry.changedAt)
    .map((x) => x.item);
}

export interface StatusSummary<T extends StatusEntry> {
  primary: T;
  text: string;
  /** How many sessions are shown in all. */
  count: number;
}

export function summarizeStatus<T extends StatusEntry>(entries: readonly T[]): StatusSummary<T> | undefined {
  const ordered = orderForStatus(entries);
  const primary = ordered[0];
  if (!primary) return undefined;
  const base = phaseText(primary.phase);
  const text = ordered.length > 1 ? `${base} (+${ordered.length - 1})` : base;
  return { primary, text, count: ordered.length };
}

/** The tooltip's lines on where the primary session stands beyond its phase: its execution, its quorum's line. */
export function statusTooltipNotes(entry: { progress?: string | undefined; approval?: string | undefined }): string[] {
  return [...(entry.progress ? [entry.progress] : []), ...(entry.approval ? [entry.approval] : [])];
}

/** "4m 05s", "1h 02m": elapsed time for the tooltip. */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(sec).padStart(2, '0')}s`;
  return `${sec}s`;
}

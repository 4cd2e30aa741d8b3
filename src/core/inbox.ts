// The plan inbox: every followed session, on every backend, sorted by what it needs from the
// person. Pure (no vscode), so the grouping, the ordering, the descriptions and the notification
// rule are unit-tested; the tree view in extension/inbox only shows what this returns.
import { PHASE_LABELS, type Phase } from './phase';
import type { ReportedMode } from './eventBatch';
import type { PlanRevision } from './panelMessages';
import { orderByAttention } from './statusSummary';

export type InboxGroupId = 'needs_you' | 'running' | 'done';

export const INBOX_GROUPS: ReadonlyArray<{ id: InboxGroupId; label: string }> = [
  { id: 'needs_you', label: 'Needs you' },
  { id: 'running', label: 'Running' },
  { id: 'done', label: 'Done' },
];

/**
 * Phases that wait on the person: a plan to review, a question, a permission, and an agent that
 * stopped (what it left can still be decided or answered; nothing moves until the person does).
 */
const NEEDS_YOU: ReadonlySet<Phase> = new Set<Phase>(['plan_ready', 'needs_input', 'needs_permission', 'agent_stopped']);

/** What the inbox reads of one session (its snapshot's entry, core/sessionSnapshot.ts). */
export interface InboxEntry {
  key: string;
  title: string;
  /** Where attention goes: an open permission request outranks the session's own phase. */
  attention: Phase;
  /** When `attention` last changed (ms since epoch). */
  changedAt: number;
  createdAt: number;
  /** Following has ended (teleported, stopped, failed, completed). */
  finished: boolean;
  backendLabel: string;
  agentLabel: string | undefined;
  /** The agent's mode as it last reported it, in words ("plan (read-only)"). */
  modeText: string | undefined;
  revisionCount: number;
  /** While or after the approved plan runs: "Executing: 3 of 7 steps done" (the agent's own reports). */
  progress?: string | undefined;
  /**
   * The quorum's line the panel shows too (core/planApprovals.ts): while it is not reached "1 of 2
   * approvals: alice; waiting for one more from platform-reviewers"; once it released the latest
   * revision "Approved by 2 of 2: alice, bob".
   */
  approval?: string | undefined;
}

export function needsYou(phase: Phase): boolean {
  return NEEDS_YOU.has(phase);
}

/**
 * The group a session is listed in. An approved plan that the agent is executing stays under
 * Running until the session ends: the agent is still at work there, may still ask a permission
 * (which moves it to Needs you), and can be stopped; Done holds only sessions nobody follows any
 * more.
 */
export function inboxGroupOf(entry: Pick<InboxEntry, 'attention' | 'finished'>): InboxGroupId {
  if (!entry.finished && needsYou(entry.attention)) return 'needs_you';
  return entry.finished ? 'done' : 'running';
}

export interface InboxGroup<T extends InboxEntry> {
  id: InboxGroupId;
  label: string;
  entries: T[];
}

/**
 * The groups in display order, each sorted: Needs you as the status bar orders them (a plan or a
 * permission before a question, then the latest first), so the view's first row is the session the
 * status bar shows; Running and Done by the latest change first. Empty groups are left out.
 */
export function groupInbox<T extends InboxEntry>(entries: readonly T[]): Array<InboxGroup<T>> {
  const by = new Map<InboxGroupId, T[]>(INBOX_GROUPS.map((g) => [g.id, []]));
  for (const e of entries) by.get(inboxGroupOf(e))!.push(e);
  const needs = orderByAttention(by.get('needs_you')!, (e) => ({ phase: e.attention, changedAt: e.changedAt }));
  const latestFirst = (list: T[]) => [...list].sort((a, b) => b.changedAt - a.changedAt || a.key.localeCompare(b.key));
  const sorted: Record<InboxGroupId, T[]> = {
    needs_you: needs,
    running: latestFirst(by.get('running')!),
    done: latestFirst(by.get('done')!),
  };
  return INBOX_GROUPS.filter((g) => sorted[g.id].length > 0).map((g) => ({ id: g.id, label: g.label, entries: sorted[g.id] }));
}

/** The view's badge: how many sessions wait on the person. */
export function inboxBadgeCount(entries: readonly InboxEntry[]): number {
  return entries.filter((e) => inboxGroupOf(e) === 'needs_you').length;
}

/** "just now", "5m ago", "3h ago", "2d ago": coarse on purpose, so the view refreshes rarely. */
export function formatAge(ms: number): string {
  const minutes = Math.floor(Math.max(0, ms) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes}m ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ago`;
  return `${Math.floor(hours / 24)}d ago`;
}

/** The line beside a session's title: backend, agent, age, then the execution's progress, the quorum's line or the revision count. */
export function inboxDescription(entry: InboxEntry, now: number): string {
  const parts = [entry.backendLabel];
  if (entry.agentLabel) parts.push(entry.agentLabel);
  parts.push(formatAge(now - entry.changedAt));
  if (entry.progress) parts.push(entry.progress);
  else if (entry.approval) parts.push(entry.approval);
  else if (entry.revisionCount > 0) parts.push(`${entry.revisionCount} revision${entry.revisionCount === 1 ? '' : 's'}`);
  return parts.join(' · ');
}

/** The lines of a row's tooltip (after its title); the decisions per revision are the caller's. */
export function inboxTooltipLines(entry: InboxEntry): string[] {
  return [
    `Phase: ${inboxPhaseLabel(entry.attention)}`,
    `Backend: ${entry.backendLabel}`,
    ...(entry.agentLabel ? [`Agent: ${entry.agentLabel}`] : []),
    ...(entry.modeText ? [`Agent mode: ${entry.modeText}`] : []),
    `Revisions: ${entry.revisionCount}`,
    ...(entry.progress ? [entry.progress] : []),
    ...(entry.approval ? [entry.approval] : []),
  ];
}

/** The phase in the view's words (the panel's labels: "Plan ready", "Executing"). */
export function inboxPhaseLabel(phase: Phase): string {
  return PHASE_LABELS.panel[phase];
}

// ---------------------------------------------------------------------------------------------
// Notifications

/** What decides whether a session's current need was announced already. */
export interface NeedFacts {
  key: string;
  attention: Phase;
  finished: boolean;
  /** The pending plan's ExitPlanMode tool_use id (a revised plan has a new one). */
  planToolUseId: string | undefined;
  /** A fingerprint of the agent's question (a new question is a new need). */
  questionId: string | undefined;
}

/**
 * The key of the need a session is in, for "announce once": a plan is announced once per plan
 * (its tool_use id), a question once per question. An open permission request is not announced
 * here: its own prompt (Allow / Deny) is the notification. Undefined: nothing to announce.
 */
export function needNotificationKey(f: NeedFacts): string | undefined {
  if (f.finished) return undefined;
  if (f.attention === 'plan_ready' && f.planToolUseId) return `plan_ready:${f.planToolUseId}`;
  if (f.attention === 'needs_input' && f.questionId) return `needs_input:${f.questionId}`;
  if (f.attention === 'agent_stopped') return `agent_stopped:${f.planToolUseId ?? f.questionId ?? ''}`;
  return undefined;
}

/** How many announced needs a session remembers (oldest forgotten first): a bound on storage. */
export const MAX_NOTIFIED_PER_SESSION = 20;

/** `list` with `item` as its newest (moved there if present), the oldest dropped beyond `bound`. */
export function appendLatest(list: readonly string[], item: string, bound: number): string[] {
  return [...list.filter((x) => x !== item), item].slice(-bound);
}

/** The announced keys with one more, oldest dropped beyond the bound. */
export function rememberNotified(notified: readonly string[], key: string): string[] {
  return appendLatest(notified, key, MAX_NOTIFIED_PER_SESSION);
}

// ---------------------------------------------------------------------------------------------
// The agent's mode

/** The mode every session asks for at its start (set_permission_mode plan). */
export const REQUESTED_MODE = 'plan';

/**
 * The agent's mode in words, as it last reported it: `plan (read-only)`, `default`,
 * `acceptEdits "Accept Edits"`. Before any report, the mode we asked for, marked as requested
 * (Claude Code on the web reports its mode only with its first turn).
 */
export function agentModeText(mode: ReportedMode | undefined): string {
  if (!mode) return `${REQUESTED_MODE} (requested)`;
  const named = mode.name && mode.name.toLowerCase() !== mode.id.toLowerCase() ? `${mode.id} "${mode.name}"` : mode.id;
  return mode.readOnly ? `${named} (read-only)` : named;
}

/** The revisions and what was decided on each, in words: "revision 1 rejected, revision 2 approved with notes". */
export function revisionDecisionsText(revisions: readonly Pick<PlanRevision, 'revision' | 'status' | 'notes'>[]): string {
  return revisions.map((r) => `revision ${r.revision} ${r.status.replace('_', ' ')}${r.notes ? ' with notes' : ''}`).join(', ');
}

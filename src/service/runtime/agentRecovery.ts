// What a session whose agent stopped (the host restarted and the agent's process is gone) can
// still do, read from its log alone: the plan requests it left open, which a reviewer may still
// decide, and the prompts of the fresh agent turn each answer starts. The host keeps the log; this
// file only reads it, so it is tested on plain event lists. docs/agents.md, "When the agent stops".
import {
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  EXIT_PLAN_MODE_TOOL,
  ULTRAPLAN_TELEPORT_SENTINEL,
  AGENT_LOST_SUBTYPE,
  AGENT_RESTARTED_SUBTYPE,
  type PermissionDecision,
} from '../../core/protocol';
import { planFileSourceOf } from '../../core/planFileSession';
import type { StoredEvent } from '../store/sessionStore';

/** A plan request the lost agent had open: decided now, it is carried out or revised by a fresh turn. */
export interface OrphanedPlan {
  requestId: string;
  toolUseId: string;
  plan: string;
  /** Where the plan was read, when no agent proposed it (a plan file: core/planFileSession.ts). */
  source?: string;
}

/** The plan request `event` makes, when it is an ExitPlanMode can_use_tool request with a plan. */
export function planRequestOf(event: StoredEvent): OrphanedPlan | undefined {
  if (event.type !== 'control_request' || typeof event.request_id !== 'string') return undefined;
  const request = event.request as { subtype?: unknown; tool_name?: unknown; tool_use_id?: unknown; input?: unknown } | undefined;
  if (request?.subtype !== 'can_use_tool' || request.tool_name !== EXIT_PLAN_MODE_TOOL) return undefined;
  const plan = (request.input as { plan?: unknown } | undefined)?.plan;
  if (typeof request.tool_use_id !== 'string' || typeof plan !== 'string') return undefined;
  const source = planFileSourceOf(event);
  return { requestId: event.request_id, toolUseId: request.tool_use_id, plan, ...(source !== undefined ? { source } : {}) };
}

/**
 * Whether the session is a plan file's still waiting for its first decision (no agent ever ran):
 * one of the open requests is the host's plan-file request (core/planFileSession.ts).
 */
export function awaitsPlanFileDecision(events: readonly StoredEvent[], open: ReadonlyMap<string, string>): boolean {
  if (open.size === 0) return false;
  return events.some(
    (event) => typeof event.request_id === 'string' && open.has(event.request_id) && planRequestOf(event)?.source !== undefined,
  );
}

/** What a decision on an orphaned plan does. */
export type Recovery =
  /** A fresh turn, out of plan mode, carries the approved plan out. */
  | { kind: 'carry_out'; plan: string; toolResult: string }
  /** A fresh turn, in plan mode, revises the plan from the feedback. */
  | { kind: 'revise'; plan: string; feedback: string; toolResult: string }
  /** The plan runs elsewhere (teleported): no agent turn. */
  | { kind: 'none'; toolResult: string; isError: true };

/** The decision's effect, and the tool_result the log gets for the plan (as a live agent's would read). */
export function recoveryFor(orphan: OrphanedPlan, decision: PermissionDecision): Recovery {
  if (decision.behavior === 'allow') {
    const edited = typeof decision.updatedInput.plan === 'string' ? decision.updatedInput.plan : orphan.plan;
    const marker = edited !== orphan.plan ? APPROVED_PLAN_EDITED_MARKER : APPROVED_PLAN_MARKER;
    return { kind: 'carry_out', plan: edited, toolResult: `User approved the plan.\n\n${marker}${edited}` };
  }
  if (decision.message.includes(ULTRAPLAN_TELEPORT_SENTINEL)) return { kind: 'none', toolResult: decision.message, isError: true };
  return { kind: 'revise', plan: orphan.plan, feedback: decision.message, toolResult: decision.message };
}

/** The tool_result event that closes a plan request, in the shape the ACP translator writes. */
export function planResultEvent(toolUseId: string, text: string, isError: boolean): Record<string, unknown> & { type: string } {
  return {
    type: 'user',
    parent_tool_use_id: null,
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: text, is_error: isError }] },
  };
}

/** Said to the model when a message replaces a decision on a plan the stopped agent left open. */
export const SUPERSEDED_PLAN_TEXT = 'The reviewer sent a message instead of deciding on this plan; planning goes on from that message.';

const RECAP_MAX_CHARS = 24_000;
const RECAP_ENTRY_MAX_CHARS = 4_000;

function clipped(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) =>
      block && typeof block === 'object' && (block as { type?: unknown }).type === 'text'
        ? String((block as { text?: unknown }).text ?? '')
        : '',
    )
    .filter(Boolean)
    .join('\n');
}

/**
 * The conversation so far, as a fresh agent reads it: the person's messages, the agent's words,
 * the plans it proposed and what the reviewer answered. Bounded: the first message (the task) and
 * the newest entries that fit.
 */
export function conversationRecap(events: readonly StoredEvent[], maxChars = RECAP_MAX_CHARS): string {
  const entries: string[] = [];
  const plans = new Set<string>();
  for (const event of events) {
    if (event.type === 'user') {
      const message = event.message as { content?: unknown } | undefined;
      const content = message?.content;
      if (Array.isArray(content)) {
        for (const block of content as Array<Record<string, unknown>>) {
          if (block?.type !== 'tool_result' || !plans.has(String(block.tool_use_id))) continue;
          const text = textOf(block.content) || String(block.content ?? '');
          if (text.includes(ULTRAPLAN_TELEPORT_SENTINEL)) entries.push('Reviewer: took the plan to run it elsewhere.');
          else entries.push(block.is_error ? `Reviewer rejected the plan: ${text}` : 'Reviewer approved the plan.');
        }
      }
      const text = textOf(content).trim();
      if (text) entries.push(`Person: ${text}`);
    } else if (event.type === 'assistant') {
      const content = (event.message as { content?: unknown } | undefined)?.content;
      if (!Array.isArray(content)) continue;
      for (const block of content as Array<Record<string, unknown>>) {
        if (block?.type === 'text' && typeof block.text === 'string' && block.text.trim()) entries.push(`Agent: ${block.text.trim()}`);
        if (block?.type === 'tool_use' && block.name === EXIT_PLAN_MODE_TOOL) plans.add(String(block.id));
      }
    } else if (event.type === 'control_request') {
      const plan = planRequestOf(event);
      if (plan) {
        plans.add(plan.toolUseId);
        entries.push(`Agent proposed this plan:\n${plan.plan}`);
      }
    } else if (event.type === 'system' && event.subtype === AGENT_LOST_SUBTYPE) {
      entries.push('(The agent stopped here: its process ended with a restart.)');
    }
  }
  const shown = entries.map((entry) => clipped(entry, RECAP_ENTRY_MAX_CHARS));
  const first = shown[0];
  if (first === undefined) return '(nothing yet)';
  const kept: string[] = [];
  let size = first.length;
  for (let i = shown.length - 1; i > 0; i--) {
    const entry = shown[i] as string;
    if (size + entry.length + 2 > maxChars) {
      kept.unshift('(earlier conversation left out)');
      break;
    }
    kept.unshift(entry);
    size += entry.length + 2;
  }
  return [first, ...kept].join('\n\n');
}

const RESTART_NOTE =
  'Ultraplan note: this session was interrupted (the program running the previous agent stopped), and you are continuing it in a new turn.';

/** The prompt of the fresh turn that carries out an approved plan. */
export function carryOutPrompt(plan: string, recap: string): string {
  return `${RESTART_NOTE} The reviewer approved the plan below. Carry it out now.\n\nThe approved plan:\n\n${plan}\n\nThe conversation so far, for context:\n\n${recap}`;
}

/** The prompt of the fresh turn (in plan mode) that revises a rejected plan. */
export function revisePrompt(plan: string, feedback: string, recap: string): string {
  return `${RESTART_NOTE} The reviewer rejected the plan below. Their feedback:\n\n${feedback}\n\nThe rejected plan:\n\n${plan}\n\nStay in plan mode, revise the plan, and ask again when it is ready.\n\nThe conversation so far, for context:\n\n${recap}`;
}

/**
 * The prompt of the fresh turn that goes on after the person's message (the recap's last entry):
 * planning, or carrying out the plan the reviewer last approved.
 */
export function continuePrompt(recap: string, mode: 'plan' | 'carry_out'): string {
  const what =
    mode === 'plan'
      ? 'Go on planning from the conversation so far, in plan mode, and propose your plan when it is ready.'
      : 'The reviewer approved the last plan in the conversation below; carry on carrying it out (some steps may be done already: check before you change anything).';
  return `${RESTART_NOTE} ${what} The person's newest message is the last entry.\n\nThe conversation so far:\n\n${recap}`;
}

/**
 * The person's message a restart cut off: the log's last message from a person (not a tool's
 * result) when no turn ended after it. Undefined when the last turn ended, or none was asked.
 */
export function interruptedMessage(events: readonly StoredEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as StoredEvent;
    if (event.type === 'result') return undefined;
    if (event.type !== 'user' || (event.parent_tool_use_id ?? null) !== null) continue;
    const content = (event.message as { content?: unknown } | undefined)?.content;
    const fromPerson =
      typeof content === 'string' ||
      (Array.isArray(content) && content.length > 0 && content.every((b) => (b as { type?: unknown } | null)?.type === 'text'));
    if (fromPerson) return textOf(content).trim() || undefined;
  }
  return undefined;
}

/** The prompt that has an agent that reloaded its conversation carry on with the message a restart cut off. */
export function interruptedTurnPrompt(message: string): string {
  return `Ultraplan note: the program running you stopped while you were answering the person's message below, and you have your conversation back. Some of it may be done already: check before you change anything, then carry on with it.\n\nThe message:\n\n${message}`;
}

/** Whether the host started a fresh agent turn after the log's last agent_lost. */
export function freshTurnSinceLost(events: readonly StoredEvent[]): boolean {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as StoredEvent;
    if (event.type !== 'system') continue;
    if (event.subtype === AGENT_RESTARTED_SUBTYPE) return true;
    if (event.subtype === AGENT_LOST_SUBTYPE) return false;
  }
  return false;
}

/** The plan the log's last decision on a plan approved (its proposed text, or the reviewer's edit as recorded), if it approved one: a fresh turn carries it out. */
export function lastApprovedPlan(events: readonly StoredEvent[]): string | undefined {
  const plans = new Map<string, string>();
  let approved: string | undefined;
  for (const event of events) {
    const plan = planRequestOf(event);
    if (plan) plans.set(plan.toolUseId, plan.plan);
    if (event.type !== 'user') continue;
    const content = (event.message as { content?: unknown } | undefined)?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content as Array<Record<string, unknown>>) {
      if (block?.type !== 'tool_result' || !plans.has(String(block.tool_use_id))) continue;
      const text = textOf(block.content) || String(block.content ?? '');
      const edited = text.indexOf(APPROVED_PLAN_EDITED_MARKER);
      const marker = edited !== -1 ? -1 : text.indexOf(APPROVED_PLAN_MARKER);
      if (block.is_error === true || (edited === -1 && marker === -1)) approved = undefined;
      // As the session host binds progress: the proposed text, or the reviewer's edit without its trailing blank lines.
      else if (edited !== -1) approved = text.slice(edited + APPROVED_PLAN_EDITED_MARKER.length).trimEnd();
      else approved = plans.get(String(block.tool_use_id));
    }
  }
  return approved;
}

// Tool permission requests a person must answer: the `can_use_tool` control_requests of a session
// other than ExitPlanMode (an edit, a command, a read the agent asks for while executing an
// approved plan, or while planning). A pure, stateful tracker fed the same event batches as the
// scanner; it says which requests are open. No I/O, no timers.
//
// A request closes when we answered it (markAnswered), when the log shows an answer to it (a
// control_response from another window, the browser or a script: answered elsewhere) or its tool
// settled (a tool_result for its tool_use_id, or a tool_use for it after the request), or when the
// turn that asked ended (a `result`). Our own answer comes back through the log too, after
// markAnswered closed the request, so it changes nothing.
//
// Memory is bounded: open requests (each holding its input) by MAX_OPEN_PERMISSION_REQUESTS, the
// ids remembered for late or repeated events by MAX_REMEMBERED_IDS, never by the session's length.
import type { DecisionRefusal } from './decision';
import { EXIT_PLAN_MODE_TOOL, PermissionDecisionSchema, controlResponseEvent, type AnyEvent } from './protocol';
import { parseEventBatch, type ParsedBatch } from './eventBatch';

/** Open requests kept at once; beyond it the oldest is dropped (and reported as dropped). */
export const MAX_OPEN_PERMISSION_REQUESTS = 64;
/** Settled tool ids and closed request ids remembered (oldest forgotten first). */
export const MAX_REMEMBERED_IDS = 2000;
/** A request's one-line summary is at most this long. */
export const PERMISSION_SUMMARY_CHARS = 500;
/** The Details view shows at most this much of an input. */
export const PERMISSION_DETAILS_CHARS = 200_000;
/** What the agent is told when the person denies. */
export const PERMISSION_DENIED_MESSAGE = 'The user denied this in Ultraplan.';

export interface ToolPermissionRequest {
  requestId: string;
  toolName: string;
  toolUseId: string;
  /** One line, at most PERMISSION_SUMMARY_CHARS: a file path, a command, else the JSON's start. */
  summary: string;
  /** The input exactly as the agent sent it (an allow answers with it unchanged). */
  input: unknown;
}

/** Why a request stopped being open. */
export type PermissionClosure = 'answered' | 'answered_elsewhere' | 'turn_ended' | 'dropped' | 'agent_stopped';

export interface PermissionChanges {
  opened: ToolPermissionRequest[];
  closed: Array<{ request: ToolPermissionRequest; reason: PermissionClosure }>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Input keys that say what a tool acts on, most telling first (Claude's tools and ACP rawInputs). */
const SUMMARY_KEYS = ['command', 'cmd', 'file_path', 'filePath', 'notebook_path', 'path', 'url', 'pattern', 'query'] as const;

/** A bounded one-line description of a tool input: the file path or command, else its JSON. */
export function summarizeToolInput(input: unknown, max = PERMISSION_SUMMARY_CHARS): string {
  if (isRecord(input)) {
    for (const key of SUMMARY_KEYS) {
      const value = input[key];
      if (typeof value === 'string' && value.trim()) return oneLine(value, max);
      // An argv array (["npm", "test"]) reads as the command line.
      if (Array.isArray(value) && value.length > 0 && value.every((part) => typeof part === 'string')) return oneLine(value.join(' '), max);
    }
  }
  if (typeof input === 'string') return oneLine(input, max);
  // An empty input says nothing ("{}" after a tool's title reads as noise).
  if (input === null || input === undefined || (isRecord(input) && Object.keys(input).length === 0)) return '';
  if (Array.isArray(input) && input.length === 0) return '';
  let json: string;
  try {
    json = JSON.stringify(input) ?? '';
  } catch {
    json = String(input);
  }
  return oneLine(json, max);
}

/** The full input for the Details view: pretty JSON, clipped to a bound. */
export function describeToolInput(input: unknown, max = PERMISSION_DETAILS_CHARS): string {
  let text: string;
  try {
    text = JSON.stringify(input, null, 2) ?? String(input);
  } catch {
    text = String(input);
  }
  return text.length > max ? `${text.slice(0, max)}\n… (clipped: ${text.length - max} more characters)` : text;
}

/**
 * Text from the agent made inert for a VS Code notification, which renders `[label](target)` as a
 * link (command: links included): the pair is broken so the agent cannot plant a clickable action.
 */
export function inertNotificationText(text: string): string {
  return text.replace(/\]\s*\(/g, '] (');
}

/**
 * "Ultraplan: <agent> asks permission: <tool> <summary>", bounded, with links made inert. Worded
 * so any tool title reads right: a verb ("Edit src/app.ts") or Gemini's phrase ("Writing to …").
 */
export function permissionPromptText(agentLabel: string, request: Pick<ToolPermissionRequest, 'toolName' | 'summary'>): string {
  const tool = oneLine(request.toolName, 160);
  // ACP tools are named by their title ("Edit src/app.ts"), which often already says the target,
  // relative to the workspace where the input has it absolute.
  const target = tool.split(' ').pop() ?? '';
  const named = tool.includes(request.summary) || (/[/.]/.test(target) && request.summary.endsWith(`/${target}`));
  const summary = request.summary && !named ? ` ${request.summary}` : '';
  return inertNotificationText(`Ultraplan: ${oneLine(agentLabel, 80)} asks permission: ${tool}${summary}`);
}

/** The control_response answering `request`: allow with its input unchanged, or deny. */
export function permissionResponseEvent(request: Pick<ToolPermissionRequest, 'requestId' | 'input'>, answer: 'allow' | 'deny'): AnyEvent {
  const decision =
    answer === 'allow'
      ? PermissionDecisionSchema.parse({ behavior: 'allow', updatedInput: isRecord(request.input) ? request.input : {} })
      : PermissionDecisionSchema.parse({ behavior: 'deny', message: PERMISSION_DENIED_MESSAGE });
  return controlResponseEvent(request.requestId, decision);
}

/** The decision gate's refusals, worded for a permission request instead of a plan. */
export function permissionRefusalMessage(reason: DecisionRefusal): string {
  switch (reason) {
    case 'already_decided':
      return 'This permission request was already answered; it is not answered twice.';
    case 'wrong_session':
      return 'This permission request belongs to another Ultraplan session; nothing was sent.';
    case 'no_pending_plan':
    case 'superseded':
      return 'This permission request is no longer open (it was answered elsewhere, or the agent moved on); nothing was sent.';
    case 'plan_changed':
      return 'This permission request changed since it was shown; nothing was sent.';
  }
}

/** A Set that forgets its oldest entries beyond `max`. */
class RecentIds {
  readonly #ids = new Set<string>();
  constructor(private readonly max: number) {}
  add(id: string): void {
    this.#ids.delete(id);
    this.#ids.add(id);
    if (this.#ids.size > this.max) {
      const oldest = this.#ids.values().next().value;
      if (oldest !== undefined) this.#ids.delete(oldest);
    }
  }
  has(id: string): boolean {
    return this.#ids.has(id);
  }
  get size(): number {
    return this.#ids.size;
  }
}

export interface ToolPermissionTrackerOptions {
  maxOpen?: number;
  maxRemembered?: number;
}

export class ToolPermissionTracker {
  /** Open requests by request id, oldest first. */
  readonly #open = new Map<string, ToolPermissionRequest>();
  /** Tool ids whose tool_result (or a later tool_use) was seen: a request for them is settled. */
  readonly #settledTools: RecentIds;
  /** Request ids already seen and closed, so a repeated event does not open them again. */
  readonly #closed: RecentIds;
  readonly #maxOpen: number;
  #malformed = 0;

  constructor(options: ToolPermissionTrackerOptions = {}) {
    this.#maxOpen = Math.max(1, options.maxOpen ?? MAX_OPEN_PERMISSION_REQUESTS);
    const remembered = Math.max(1, options.maxRemembered ?? MAX_REMEMBERED_IDS);
    this.#settledTools = new RecentIds(remembered);
    this.#closed = new RecentIds(remembered);
  }

  /** Open requests, oldest first. */
  get open(): ToolPermissionRequest[] {
    return [...this.#open.values()];
  }

  get(requestId: string): ToolPermissionRequest | undefined {
    return this.#open.get(requestId);
  }

  isOpen(requestId: string): boolean {
    return this.#open.has(requestId);
  }

  /** can_use_tool requests skipped because they lacked fields. */
  get malformedCount(): number {
    return this.#malformed;
  }

  /** How many ids are remembered (for tests of the memory bound). */
  get rememberedCount(): number {
    return this.#settledTools.size + this.#closed.size;
  }

  /** Closes every open request (their agent is gone); returns them. */
  closeAll(reason: PermissionClosure): Array<{ request: ToolPermissionRequest; reason: PermissionClosure }> {
    const closed = [...this.#open.values()].map((request) => ({ request, reason }));
    for (const { request } of closed) {
      this.#open.delete(request.requestId);
      this.#closed.add(request.requestId);
    }
    return closed;
  }

  /** Feeds one batch of raw events, in stream order; answers what opened and what closed. */
  ingest(batch: readonly unknown[]): PermissionChanges {
    return this.ingestParsed(parseEventBatch(batch));
  }

  /** Feeds one batch already validated at the transport (see parseEventBatch). */
  ingestParsed(batch: ParsedBatch): PermissionChanges {
    const changes: PermissionChanges = { opened: [], closed: [] };
    const close = (request: ToolPermissionRequest, reason: PermissionClosure): void => {
      this.#open.delete(request.requestId);
      this.#closed.add(request.requestId);
      // One opened and closed within the same batch was never shown: report neither.
      const openedAt = changes.opened.indexOf(request);
      if (openedAt >= 0) changes.opened.splice(openedAt, 1);
      else changes.closed.push({ request, reason });
    };
    const settle = (toolUseId: string): void => {
      this.#settledTools.add(toolUseId);
      for (const request of this.#open.values()) if (request.toolUseId === toolUseId) close(request, 'answered_elsewhere');
    };

    for (const event of batch.events) {
      switch (event.type) {
        case 'control_request': {
          if (event.request.subtype !== 'can_use_tool') break;
          // The event was validated at the transport; a can_use_tool without its fields fell through
          // to the union's catch-all member there, and is counted here.
          const asked = event.request as { tool_name?: unknown; tool_use_id?: unknown; input?: unknown };
          if (typeof asked.tool_name !== 'string' || typeof asked.tool_use_id !== 'string') {
            this.#malformed++;
            break;
          }
          const {
            tool_name: toolName,
            tool_use_id: toolUseId,
            input,
          } = asked as { tool_name: string; tool_use_id: string; input: unknown };
          if (toolName === EXIT_PLAN_MODE_TOOL) break; // the plan review has its own path
          const requestId = event.request_id;
          if (this.#open.has(requestId) || this.#closed.has(requestId)) break;
          const request: ToolPermissionRequest = { requestId, toolName, toolUseId, summary: summarizeToolInput(input), input };
          if (this.#settledTools.has(toolUseId)) {
            // Its tool already has a result (a page not in stream order): nobody waits for it.
            this.#closed.add(requestId);
            break;
          }
          this.#open.set(requestId, request);
          changes.opened.push(request);
          while (this.#open.size > this.#maxOpen) {
            const oldest = this.#open.values().next().value;
            if (oldest === undefined) break;
            close(oldest, 'dropped');
          }
          break;
        }
        case 'assistant':
          // A tool_use stored before its request is the normal order (the call, then the ask);
          // one for an open request's tool arrives only once the tool was let through elsewhere.
          for (const block of event.message.content) {
            if (block.type === 'tool_use' && typeof (block as { id?: unknown }).id === 'string') {
              const id = (block as { id: string }).id;
              for (const request of this.#open.values()) if (request.toolUseId === id) close(request, 'answered_elsewhere');
            }
          }
          break;
        case 'user': {
          const content = event.message.content;
          if (typeof content === 'string') break;
          for (const block of content) {
            if (block.type === 'tool_result') settle((block as { tool_use_id: string }).tool_use_id);
          }
          break;
        }
        case 'result':
          // The turn that asked is over: the agent no longer waits for these answers.
          for (const request of this.#open.values()) close(request, 'turn_ended');
          break;
        default:
          break;
      }
    }
    // Answers come after their request in the log, so one to a request of this batch finds it open.
    for (const requestId of batch.answered ?? []) {
      const request = this.#open.get(requestId);
      if (request) close(request, 'answered_elsewhere');
    }
    return changes;
  }

  /** Records our own answer at once (before the log brings it back); false when it was not open. */
  markAnswered(requestId: string): boolean {
    const request = this.#open.get(requestId);
    if (!request) return false;
    this.#open.delete(requestId);
    this.#closed.add(requestId);
    return true;
  }
}

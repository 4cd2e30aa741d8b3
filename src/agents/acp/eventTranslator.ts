// Turns an ACP agent's session/update stream into the session event log of docs/protocol.md section 2,
// so the scanner, poller and panel read an ACP session like any other. Synchronous and I/O-free:
// updates go in, events come out through `emit`. Once a plan is approved, the agent's progress
// (its `plan` updates and each file an edit tool call changed) goes into the log as
// `ultraplan_progress` events bound to that plan (docs/execution.md); while planning it is dropped.
import * as path from 'node:path';
import type { PlanEntry, SessionUpdate, ToolCall, ToolCallUpdate } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { progressEvent, TodoEntrySchema, type ProgressFact, type TodoEntry } from '../../core/execution/progress';
import type { AnyEvent } from '../../core/protocol';
import { EXIT_PLAN_MODE_TOOL } from '../../core/protocolMarkers';
import { toolCallText } from './planReview';

/** Tool calls remembered for their plan text and titles (bounded: oldest dropped first). */
const MAX_REMEMBERED_TOOL_CALLS = 500;
/** Tool call kinds that change files: their locations and diffs name the files touched. */
const FILE_CHANGING_KINDS: ReadonlySet<string> = new Set(['edit', 'delete', 'move']);
const MAX_TODO_TEXT = 2_000;

/** The approved plan the agent executes: its progress is bound to this hash. */
interface Executing {
  planHash: string;
  workspace: string;
  seq: number;
  /** The todo in progress in the latest plan update, when exactly one was. */
  inProgress: string | undefined;
}

/** A plan entry as a todo entry (text clipped to the fact's bound; an empty entry is dropped). */
function todoEntry(entry: PlanEntry): TodoEntry | undefined {
  const parsed = TodoEntrySchema.safeParse({
    content: entry.content.slice(0, MAX_TODO_TEXT),
    status: entry.status,
    priority: entry.priority,
  });
  return parsed.success ? parsed.data : undefined;
}

/** The files a tool call names: its locations and the paths of its diffs. */
function pathsOf(call: ToolCall | ToolCallUpdate): string[] {
  const paths: string[] = [];
  for (const location of call.locations ?? []) if (location.path) paths.push(location.path);
  for (const content of call.content ?? []) if (content.type === 'diff' && content.path) paths.push(content.path);
  return paths;
}

export interface RememberedToolCall {
  toolCallId: string;
  title: string;
  kind: string | undefined;
  rawInput: unknown;
  resultEmitted: boolean;
  /** The files it changes (edit, delete and move calls), reported once it completes. */
  files?: Set<string>;
}

export class AcpEventTranslator {
  private text = '';
  private messageId: string | undefined;
  private lastText = '';
  private readonly toolCalls = new Map<string, RememberedToolCall>();
  private exitPlanCount = 0;
  private executing: Executing | undefined;

  constructor(private readonly emit: (event: AnyEvent) => void) {}

  /** The last assistant text flushed (the agent's question when a turn ends without a plan). */
  get lastAssistantText(): string {
    return this.lastText;
  }

  toolCall(toolCallId: string): RememberedToolCall | undefined {
    return this.toolCalls.get(toolCallId);
  }

  /** The newest remembered tool call whose rawInput carries a plan. */
  latestPlanToolCall(): RememberedToolCall | undefined {
    let found: RememberedToolCall | undefined;
    for (const call of this.toolCalls.values()) {
      const input = call.rawInput as { plan?: unknown } | null | undefined;
      if (input && typeof input === 'object' && typeof input.plan === 'string') found = call;
    }
    return found;
  }

  /**
   * The plan with `planHash` was approved: from now on the agent's progress is reported, bound to
   * it, with the files it touches made relative to `workspace`.
   */
  approved(planHash: string, workspace: string): void {
    this.executing = { planHash, workspace, seq: 0, inProgress: undefined };
  }

  /** Handles one update; answers true when it was content for the log (not mode or usage noise). */
  update(update: SessionUpdate): boolean {
    switch (update.sessionUpdate) {
      case 'agent_message_chunk': {
        const messageId = update.messageId ?? undefined;
        // A new message id, or a chunk with an id after one without (Claude's adapter sends its own
        // notices with none): a message of its own.
        if (this.text && messageId !== this.messageId) this.flush();
        if (messageId !== undefined) this.messageId = messageId;
        if (update.content.type === 'text') this.text += update.content.text;
        return true;
      }
      case 'tool_call':
        this.flush();
        this.startToolCall(update);
        if (update.status === 'completed' || update.status === 'failed') this.finishToolCall(update);
        return true;
      case 'tool_call_update':
        this.flush();
        if (!this.toolCalls.has(update.toolCallId)) this.startToolCall(update);
        else this.refresh(update);
        if (update.status === 'completed' || update.status === 'failed') this.finishToolCall(update);
        return true;
      case 'plan':
        return this.planUpdate(update.entries);
      default:
        return false;
    }
  }

  /** Emits the coalesced text of the current message, if any. */
  flush(): void {
    const text = this.text;
    this.text = '';
    this.messageId = undefined;
    if (!text.trim()) return;
    this.lastText = text;
    this.emit({
      type: 'assistant',
      parent_tool_use_id: null,
      message: { role: 'assistant', content: [{ type: 'text', text }] },
    });
  }

  /** Emits `text` as an assistant message of its own (after any text in progress). */
  assistantText(text: string): void {
    this.flush();
    this.text = text;
    this.flush();
  }

  /**
   * Emits the ExitPlanMode tool_use for a plan the agent asks to leave plan mode with; returns its
   * id. The id is ours, so a tool call the agent already reported under its own name stays apart.
   */
  exitPlanToolUse(toolCallId: string, plan: string): string {
    this.flush();
    this.exitPlanCount += 1;
    const toolUseId = `${toolCallId}:exit-plan-${this.exitPlanCount}`;
    this.emit({
      type: 'assistant',
      parent_tool_use_id: null,
      message: { role: 'assistant', content: [{ type: 'tool_use', id: toolUseId, name: EXIT_PLAN_MODE_TOOL, input: { plan } }] },
    });
    return toolUseId;
  }

  /** Emits a tool_use for a tool call not reported yet (a permission request's own tool call). */
  ensureToolUse(toolCall: ToolCallUpdate): void {
    this.flush();
    const known = this.toolCalls.get(toolCall.toolCallId);
    if (!known) this.startToolCall(toolCall);
    // Some agents name the files only in the permission request (Codex's has only locations).
    else this.noteFiles(known, toolCall);
  }

  toolResult(toolUseId: string, text: string, isError: boolean): void {
    const remembered = this.toolCalls.get(toolUseId);
    if (remembered) remembered.resultEmitted = true;
    this.emit({
      type: 'user',
      parent_tool_use_id: null,
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: text, is_error: isError }] },
    });
  }

  private startToolCall(call: ToolCall | ToolCallUpdate): void {
    const reported = call.name || call.title || call.kind || 'tool';
    // Only our own ExitPlanMode tool_use may carry that name: the scanner reads it as a plan.
    const title = reported === EXIT_PLAN_MODE_TOOL ? `${reported} (agent tool call)` : reported;
    const remembered: RememberedToolCall = {
      toolCallId: call.toolCallId,
      title,
      kind: call.kind ?? undefined,
      rawInput: call.rawInput,
      resultEmitted: false,
    };
    this.remember(remembered);
    this.noteFiles(remembered, call);
    this.emit({
      type: 'assistant',
      parent_tool_use_id: null,
      message: {
        role: 'assistant',
        content: [{ type: 'tool_use', id: call.toolCallId, name: title, input: call.rawInput ?? {} }],
      },
    });
  }

  private refresh(update: ToolCallUpdate): void {
    const remembered = this.toolCalls.get(update.toolCallId);
    if (!remembered) return;
    if (update.rawInput !== undefined) remembered.rawInput = update.rawInput;
    if (update.kind) remembered.kind = update.kind;
    this.noteFiles(remembered, update);
  }

  /** The agent's todo list (a `plan` update): a progress fact while an approved plan runs, else nothing. */
  private planUpdate(entries: readonly PlanEntry[]): boolean {
    const executing = this.executing;
    if (!executing) return false;
    this.flush();
    const todos = entries.map(todoEntry).filter((e): e is TodoEntry => e !== undefined);
    const inProgress = todos.filter((e) => e.status === 'in_progress');
    executing.inProgress = inProgress.length === 1 ? inProgress[0]!.content : undefined;
    this.progress({ kind: 'todos', seq: executing.seq++, at: new Date().toISOString(), source: 'acp_plan', entries: todos });
    return true;
  }

  private noteFiles(remembered: RememberedToolCall, call: ToolCall | ToolCallUpdate): void {
    if (!remembered.kind || !FILE_CHANGING_KINDS.has(remembered.kind)) return;
    for (const file of pathsOf(call)) (remembered.files ??= new Set()).add(file);
  }

  /** A completed file-changing call: each file it touched, once. */
  private filesTouched(remembered: RememberedToolCall): void {
    const executing = this.executing;
    if (!executing || !remembered.files) return;
    for (const file of remembered.files) {
      const relative = path.isAbsolute(file) ? path.relative(executing.workspace, file) : file;
      const inside = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
      this.progress({
        kind: 'file_touched',
        seq: executing.seq++,
        at: new Date().toISOString(),
        path: (inside ? relative.split(path.sep).join('/') : file).slice(0, 1_000),
        tool: remembered.title.slice(0, 200),
        toolUseId: remembered.toolCallId.slice(0, 200),
        ...(executing.inProgress ? { todo: executing.inProgress } : {}),
      });
    }
    remembered.files = undefined;
  }

  private progress(fact: ProgressFact): void {
    const executing = this.executing;
    if (executing) this.emit(progressEvent(executing.planHash, fact));
  }

  private finishToolCall(call: ToolCall | ToolCallUpdate): void {
    const remembered = this.toolCalls.get(call.toolCallId);
    if (remembered && call.status === 'completed') this.filesTouched(remembered);
    if (remembered?.resultEmitted) return;
    let text = toolCallText(call);
    if (!text && call.rawOutput !== undefined && call.rawOutput !== null) {
      text = typeof call.rawOutput === 'string' ? call.rawOutput : JSON.stringify(call.rawOutput);
    }
    if (!text) text = call.status === 'failed' ? 'failed' : 'done';
    this.toolResult(call.toolCallId, text, call.status === 'failed');
  }

  private remember(call: RememberedToolCall): void {
    this.toolCalls.delete(call.toolCallId);
    this.toolCalls.set(call.toolCallId, call);
    if (this.toolCalls.size > MAX_REMEMBERED_TOOL_CALLS) {
      const oldest = this.toolCalls.keys().next().value;
      if (oldest !== undefined) this.toolCalls.delete(oldest);
    }
  }
}

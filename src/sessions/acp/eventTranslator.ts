// Turns an ACP agent's session/update stream into the session event log of docs/protocol.md section 2,
// so the scanner, poller and panel read an ACP session like any other. Synchronous and I/O-free:
// updates go in, events come out through `emit`.
import type { SessionUpdate, ToolCall, ToolCallUpdate } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import type { AnyEvent } from '../../core/protocol';
import { EXIT_PLAN_MODE_TOOL } from '../../core/protocolMarkers';
import { toolCallText } from './planReview';

/** Tool calls remembered for their plan text and titles (bounded: oldest dropped first). */
const MAX_REMEMBERED_TOOL_CALLS = 500;

export interface RememberedToolCall {
  toolCallId: string;
  title: string;
  kind: string | undefined;
  rawInput: unknown;
  resultEmitted: boolean;
}

export class AcpEventTranslator {
  private text = '';
  private messageId: string | undefined;
  private lastText = '';
  private readonly toolCalls = new Map<string, RememberedToolCall>();
  private exitPlanCount = 0;

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
    if (!this.toolCalls.has(toolCall.toolCallId)) this.startToolCall(toolCall);
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
    this.remember({ toolCallId: call.toolCallId, title, kind: call.kind ?? undefined, rawInput: call.rawInput, resultEmitted: false });
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
  }

  private finishToolCall(call: ToolCall | ToolCallUpdate): void {
    const remembered = this.toolCalls.get(call.toolCallId);
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

// The Anthropic Messages API as Claude Code calls it (the Claude ACP adapter follows
// ANTHROPIC_BASE_URL): POST /v1/messages?beta=true with `stream: true`, answered as SSE
// (message_start, content_block_start/delta/stop with text_delta or input_json_delta,
// message_delta with stop_reason, message_stop). Claude Code's side calls are answered outside
// the scenario: the session title (a request with no tools) and the next-prompt suggestion it asks
// after a turn ("[SUGGESTION MODE: …", answered with silence). Every request is logged.
import type { ServerResponse } from 'node:http';
import {
  isErrorReply,
  isHangReply,
  textOf,
  type ModelApiFamily,
  type ModelReply,
  type ModelRequestView,
  type ToolResultView,
} from './scenario';

interface AnthropicBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
}

interface AnthropicMessage {
  role: string;
  content: string | AnthropicBlock[];
}

interface AnthropicRequest {
  model?: string;
  stream?: boolean;
  system?: unknown;
  messages?: AnthropicMessage[];
  tools?: Array<{ name?: string }>;
}

function blocks(message: AnthropicMessage | undefined): AnthropicBlock[] {
  if (!message) return [];
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

/** The request as a scenario round reads it. */
export function anthropicView(request: AnthropicRequest): Omit<ModelRequestView, 'round'> {
  const messages = request.messages ?? [];
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    for (const block of blocks(message)) if (block.type === 'tool_use' && block.id && block.name) toolNames.set(block.id, block.name);
  }
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  const toolResults: ToolResultView[] = blocks(lastUser)
    .filter((block) => block.type === 'tool_result')
    .map((block) => ({
      ...(block.tool_use_id ? { id: block.tool_use_id } : {}),
      ...(block.tool_use_id && toolNames.has(block.tool_use_id) ? { name: toolNames.get(block.tool_use_id) } : {}),
      content: textOf(block.content),
      isError: block.is_error === true,
    }));
  const text = blocks(lastUser)
    .filter((block) => block.type === 'text')
    .map((block) => block.text ?? '')
    .join('\n');
  const allText = [
    textOf(request.system),
    ...messages.flatMap((message) => blocks(message).map((block) => textOf(block.text ?? block.content ?? block.input ?? ''))),
  ].join('\n');
  return {
    model: request.model ?? '',
    allText,
    lastUser: { text, toolResults },
    toolNames: (request.tools ?? []).map((tool) => tool.name ?? '').filter(Boolean),
  };
}

/** How Claude Code asks the model, after a turn, what the person might type next. */
const SUGGESTION_MODE = '[SUGGESTION MODE:';

let toolIds = 0;

function replyBlocks(reply: Exclude<ModelReply, { error: unknown } | { hang: true }>): AnthropicBlock[] {
  const out: AnthropicBlock[] = [];
  if (reply.text) out.push({ type: 'text', text: reply.text });
  for (const call of reply.toolCalls ?? [])
    out.push({ type: 'tool_use', id: call.id ?? `toolu_scripted_${++toolIds}`, name: call.name, input: call.input });
  return out;
}

function writeStream(response: ServerResponse, model: string, content: AnthropicBlock[]): void {
  const stopReason = content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type: string, data: Record<string, unknown>): void => {
    response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  };
  send('message_start', {
    message: {
      id: `msg_scripted_${Date.now()}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text ?? '' } });
    } else {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) } });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
  send('message_stop', {});
  response.end();
}

function writeJson(response: ServerResponse, model: string, content: AnthropicBlock[]): void {
  const stopReason = content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      id: `msg_scripted_${Date.now()}`,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    }),
  );
}

function writeError(response: ServerResponse, status: number, message: string): void {
  const type =
    status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

export const anthropicApi: ModelApiFamily = {
  name: 'Anthropic Messages',
  handle(logged, response, nextRound) {
    const path = logged.url.split('?')[0];
    if (logged.method !== 'POST') return false;
    if (path === '/v1/messages/count_tokens') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ input_tokens: 10 }));
      return true;
    }
    if (path !== '/v1/messages') return false;
    const request = (logged.body ?? {}) as AnthropicRequest;
    const model = request.model ?? 'claude-scripted';
    const write = (content: AnthropicBlock[]): void =>
      request.stream ? writeStream(response, model, content) : writeJson(response, model, content);
    // The title of the session: asked with no tools, outside the conversation.
    if (!request.tools || request.tools.length === 0) {
      write([{ type: 'text', text: 'Scripted session' }]);
      return true;
    }
    const view = anthropicView(request);
    if (view.lastUser.text.startsWith(SUGGESTION_MODE)) {
      write([{ type: 'text', text: '' }]);
      return true;
    }
    const { reply } = nextRound(view);
    if (isHangReply(reply)) return true;
    if (isErrorReply(reply)) writeError(response, reply.error.status, reply.error.message);
    else write(replyBlocks(reply));
    return true;
  },
};

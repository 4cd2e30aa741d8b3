// The OpenAI Chat Completions API as OpenAI-compatible agents call it (Qwen Code with
// OPENAI_BASE_URL, through the `openai` client): POST {base}/chat/completions. A streamed request
// (`stream: true`) is answered as server-sent `chat.completion.chunk`s ending in `data: [DONE]`:
// the text as content deltas, each tool call as a `tool_calls` delta with its id, name and
// arguments, the finish reason, and a usage chunk when `stream_options.include_usage` asks. A
// request without `stream` gets one `chat.completion`. Strict: a body that is not a Chat
// Completions request (no messages, a tool result naming no earlier call) is a 400, as the real
// API answers, so an agent that drifts from the wire fails the test instead of passing by luck.
import type { ServerResponse } from 'node:http';
import * as z from 'zod';
import { isErrorReply, isHangReply, textOf, type ModelApiFamily, type ModelReply, type ModelRequestView } from './scenario';

const ContentSchema = z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]);

const ToolCallSchema = z.discriminatedUnion('type', [
  z.looseObject({
    id: z.string().min(1),
    type: z.literal('function'),
    function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
  }),
  z.looseObject({
    id: z.string().min(1),
    type: z.literal('custom'),
    custom: z.looseObject({ name: z.string().min(1), input: z.string() }),
  }),
]);
const callName = (call: z.infer<typeof ToolCallSchema>): string => (call.type === 'function' ? call.function.name : call.custom.name);

/**
 * A function tool, or a custom (freeform) tool whose input is plain text under a grammar or none
 * (the API's `type: "custom"`; Copilot CLI offers its apply_patch so).
 */
const ToolSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) }),
  z.looseObject({ type: z.literal('custom'), custom: z.looseObject({ name: z.string().min(1) }) }),
]);
type Tool = z.infer<typeof ToolSchema>;
const toolName = (tool: Tool): string => (tool.type === 'function' ? tool.function.name : tool.custom.name);

const MessageSchema = z.discriminatedUnion('role', [
  z.looseObject({ role: z.enum(['system', 'developer']), content: ContentSchema }),
  z.looseObject({ role: z.literal('user'), content: ContentSchema }),
  z.looseObject({ role: z.literal('assistant'), content: ContentSchema.optional(), tool_calls: z.array(ToolCallSchema).optional() }),
  z.looseObject({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: ContentSchema }),
]);
type ChatMessage = z.infer<typeof MessageSchema>;

const RequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(MessageSchema).min(1),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  tools: z.array(ToolSchema).optional(),
  response_format: z.looseObject({ type: z.string() }).optional(),
});
export type ChatRequest = z.infer<typeof RequestSchema>;

/** Why a request breaks the wire, or undefined: each tool result answers a call made before it. */
function protocolError(request: ChatRequest): string | undefined {
  const called = new Set<string>();
  for (const [index, message] of request.messages.entries()) {
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) called.add(call.id);
    if (message.role === 'tool' && !called.has(message.tool_call_id)) {
      return `messages[${index}]: tool result for ${message.tool_call_id}, which no earlier assistant message called`;
    }
  }
  return undefined;
}

export function chatText(content: ChatMessage['content']): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
}

/** The request as a scenario round reads it: the newest user turn is what follows the last assistant message. */
export function openaiChatView(request: ChatRequest): Omit<ModelRequestView, 'round'> {
  const { messages } = request;
  let start = messages.length;
  while (start > 0 && messages[start - 1]?.role !== 'assistant') start -= 1;
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) names.set(call.id, callName(call));
  }
  const tail = messages.slice(start);
  const toolResults = tail
    .filter((message) => message.role === 'tool')
    .map((message) => {
      const content = chatText(message.content);
      const name = names.get(message.tool_call_id);
      // The wire has no error flag: agents say it in the text.
      return {
        id: message.tool_call_id,
        ...(name ? { name } : {}),
        content,
        isError: /^error|\berror\b|denied|cannot be executed/i.test(content),
      };
    });
  const text = tail
    .filter((message) => message.role === 'user')
    .map((message) => chatText(message.content))
    .join('\n');
  const allText = [
    ...(request.tools ?? []).map((tool) => JSON.stringify(tool.type === 'function' ? tool.function : tool.custom)),
    ...messages.map((message) =>
      message.role === 'assistant'
        ? [chatText(message.content), ...(message.tool_calls ?? []).map(textOf)].join('\n')
        : chatText(message.content),
    ),
  ].join('\n');
  return {
    model: request.model,
    allText,
    lastUser: { text, toolResults },
    toolNames: (request.tools ?? []).map(toolName),
  };
}

let counter = 0;
const nextId = (prefix: string): string => `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}`;

export type Answer = Exclude<ModelReply, { error: unknown } | { hang: true }>;

type ReplyCall =
  | { id: string; type: 'function'; function: { name: string; arguments: string } }
  | { id: string; type: 'custom'; custom: { name: string; input: string } };

/** Each call as the request's tools take it: a custom tool's input is the text of the call's `input.input`. */
function toolCallsOf(request: ChatRequest, reply: Answer): ReplyCall[] {
  const custom = new Set((request.tools ?? []).filter((tool) => tool.type === 'custom').map(toolName));
  return (reply.toolCalls ?? []).map((call): ReplyCall => {
    const id = call.id ?? nextId('call');
    if (!custom.has(call.name)) return { id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.input) } };
    if (typeof call.input.input !== 'string') throw new Error(`the custom tool ${call.name} takes its input as the text of input.input`);
    return { id, type: 'custom', custom: { name: call.name, input: call.input.input } };
  });
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function writeStream(response: ServerResponse, request: ChatRequest, reply: Answer): void {
  const id = nextId('chatcmpl');
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: request.model, choices, ...extra })}\n\n`;
  const calls = toolCallsOf(request, reply);
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
  if (reply.text) response.write(chunk([{ index: 0, delta: { content: reply.text }, finish_reason: null }]));
  calls.forEach((call, index) => {
    // As the API streams a call: id and name first, the arguments (a custom tool's input) after.
    const [head, rest] =
      call.type === 'function'
        ? [
            { type: 'function', function: { name: call.function.name, arguments: '' } },
            { function: { arguments: call.function.arguments } },
          ]
        : [{ type: 'custom', custom: { name: call.custom.name, input: '' } }, { custom: { input: call.custom.input } }];
    response.write(chunk([{ index: 0, delta: { tool_calls: [{ index, id: call.id, ...head }] }, finish_reason: null }]));
    response.write(chunk([{ index: 0, delta: { tool_calls: [{ index, ...rest }] }, finish_reason: null }]));
  });
  response.write(chunk([{ index: 0, delta: {}, finish_reason: calls.length ? 'tool_calls' : 'stop' }]));
  if (request.stream_options?.include_usage) response.write(chunk([], { usage: USAGE }));
  response.end('data: [DONE]\n\n');
}

function writeCompletion(response: ServerResponse, request: ChatRequest, reply: Answer): void {
  const calls = toolCallsOf(request, reply);
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      id: nextId('chatcmpl'),
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: reply.text ?? null, ...(calls.length ? { tool_calls: calls } : {}) },
          finish_reason: calls.length ? 'tool_calls' : 'stop',
        },
      ],
      usage: USAGE,
    }),
  );
}

function writeError(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ error: { message, type: status === 400 ? 'invalid_request_error' : 'server_error', code: null } }));
}

/**
 * The Chat Completions API. `isSideCall` tells an agent's own side requests (a title, a check)
 * from the conversation: they are answered with `sideReply` and take no round.
 */
export function openaiChatApi(
  options: { isSideCall?: (request: ChatRequest) => boolean; sideReply?: (request: ChatRequest) => Answer } = {},
): ModelApiFamily {
  return {
    name: 'OpenAI Chat Completions',
    handle(logged, response, nextRound) {
      const url = logged.url.split('?')[0] ?? '';
      if (logged.method !== 'POST' || !/\/chat\/completions$/.test(url)) return false;
      const parsed = RequestSchema.safeParse(logged.body);
      if (!parsed.success) {
        writeError(response, 400, `not a Chat Completions request: ${parsed.error.message}`);
        return true;
      }
      const request = parsed.data;
      const broken = protocolError(request);
      if (broken) {
        writeError(response, 400, broken);
        return true;
      }
      if (options.isSideCall?.(request)) {
        const reply = options.sideReply?.(request) ?? { text: 'scripted' };
        if (request.stream) writeStream(response, request, reply);
        else writeCompletion(response, request, reply);
        return true;
      }
      const { reply } = nextRound(openaiChatView(request));
      if (isHangReply(reply)) return true;
      if (isErrorReply(reply)) {
        writeError(response, reply.error.status, reply.error.message);
        return true;
      }
      if (request.stream) writeStream(response, request, reply);
      else writeCompletion(response, request, reply);
      return true;
    },
  };
}

// The Gemini API as Gemini CLI calls it (GOOGLE_GEMINI_BASE_URL, key in x-goog-api-key):
// POST /v1beta/models/<model>:streamGenerateContent?alt=sse for the conversation, answered as SSE
// chunks of `candidates[0].content.parts` (text or functionCall); the agent sends tool results
// back as functionResponse parts. Its side calls (the model router's generateContent with a JSON
// schema, token counts) are answered outside the scenario; every request is logged.
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

interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { name?: string; args?: unknown; id?: string };
  functionResponse?: { name?: string; response?: { output?: unknown; error?: unknown }; id?: string };
}

interface GeminiContent {
  role?: string;
  parts?: GeminiPart[];
}

interface GeminiRequest {
  contents?: GeminiContent[];
  systemInstruction?: GeminiContent | string;
  tools?: Array<{ functionDeclarations?: Array<{ name?: string }> }>;
  generationConfig?: { responseJsonSchema?: unknown; responseSchema?: unknown };
}

/** The request as a scenario round reads it. */
export function geminiView(model: string, request: GeminiRequest): Omit<ModelRequestView, 'round'> {
  const contents = request.contents ?? [];
  const lastUser = [...contents].reverse().find((content) => content.role === 'user');
  const parts = lastUser?.parts ?? [];
  const toolResults: ToolResultView[] = parts
    .filter((part) => part.functionResponse)
    .map((part) => {
      const response = part.functionResponse?.response ?? {};
      const isError = response.error !== undefined;
      return {
        ...(part.functionResponse?.id ? { id: part.functionResponse.id } : {}),
        ...(part.functionResponse?.name ? { name: part.functionResponse.name } : {}),
        content: textOf(isError ? response.error : (response.output ?? response)),
        isError,
      };
    });
  const text = parts
    .filter((part) => typeof part.text === 'string' && !part.thought)
    .map((part) => part.text)
    .join('\n');
  const system =
    typeof request.systemInstruction === 'string'
      ? request.systemInstruction
      : (request.systemInstruction?.parts ?? []).map((part) => part.text ?? '').join('\n');
  const allText = [
    system,
    ...(request.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration) => JSON.stringify(declaration))),
    ...contents.flatMap((content) =>
      (content.parts ?? []).map((part) => part.text ?? textOf(part.functionResponse?.response ?? part.functionCall ?? '')),
    ),
  ].join('\n');
  return {
    model,
    allText,
    lastUser: { text, toolResults },
    toolNames: (request.tools ?? [])
      .flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration) => declaration.name ?? ''))
      .filter(Boolean),
  };
}

function replyParts(reply: Exclude<ModelReply, { error: unknown } | { hang: true }>): GeminiPart[] {
  const parts: GeminiPart[] = [];
  if (reply.text) parts.push({ text: reply.text });
  for (const call of reply.toolCalls ?? []) parts.push({ functionCall: { name: call.name, args: call.input } });
  return parts;
}

function candidateChunk(model: string, parts: GeminiPart[]): Record<string, unknown> {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: model,
  };
}

/** A value that fits a JSON schema's required properties (the router asks for a complexity score). */
function fillSchema(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object') return {};
  const record = schema as { type?: string; properties?: Record<string, unknown>; items?: unknown; enum?: unknown[] };
  if (Array.isArray(record.enum) && record.enum.length) return record.enum[0];
  switch ((record.type ?? 'object').toLowerCase()) {
    case 'string':
      return 'scripted';
    case 'integer':
    case 'number':
      return 10;
    case 'boolean':
      return false;
    case 'array':
      return [];
    default:
      return Object.fromEntries(Object.entries(record.properties ?? {}).map(([key, value]) => [key, fillSchema(value)]));
  }
}

function writeError(response: ServerResponse, status: number, message: string): void {
  const statusName =
    status === 400
      ? 'INVALID_ARGUMENT'
      : status === 401
        ? 'UNAUTHENTICATED'
        : status === 403
          ? 'PERMISSION_DENIED'
          : status === 429
            ? 'RESOURCE_EXHAUSTED'
            : 'INTERNAL';
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ error: { code: status, message, status: statusName } }));
}

const MODEL_CALL = /^\/v1beta\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/;

export const geminiApi: ModelApiFamily = {
  name: 'Gemini',
  handle(logged, response, nextRound) {
    const match = MODEL_CALL.exec(logged.url.split('?')[0] ?? '');
    if (logged.method !== 'POST' || !match) return false;
    const model = match[1] ?? 'gemini-scripted';
    const method = match[2];
    const request = (logged.body ?? {}) as GeminiRequest;
    if (method === 'countTokens') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ totalTokens: 10 }));
      return true;
    }
    if (method === 'generateContent') {
      // Side calls (routing, checks) ask for JSON by schema; anything else gets plain text.
      const schema = request.generationConfig?.responseJsonSchema ?? request.generationConfig?.responseSchema;
      const text = schema ? JSON.stringify(fillSchema(schema)) : 'scripted';
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(candidateChunk(model, [{ text }])));
      return true;
    }
    const { reply } = nextRound(geminiView(model, request));
    if (isHangReply(reply)) return true;
    if (isErrorReply(reply)) {
      writeError(response, reply.error.status, reply.error.message);
      return true;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.end(`data: ${JSON.stringify(candidateChunk(model, replyParts(reply)))}\r\n\r\n`);
    return true;
  },
};

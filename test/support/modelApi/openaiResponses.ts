// A scripted OpenAI Responses API on 127.0.0.1, as Codex (through codex-acp) calls it: `POST
// {base_url}/responses` with `stream: true`, answered as server-sent events. Each model request
// takes the next round of a scenario (a reply, tool calls, or a failure); every request is logged
// so a test can assert what the model was sent. Codex's own side request (a thread title after
// the first turn) is answered without using a round. Anything else Codex asks (model lists, …) is
// logged and answered 404, which Codex treats as "not offered".
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server received it. */
export interface LoggedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined for no body or not JSON). */
  body: unknown;
  /** Which scenario round answered it (model requests only). */
  round?: number;
  /** A request Codex makes on its own (the thread title), answered without using a round. */
  side?: 'title';
}

/** A tool call the scripted model makes: a function tool (JSON arguments) or a custom (freeform) tool. */
export type ScriptedCall =
  | { type: 'function'; name: string; arguments: Record<string, unknown>; callId?: string }
  | { type: 'custom'; name: string; input: string; callId?: string };

/** What the model answers in one round. */
export type ModelReply =
  | { text?: string; calls?: ScriptedCall[] }
  /** An HTTP error (a model that is down or refuses the key). */
  | { httpError: number; message?: string }
  /** The stream starts, then the connection drops without `response.completed`. */
  | { dropStream: true };

/** A round: a fixed reply, or one computed from the request (to answer what the model was sent). */
export type Round = ModelReply | ((request: LoggedRequest) => ModelReply);

export interface ScriptedResponsesApi {
  /** The base URL to put in a `model_providers` entry (ends with /v1). */
  readonly baseUrl: string;
  readonly requests: LoggedRequest[];
  /** Model requests only (POST …/responses). */
  modelRequests(): LoggedRequest[];
  /** Rounds not yet used. */
  readonly remainingRounds: number;
  /** Adds rounds at the end of the scenario. */
  push(...rounds: Round[]): void;
  /** Resolves when `count` model requests have arrived (bounded). */
  waitForModelRequests(count: number, timeoutMs?: number): Promise<LoggedRequest[]>;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 20 * 1024 * 1024;

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function sse(response: ServerResponse, type: string, data: Record<string, unknown>): void {
  response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

let counter = 0;
const nextId = (prefix: string): string => `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}`;

function outputItems(reply: { text?: string; calls?: ScriptedCall[] }): Array<Record<string, unknown>> {
  const items: Array<Record<string, unknown>> = [];
  if (reply.text !== undefined) {
    items.push({
      type: 'message',
      id: nextId('msg'),
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: reply.text, annotations: [] }],
    });
  }
  for (const call of reply.calls ?? []) {
    const callId = call.callId ?? nextId('call');
    if (call.type === 'function') {
      items.push({
        type: 'function_call',
        id: nextId('fc'),
        call_id: callId,
        name: call.name,
        arguments: JSON.stringify(call.arguments),
        status: 'completed',
      });
    } else {
      items.push({ type: 'custom_tool_call', id: nextId('ctc'), call_id: callId, name: call.name, input: call.input, status: 'completed' });
    }
  }
  return items;
}

function streamReply(response: ServerResponse, reply: { text?: string; calls?: ScriptedCall[] }): void {
  const responseId = nextId('resp');
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  sse(response, 'response.created', { response: { id: responseId, status: 'in_progress' } });
  let index = 0;
  for (const item of outputItems(reply)) {
    // As the API streams a message: the item starts empty, its text comes as deltas, the done item holds it all.
    const started = item.type === 'message' ? { ...item, status: 'in_progress', content: [] } : { ...item, status: 'in_progress' };
    sse(response, 'response.output_item.added', { output_index: index, item: started });
    if (item.type === 'message') {
      const text = ((item.content as Array<{ text: string }>)[0] as { text: string }).text;
      const part = { type: 'output_text', text: '', annotations: [] };
      sse(response, 'response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part });
      sse(response, 'response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta: text });
      sse(response, 'response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text });
      sse(response, 'response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part: { ...part, text } });
    }
    sse(response, 'response.output_item.done', { output_index: index, item });
    index += 1;
  }
  sse(response, 'response.completed', {
    response: {
      id: responseId,
      status: 'completed',
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 10,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 20,
      },
    },
  });
  response.end();
}

function isTitleRequest(body: unknown): boolean {
  const format = (body as { text?: { format?: { type?: unknown; schema?: { properties?: Record<string, unknown> } } } } | undefined)?.text
    ?.format;
  return format?.type === 'json_schema' && !!format.schema?.properties && 'title' in format.schema.properties;
}

/** Starts the scripted model on 127.0.0.1 (an ephemeral port). */
export async function startScriptedResponses(rounds: Round[] = []): Promise<ScriptedResponsesApi> {
  const script: Round[] = [...rounds];
  const requests: LoggedRequest[] = [];
  let used = 0;
  const waiters = new Set<() => void>();
  const sockets = new Set<import('node:net').Socket>();

  const server: Server = createServer((request, response) => {
    void (async () => {
      let raw = '';
      try {
        raw = await readBody(request);
      } catch (error) {
        response.writeHead(413).end(String(error));
        return;
      }
      let body: unknown;
      try {
        body = raw ? (JSON.parse(raw) as unknown) : undefined;
      } catch {
        body = undefined;
      }
      const url = request.url ?? '/';
      const logged: LoggedRequest = { method: request.method ?? 'GET', path: url, headers: request.headers, body };
      requests.push(logged);
      const isModelCall = logged.method === 'POST' && /\/responses(\?|$)/.test(url);
      if (!isModelCall) {
        response
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `not scripted: ${logged.method} ${url}` } }));
        for (const wake of waiters) wake();
        return;
      }
      if (isTitleRequest(body)) {
        // After a first turn Codex asks the model for a thread title (a JSON schema with `title`):
        // not a planning step, so it takes no round.
        logged.side = 'title';
        for (const wake of waiters) wake();
        streamReply(response, { text: JSON.stringify({ title: 'Scripted session' }) });
        return;
      }
      const round = script[used];
      logged.round = used;
      used += 1;
      for (const wake of waiters) wake();
      if (round === undefined) {
        response.writeHead(500, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: { message: `the scripted model has no round ${used} (the scenario has ${script.length})`, type: 'server_error' },
          }),
        );
        return;
      }
      const reply = typeof round === 'function' ? round(logged) : round;
      if ('httpError' in reply) {
        response
          .writeHead(reply.httpError, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: reply.message ?? `scripted error ${reply.httpError}`, type: 'invalid_request_error' } }));
        return;
      }
      if ('dropStream' in reply) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        sse(response, 'response.created', { response: { id: nextId('resp'), status: 'in_progress' } });
        response.socket?.destroy();
        return;
      }
      streamReply(response, reply);
    })();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const modelRequests = (): LoggedRequest[] => requests.filter((entry) => entry.round !== undefined);

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    modelRequests,
    get remainingRounds() {
      return Math.max(0, script.length - used);
    },
    push: (...more) => {
      script.push(...more);
    },
    waitForModelRequests: (count, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          if (modelRequests().length < count) return false;
          cleanup();
          resolve(modelRequests());
          return true;
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`the scripted model got ${modelRequests().length} requests, wanted ${count}, within ${timeoutMs} ms`));
        }, timeoutMs);
        const wake = (): void => void check();
        const cleanup = (): void => {
          clearTimeout(timer);
          waiters.delete(wake);
        };
        waiters.add(wake);
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Reading what the model was sent.

type InputItem = Record<string, unknown>;

/** The `input` items of a Responses request. */
export function inputItems(request: LoggedRequest): InputItem[] {
  const body = request.body as { input?: unknown } | undefined;
  return Array.isArray(body?.input) ? (body.input as InputItem[]) : [];
}

function itemText(item: InputItem): string {
  const content = item.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '',
    )
    .join('');
}

/** The texts of the user messages in a request, in order. */
export function userTexts(request: LoggedRequest): string[] {
  return inputItems(request)
    .filter((item) => item.type === 'message' && item.role === 'user')
    .map(itemText);
}

/** The output Codex sent back for a tool call (function or custom), if the request holds it. */
export function toolOutput(request: LoggedRequest, callId: string): string | undefined {
  for (const item of inputItems(request)) {
    if ((item.type === 'function_call_output' || item.type === 'custom_tool_call_output') && item.call_id === callId) {
      const output = item.output;
      if (typeof output === 'string') return output;
      if (output && typeof output === 'object') {
        const content = (output as { content?: unknown }).content;
        if (typeof content === 'string') return content;
        return JSON.stringify(output);
      }
    }
  }
  return undefined;
}

/** The names of the tools a request offers the model. */
export function toolNames(request: LoggedRequest): string[] {
  const body = request.body as { tools?: unknown } | undefined;
  if (!Array.isArray(body?.tools)) return [];
  return (body.tools as Array<Record<string, unknown>>).map((tool) => String(tool.name ?? tool.type));
}

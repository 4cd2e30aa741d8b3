// The shared core of the scripted model APIs: an HTTP server on 127.0.0.1 that logs every request
// and answers the agent's model calls round by round from a scenario. What a round sees and says
// is wire-neutral (text, tool calls, tool results); each API family (anthropic.ts, gemini.ts, …)
// parses its own requests into a ModelRequestView and writes a ModelReply in its own wire format.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { waitFor } from '../wait';
import { errorMessage } from '../../../src/core/errors';

/** A tool result the agent sent back to the model. */
export interface ToolResultView {
  /** The tool call's id, when the wire format has one. */
  id?: string;
  /** The tool's name (looked up from the call when the result does not carry it). */
  name?: string;
  content: string;
  isError: boolean;
}

/** A model request as a scenario round reads it. */
export interface ModelRequestView {
  /** 0 for the first round of the scenario. */
  round: number;
  /** The model the agent asked for. */
  model: string;
  /** Every piece of text in the request (system prompt, messages, tool results), for lookups. */
  allText: string;
  /** The newest user-side turn: its text, and the tool results it carries. */
  lastUser: { text: string; toolResults: ToolResultView[] };
  /** The tools offered to the model. */
  toolNames: string[];
}

export interface ToolCallReply {
  name: string;
  input: Record<string, unknown>;
  /** Generated when absent. */
  id?: string;
}

/**
 * What the model answers: text and/or tool calls (stop reason "tool use" when there are calls),
 * an HTTP error, or no answer at all until the server closes.
 */
export type ModelReply = { text?: string; toolCalls?: ToolCallReply[] } | { error: { status: number; message: string } } | { hang: true };

/** One round: the request in, the reply out. */
export type ScenarioRound = (request: ModelRequestView) => ModelReply;

/** A logged HTTP request. */
export interface LoggedRequest {
  seq: number;
  method: string;
  /** Path and query. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined when empty or not JSON). */
  body: unknown;
  /** The scenario round this request was, or undefined for an auxiliary call (titles, routing…). */
  round?: number;
  /** The view the round saw. */
  view?: ModelRequestView;
}

/** What an API family does with one request. */
export interface ModelApiFamily {
  readonly name: string;
  /**
   * Handles a request. Returns false when the path is not this API's (the server answers 404).
   * `nextRound` runs the scenario for a model call and logs it as a round.
   */
  handle(
    request: LoggedRequest,
    response: ServerResponse,
    nextRound: (view: Omit<ModelRequestView, 'round'>) => { round: number; reply: ModelReply },
  ): boolean | Promise<boolean>;
}

/** Rounds played in order; past the end, the model says so in plain text (and the log shows it). */
export class Scenario {
  private next = 0;
  readonly overruns: number[] = [];
  /** What each request past the end was about (its start and its last user text), to tell why it came. */
  readonly overrunRequests: string[] = [];

  constructor(private readonly rounds: readonly ScenarioRound[]) {}

  get played(): number {
    return this.next;
  }

  play(view: Omit<ModelRequestView, 'round'>): { round: number; reply: ModelReply } {
    const round = this.next++;
    const step = this.rounds[round];
    if (!step) {
      this.overruns.push(round);
      this.overrunRequests.push(`${view.allText.slice(0, 200)} … last user: ${view.lastUser.text.slice(0, 200)}`);
      return { round, reply: { text: `(the scripted model has no round ${round + 1})` } };
    }
    return { round, reply: step({ ...view, round }) };
  }
}

/** A scripted model API on 127.0.0.1, logging every request. */
export class ScriptedModelServer {
  readonly requests: LoggedRequest[] = [];
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();
  private readonly waiters = new Set<() => void>();
  private seq = 0;

  constructor(
    private readonly family: ModelApiFamily,
    readonly scenario: Scenario,
  ) {}

  async start(): Promise<string> {
    const server = createServer((req, res) => void this.onRequest(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return this.url;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('the scripted model server is not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  /** The requests that were scenario rounds, in order. */
  get rounds(): LoggedRequest[] {
    return this.requests.filter((request) => request.round !== undefined);
  }

  /** Resolves with the round once `count` rounds were asked (bounded). */
  waitForRound(count: number, timeoutMs: number): Promise<LoggedRequest> {
    return this.waitFor(() => this.rounds[count - 1], timeoutMs, `model round ${count} (got ${this.rounds.length})`);
  }

  waitFor<T>(predicate: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return waitFor(predicate, {
      message: what,
      timeoutMs,
      wakeOn: (wake) => {
        this.waiters.add(wake);
        return () => this.waiters.delete(wake);
      },
      detail: () => `requests: ${this.describe()}`,
    });
  }

  /** One line per request, for failure messages. */
  describe(): string {
    return this.requests
      .map((request) => {
        // The Anthropic and OpenAI SDKs number their own retries: a round asked twice shows here.
        const retry = request.headers['x-stainless-retry-count'];
        return `#${request.seq} ${request.method} ${request.url}${request.round === undefined ? '' : ` round ${request.round}`}${retry && retry !== '0' ? ` (retry ${String(retry)})` : ''}`;
      })
      .join('; ');
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.hanging.clear();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
    const logged: LoggedRequest = { seq: ++this.seq, method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body };
    this.requests.push(logged);
    try {
      const handled = await this.family.handle(logged, res, (view) => {
        const played = this.scenario.play(view);
        logged.round = played.round;
        logged.view = { ...view, round: played.round };
        if ('hang' in played.reply) this.hanging.add(res);
        return played;
      });
      if (!handled) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `the scripted ${this.family.name} API has no ${req.method} ${req.url}` } }));
      }
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: `the scripted ${this.family.name} API failed: ${errorMessage(error)}` },
        }),
      );
    } finally {
      for (const waiter of [...this.waiters]) waiter();
    }
  }
}

/** The reply's HTTP error, when it is one (answered the same way by every family: status + JSON). */
export function isErrorReply(reply: ModelReply): reply is { error: { status: number; message: string } } {
  return 'error' in reply;
}

export function isHangReply(reply: ModelReply): reply is { hang: true } {
  return 'hang' in reply;
}

/** Text of a value that may be a string, a list of text blocks, or anything JSON. */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).join('\n');
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (typeof record.text === 'string') return record.text;
    return JSON.stringify(value);
  }
  return value === undefined || value === null ? '' : String(value);
}

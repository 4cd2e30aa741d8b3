// A stand-in for the Jules REST API (v1alpha) on 127.0.0.1, strict where the reference is: it
// takes only the methods, paths, query parameters and body fields the reference defines and
// refuses anything else as Google's APIs do (google.rpc.Status bodies), and it plays a scripted
// Jules: a plan, a revised plan for each message while a plan waits, execution after approval.
//
// From the reference (https://developers.google.com/jules/api/reference/rest), quoted:
// - sessions.create "POST https://jules.googleapis.com/v1alpha/sessions"; "The request body contains
//   an instance of Session." Session: "name" ("Output only. Identifier. The full resource name
//   (e.g., "sessions/{session}")"), "id", "prompt" ("Required. The prompt to start the session
//   with."), "sourceContext" ("Required. The source to use in this session, with additional
//   context."; SourceContext {"source": "Required. … Format: sources/{source}", union "context":
//   "githubRepoContext"} and GitHubRepoContext {"startingBranch"}), "title" ("Optional. If not
//   provided, the system will generate one."), "requirePlanApproval" ("Optional. Input only. If
//   true, plans the agent generates will require explicit plan approval before the agent starts
//   working. If not set, plans will be auto-approved."), "automationMode", "createTime",
//   "updateTime", "state", "url" ("Output only. The URL of the session to view the session in the
//   Jules web app."), "outputs".
//   State: STATE_UNSPECIFIED, QUEUED, PLANNING, AWAITING_PLAN_APPROVAL, AWAITING_USER_FEEDBACK,
//   IN_PROGRESS, PAUSED, FAILED, COMPLETED (https://jules.google/docs/api/reference/types).
// - sessions.get "GET https://jules.googleapis.com/v1alpha/{name=sessions/*}".
// - sessions.approvePlan "POST https://jules.googleapis.com/v1alpha/{session=sessions/*}:approvePlan";
//   "The request body must be empty."; "If successful, the response body is empty."
// - sessions.sendMessage "POST …/v1alpha/{session=sessions/*}:sendMessage"; body {"prompt": string}
//   ("Required. The user prompt to send to the session."); "If successful, the response body is empty."
// - sessions.list "GET https://jules.googleapis.com/v1alpha/sessions" ("Lists all sessions.");
//   "pageSize": "Optional. The number of sessions to return. Must be between 1 and 100, inclusive.
//   If unset, defaults to 30. If set to greater than 100, it will be coerced to 100."; "pageToken":
//   "Optional. A page token, received from a previous sessions.list call."; "The request body must
//   be empty."; response {"sessions": [Session], "nextPageToken": string} ("A token, which can be
//   sent as pageToken to retrieve the next page. If this field is omitted, there are no subsequent
//   pages."). The order is not stated: the stand-in lists oldest first, so a client cannot lean on it.
//   (https://developers.google.com/jules/api/reference/rest/v1alpha/sessions/list)
// - sessions.activities.list "GET …/v1alpha/{parent=sessions/*}/activities"; "pageSize": "Optional.
//   The number of activities to return. Must be between 1 and 100, inclusive. If unset, defaults to
//   50. If set to greater than 100, it will be coerced to 100."; "pageToken": "Optional. A page
//   token, received from a previous activities.list call."; response {"activities": [Activity],
//   "nextPageToken": string} ("If this field is omitted, there are no subsequent pages.").
// - Activity: "name" ("sessions/{session}/activities/{activity}"), "id", "description",
//   "createTime", "originator" ("e.g. "user", "agent", "system""), "artifacts" [Artifact: changeSet
//   {source, gitPatch {unidiffPatch, baseCommitId, suggestedCommitMessage}}, media, bashOutput], and
//   "Union field activity … can be only one of the following": agentMessaged {agentMessage},
//   userMessaged {userMessage}, planGenerated {plan: Plan {id, steps: [PlanStep {id, title,
//   description, index}], createTime}}, planApproved {planId}, progressUpdated {title,
//   description}, sessionCompleted {}, sessionFailed {reason}.
// - The key: the "x-goog-api-key" header (https://jules.google/docs/api/reference/sessions).
// Not in the reference, and so off unless a test turns it on: ETag / If-None-Match (`etags`).
// Google's general behaviour (not Jules's pages): an unknown key is 400 INVALID_ARGUMENT with reason
// API_KEY_INVALID; no key is 401 UNAUTHENTICATED; an unknown field is 400 "Unknown name".
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';

type Json = Record<string, unknown>;

export type StandInFault =
  | { status: number; message?: string; statusText?: string; retryAfter?: string }
  | { drop: true }
  | { malformed: true }
  /** 200 with this JSON body: well-formed JSON that is not what the reference describes. */
  | { body: unknown };

interface StandInSession {
  id: string;
  prompt: string;
  title: string;
  source: string;
  branch: string | undefined;
  requirePlanApproval: boolean;
  state: string;
  createTime: string;
  updateTime: string;
  activities: Json[];
  plans: number;
  /** Execution activities still to come after approval, one per activities.list call. */
  toCome: Json[];
  planned: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: string;
  body: string;
  /** Whether the request carried the right key (never the key itself). */
  keyOk: boolean;
  ifNoneMatch: string | undefined;
}

export interface StandInOptions {
  key: string;
  /** The largest page the stand-in returns (the reference's bound is 100). */
  maxPageSize?: number;
  /** Send ETags and answer If-None-Match with 304 (not in the reference). */
  etags?: boolean;
}

function googleError(res: ServerResponse, code: number, status: string, message: string, details?: Json[]): void {
  const body = JSON.stringify({ error: { code, message, status, ...(details ? { details } : {}) } });
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' }).end(body);
}

const CREATE_FIELDS = new Set([
  'prompt',
  'title',
  'sourceContext',
  'requirePlanApproval',
  'automationMode',
  'name',
  'id',
  'state',
  'url',
  'outputs',
  'createTime',
  'updateTime',
]);
const SOURCE_CONTEXT_FIELDS = new Set(['source', 'githubRepoContext']);
const REPO_CONTEXT_FIELDS = new Set(['startingBranch']);

function unknownField(value: Json, allowed: Set<string>, at: string): string | undefined {
  const bad = Object.keys(value).find((k) => !allowed.has(k));
  return bad === undefined ? undefined : `Invalid JSON payload received. Unknown name "${bad}" at '${at}': Cannot find field.`;
}

export class JulesStandIn {
  readonly requests: RecordedRequest[] = [];
  readonly sessions = new Map<string, StandInSession>();
  readonly #faults: Array<{ match: RegExp; fault: StandInFault; query: RegExp | undefined }> = [];
  readonly #o: StandInOptions;
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #next = 14550388554331055000n;
  #activity = 0;
  #clock = Date.parse('2026-12-03T23:00:00Z');

  constructor(options: StandInOptions) {
    this.#o = options;
  }

  /** http://127.0.0.1:<port>/v1alpha */
  baseUrl = '';

  async start(): Promise<this> {
    const server = createServer((req, res) => void this.#handle(req, res));
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1alpha`;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  /** The next request whose "METHOD path" matches (and its query string `query`, when given) gets this fault instead of its answer. */
  failNext(match: RegExp, fault: StandInFault, query?: RegExp): void {
    this.#faults.push({ match, fault, query });
  }

  /** Puts a session into a state (a test of what the follower does with it). */
  setState(sessionId: string, state: string): void {
    this.#session(sessionId).state = state;
  }

  /** Appends a raw activity, as the service would (a test's own, even a malformed one). */
  pushActivity(sessionId: string, activity: Json): void {
    this.#session(sessionId).activities.push(activity);
  }

  #session(id: string): StandInSession {
    const session = this.sessions.get(id);
    if (!session) throw new Error(`no stand-in session ${id}`);
    return session;
  }

  #time(): string {
    this.#clock += 1_000;
    return new Date(this.#clock).toISOString();
  }

  #add(session: StandInSession, originator: string, member: Json, artifacts?: Json[]): Json {
    const id = `a${(++this.#activity).toString().padStart(6, '0')}`;
    const activity: Json = { name: `sessions/${session.id}/activities/${id}`, id, createTime: this.#time(), originator, ...member };
    if (artifacts) activity.artifacts = artifacts;
    session.activities.push(activity);
    session.updateTime = activity.createTime as string;
    return activity;
  }

  #plan(session: StandInSession, feedback: string | undefined): void {
    session.plans++;
    const planId = `plan${session.plans}`;
    const steps = [
      {
        id: `${planId}s0`,
        title: `Read the code the task touches: ${session.prompt.split('\n')[0]!.slice(0, 80)}`,
        description: '',
        index: 0,
      },
      { id: `${planId}s1`, title: 'Create hello.txt', description: 'With a greeting.', index: 1 },
    ];
    if (feedback !== undefined)
      steps.push({ id: `${planId}s2`, title: `Address the review: ${feedback.split('\n')[0]!.slice(0, 200)}`, description: '', index: 2 });
    this.#add(session, 'agent', { planGenerated: { plan: { id: planId, steps, createTime: this.#time() } } });
    if (session.requirePlanApproval) session.state = 'AWAITING_PLAN_APPROVAL';
    else this.#approve(session, planId, 'system');
  }

  #approve(session: StandInSession, planId: string, originator: string): void {
    this.#add(session, originator, { planApproved: { planId } });
    session.state = 'IN_PROGRESS';
    const patch = '--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+hello\n';
    session.toCome = [
      {
        originator: 'agent',
        member: { progressUpdated: { title: 'Created hello.txt', description: 'Wrote the greeting.' } },
        artifacts: [{ changeSet: { source: session.source, gitPatch: { unidiffPatch: patch, baseCommitId: 'abc123' } } }],
      },
      { originator: 'agent', member: { sessionCompleted: {} }, state: 'COMPLETED' },
    ];
  }

  /** Jules works between reads: planning on the first, one execution step on each after approval. */
  #work(session: StandInSession): void {
    if (!session.planned) {
      session.planned = true;
      session.state = 'PLANNING';
      this.#plan(session, undefined);
      return;
    }
    const next = session.toCome.shift() as { originator: string; member: Json; artifacts?: Json[]; state?: string } | undefined;
    if (!next) return;
    this.#add(session, next.originator, next.member, next.artifacts);
    if (next.state) session.state = next.state;
  }

  #view(session: StandInSession): Json {
    return {
      name: `sessions/${session.id}`,
      id: session.id,
      prompt: session.prompt,
      title: session.title,
      sourceContext: { source: session.source, ...(session.branch ? { githubRepoContext: { startingBranch: session.branch } } : {}) },
      state: session.state,
      url: `https://jules.google.com/session/${session.id}`,
      createTime: session.createTime,
      updateTime: session.updateTime,
    };
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const key = req.headers['x-goog-api-key'];
    this.requests.push({
      method,
      path: url.pathname,
      query: url.search,
      body,
      keyOk: key === this.#o.key,
      ifNoneMatch: typeof req.headers['if-none-match'] === 'string' ? req.headers['if-none-match'] : undefined,
    });

    const line = `${method} ${url.pathname}`;
    const at = this.#faults.findIndex((f) => f.match.test(line) && (f.query === undefined || f.query.test(url.search)));
    if (at !== -1) {
      const { fault } = this.#faults.splice(at, 1)[0]!;
      if ('drop' in fault) return void req.socket.destroy();
      if ('malformed' in fault) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"name": "sessions/1", "id": ');
      if ('body' in fault) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(fault.body));
      if (fault.retryAfter) res.setHeader('retry-after', fault.retryAfter);
      return googleError(res, fault.status, fault.statusText ?? 'UNAVAILABLE', fault.message ?? 'The service is currently unavailable.');
    }

    if (key === undefined) {
      return googleError(
        res,
        401,
        'UNAUTHENTICATED',
        'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    }
    if (key !== this.#o.key) {
      return googleError(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' },
      ]);
    }

    const notFound = () => googleError(res, 404, 'NOT_FOUND', `Method not found: ${method} ${url.pathname}`);
    let json: unknown;
    if (body.trim() !== '') {
      try {
        json = JSON.parse(body);
      } catch {
        return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
      }
    }
    const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
    const noQuery = () =>
      url.search === ''
        ? undefined
        : googleError(
            res,
            400,
            'INVALID_ARGUMENT',
            `Invalid JSON payload received. Unknown name "${[...url.searchParams.keys()][0]}": Cannot bind query parameter.`,
          );

    if (url.pathname === '/v1alpha/sessions' && method === 'POST') {
      if (noQuery() !== undefined) return;
      if (!isObject(json)) return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
      const bad =
        unknownField(json, CREATE_FIELDS, 'session') ??
        (isObject(json.sourceContext) ? unknownField(json.sourceContext, SOURCE_CONTEXT_FIELDS, 'session.source_context') : undefined) ??
        (isObject(json.sourceContext) && isObject(json.sourceContext.githubRepoContext)
          ? unknownField(json.sourceContext.githubRepoContext, REPO_CONTEXT_FIELDS, 'session.source_context.github_repo_context')
          : undefined);
      if (bad) return googleError(res, 400, 'INVALID_ARGUMENT', bad);
      const context = json.sourceContext;
      if (typeof json.prompt !== 'string' || json.prompt === '') return googleError(res, 400, 'INVALID_ARGUMENT', 'prompt is required.');
      if (!isObject(context) || typeof context.source !== 'string' || !context.source.startsWith('sources/')) {
        return googleError(res, 400, 'INVALID_ARGUMENT', 'source_context.source is required (format: sources/{source}).');
      }
      const branch = isObject(context.githubRepoContext) ? context.githubRepoContext.startingBranch : undefined;
      if (branch !== undefined && typeof branch !== 'string')
        return googleError(res, 400, 'INVALID_ARGUMENT', 'startingBranch must be a string.');
      const id = (this.#next++).toString();
      const now = this.#time();
      const session: StandInSession = {
        id,
        prompt: json.prompt,
        title: typeof json.title === 'string' ? json.title : json.prompt.slice(0, 40),
        source: context.source,
        branch,
        requirePlanApproval: json.requirePlanApproval === true,
        state: 'QUEUED',
        createTime: now,
        updateTime: now,
        activities: [],
        plans: 0,
        toCome: [],
        planned: false,
      };
      this.sessions.set(id, session);
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.#view(session)));
    }

    if (url.pathname === '/v1alpha/sessions' && method === 'GET') return this.#list(req, res, url, body);

    const match = /^\/v1alpha\/sessions\/([^/:]+)(\/activities|:approvePlan|:sendMessage)?$/.exec(url.pathname);
    if (!match) return notFound();
    const [, id, tail] = match;
    const session = this.sessions.get(id!);
    const expected = tail === undefined || tail === '/activities' ? 'GET' : 'POST';
    if (method !== expected) return notFound();
    if (!session) return googleError(res, 404, 'NOT_FOUND', `Requested entity was not found.`);

    if (tail === undefined) {
      if (noQuery() !== undefined) return;
      return this.#answer(req, res, this.#view(session));
    }
    if (tail === '/activities') {
      const paging = this.#paging(res, url, { defaultSize: 50, prefix: 'p', length: session.activities.length });
      if (!paging) return;
      const { start, asked, size } = paging;
      if (url.searchParams.get('pageToken') === null || start === session.activities.length || session.activities.length - start <= asked)
        this.#work(session);
      const page = session.activities.slice(start, start + size);
      const answer: Json = {};
      if (page.length > 0) answer.activities = page;
      if (start + size < session.activities.length) answer.nextPageToken = `p${start + size}`;
      return this.#answer(req, res, answer);
    }
    if (tail === ':approvePlan') {
      if (noQuery() !== undefined) return;
      if (json !== undefined && !(isObject(json) && Object.keys(json).length === 0)) {
        return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. The request body must be empty.');
      }
      if (session.state !== 'AWAITING_PLAN_APPROVAL')
        return googleError(res, 400, 'FAILED_PRECONDITION', `Session is ${session.state}: no plan awaits approval.`);
      const last = [...session.activities].reverse().find((a) => isObject(a.planGenerated));
      const planId = ((last?.planGenerated as Json).plan as Json).id as string;
      this.#approve(session, planId, 'user');
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    }
    // :sendMessage
    if (noQuery() !== undefined) return;
    if (!isObject(json)) return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    const bad = unknownField(json, new Set(['prompt']), 'prompt');
    if (bad) return googleError(res, 400, 'INVALID_ARGUMENT', bad);
    if (typeof json.prompt !== 'string' || json.prompt === '') return googleError(res, 400, 'INVALID_ARGUMENT', 'prompt is required.');
    this.#add(session, 'user', { userMessaged: { userMessage: json.prompt } });
    if (session.state === 'AWAITING_PLAN_APPROVAL') {
      this.#add(session, 'agent', { agentMessaged: { agentMessage: 'Thanks, I will revise the plan.' } });
      this.#plan(session, json.prompt);
    } else {
      this.#add(session, 'agent', { agentMessaged: { agentMessage: 'Noted.' } });
    }
    return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  }

  /** sessions.list: every session, oldest first, `pageSize` at a time (default 30, at most 100). */
  #list(req: IncomingMessage, res: ServerResponse, url: URL, body: string): void {
    if (body.trim() !== '')
      return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. The request body must be empty.');
    const all = [...this.sessions.values()];
    const paging = this.#paging(res, url, { defaultSize: 30, prefix: 's', length: all.length });
    if (!paging) return;
    const { start, size } = paging;
    const page = all.slice(start, start + size);
    const answer: Json = {};
    if (page.length > 0) answer.sessions = page.map((session) => this.#view(session));
    if (start + size < all.length) answer.nextPageToken = `s${start + size}`;
    this.#answer(req, res, answer);
  }

  /**
   * A list call's pageSize and pageToken as the reference bounds them (only these two parameters;
   * 1 to 100, coerced to 100 above it); undefined when the request was refused (answered here).
   * Tokens are `<prefix><offset>`.
   */
  #paging(
    res: ServerResponse,
    url: URL,
    list: { defaultSize: number; prefix: string; length: number },
  ): { start: number; asked: number; size: number } | undefined {
    const unknown = [...url.searchParams.keys()].find((k) => k !== 'pageSize' && k !== 'pageToken');
    if (unknown) {
      googleError(res, 400, 'INVALID_ARGUMENT', `Invalid JSON payload received. Unknown name "${unknown}": Cannot bind query parameter.`);
      return undefined;
    }
    const sizeText = url.searchParams.get('pageSize');
    const asked = sizeText === null ? list.defaultSize : Number(sizeText);
    if (!Number.isInteger(asked) || asked < 1) {
      googleError(res, 400, 'INVALID_ARGUMENT', 'page_size must be between 1 and 100.');
      return undefined;
    }
    const token = url.searchParams.get('pageToken');
    const match = token === null ? undefined : new RegExp(`^${list.prefix}(\\d+)$`).exec(token);
    const start = token === null ? 0 : Number(match?.[1] ?? NaN);
    if (Number.isNaN(start) || start > list.length) {
      googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid page token.');
      return undefined;
    }
    return { start, asked, size: Math.min(asked, 100, this.#o.maxPageSize ?? 100) };
  }

  #answer(req: IncomingMessage, res: ServerResponse, body: Json): void {
    const text = JSON.stringify(body);
    if (this.#o.etags) {
      const etag = `"${createHash('sha256').update(text).digest('base64url')}"`;
      if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag }).end();
      res.setHeader('etag', etag);
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end(text);
  }
}

// An ACP agent (Claude's adapter, Gemini CLI, Codex's adapter, …) planning behind the Agent seam:
// spawned as a child process, switched to its plan mode, its updates translated into the session
// event log, its exit-plan request turned into an ExitPlanMode review, and kept read-only until
// the reviewer approves.
import { randomUUID } from 'node:crypto';
import { lstat, mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type {
  ClientConnection,
  CreateElicitationRequest,
  CreateElicitationResponse,
  InitializeResponse,
  PermissionOption,
  ReadTextFileRequest,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  StopReason,
  ToolCallUpdate,
  WriteTextFileRequest,
} from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import {
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  ULTRAPLAN_TELEPORT_SENTINEL,
  type AnyEvent,
  type PermissionDecision,
} from '../../core/protocol';
import type { Agent, AgentContext, AgentFactory } from '../agent';
import { AgentProcess, type AgentExit } from './agentProcess';
import { acpSdk } from './sdk';
import { AcpEventTranslator } from './eventTranslator';
import { choosePlanMode, modeFromUpdate, planModeId, type PlanModeTarget } from './planMode';
import {
  chooseApproveOption,
  chooseRejectOption,
  chooseToolAllowOption,
  chooseToolRejectOption,
  isPlanExitRequest,
  answerQuestion,
  planReviewForm,
  planSource,
  questionForm,
  rawInputPlan,
  type AfterApproval,
  type PlanReviewForm,
  type QuestionForm,
} from './planReview';
import {
  isInside,
  LOOKING_TOOL_KINDS,
  permissionRefusal,
  terminalRefusal,
  writeVerdict,
  type WriteVerdict,
} from './readOnlyPolicy';

export const DEFAULT_FIRST_EVENT_TIMEOUT_MS = 120_000;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 120_000;
export const DEFAULT_STOP_GRACE_MS = 2_000;
/** How much stderr an error message quotes. */
const STDERR_IN_MESSAGE_CHARS = 2_000;
const STDERR_IN_MESSAGE_LINES = 12;
/** How often an agent that leaves plan mode on its own is switched back before we stop trying. */
const MAX_PLAN_MODE_REASSERTIONS = 3;

export interface AcpAgentOptions {
  /** The agent's command line, no shell: ["npx", "-y", "@agentclientprotocol/claude-agent-acp"]. */
  argv: readonly string[];
  /** The workspace folder: the agent's cwd and the session's cwd. */
  cwd: string;
  /** Extra environment variables, over the host's own. */
  env?: Record<string, string | undefined>;
  /** Start from the host's environment (default true); false: the agent gets `env` only. */
  inheritEnv?: boolean;
  /** A label for people ("Claude (ACP)"); derived from argv when absent. */
  label?: string;
  /** What Approve selects (default: 'default', edits approved manually). */
  afterApproval?: AfterApproval;
  /** A prompt with no first event within this bound ends the session with a clear message. */
  firstEventTimeoutMs?: number;
  /** Bound on each of initialize, session/new and the mode switch. */
  handshakeTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL when stopping. */
  stopGraceMs?: number;
  /** Diagnostic lines (besides the session's own log). */
  log?: (line: string) => void;
}

type PendingReview =
  | {
      kind: 'plan_permission';
      toolUseId: string;
      plan: string;
      options: readonly PermissionOption[];
      answer: (response: RequestPermissionResponse) => void;
    }
  | {
      kind: 'plan_elicitation';
      toolUseId: string;
      plan: string;
      form: PlanReviewForm;
      answer: (response: CreateElicitationResponse) => void;
    }
  | {
      kind: 'tool_permission';
      toolUseId: string;
      options: readonly PermissionOption[];
      answer: (response: RequestPermissionResponse) => void;
    };

/** Updates that show a turn is progressing (for the first-event bound). */
const PROGRESS_UPDATES: ReadonlySet<string> = new Set([
  'agent_message_chunk',
  'agent_thought_chunk',
  'tool_call',
  'tool_call_update',
  'plan',
]);

const CANCELLED: RequestPermissionResponse = { outcome: { outcome: 'cancelled' } };

/** A readable label from a command line: the npm package or the program name. */
export function labelFromArgv(argv: readonly string[]): string {
  const program = argv[0] ? path.basename(argv[0]) : 'agent';
  if (program === 'npx' || program === 'pnpx' || program === 'bunx') {
    const pkg = argv.slice(1).find((arg) => !arg.startsWith('-'));
    if (pkg) return `${pkg} (ACP)`;
  }
  // An interpreter running a script: the script says what it is.
  if (/^(node|tsx|bun|deno|python3?)(\.exe)?$/.test(program)) {
    const script = argv.slice(1).find((arg) => !arg.startsWith('-') && arg !== 'run');
    if (script) return `${path.basename(script)} (ACP)`;
  }
  return `${program} (ACP)`;
}

class TimeoutError extends Error {}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const data = (error as { data?: unknown }).data;
    const detail = data && typeof data === 'object' && 'message' in data ? String((data as { message: unknown }).message) : '';
    return detail && !error.message.includes(detail) ? `${error.message} (${detail})` : error.message;
  }
  if (error && typeof error === 'object' && 'message' in error) return String((error as { message: unknown }).message);
  return String(error);
}

export class AcpAgent implements Agent {
  readonly label: string;
  private readonly afterApproval: AfterApproval;
  private readonly firstEventTimeoutMs: number;
  private readonly handshakeTimeoutMs: number;
  private readonly stopGraceMs: number;
  private readonly workspace: string;

  private ctx: AgentContext | undefined;
  private proc: AgentProcess | undefined;
  private connection: ClientConnection | undefined;
  private translator: AcpEventTranslator | undefined;
  private acpSessionId: string | undefined;
  private planTarget: PlanModeTarget | undefined;
  private currentMode: string | undefined;
  private inPlanMode = false;
  private approved = false;
  private reassertions = 0;
  private promptActive = false;
  private turns = 0;
  private readonly queuedPrompts: string[] = [];
  private readonly reviews = new Map<string, PendingReview>();
  private firstEventTimer: NodeJS.Timeout | undefined;
  private finished = false;
  private stopping: Promise<void> | undefined;
  private readonly namedPlanFiles = new Set<string>();
  private readonly writtenPlans = new Map<string, string>();
  private agentInfo: InitializeResponse['agentInfo'];
  private availableModeIds: string[] = [];
  /** A question the agent asked as an elicitation, answered by the next user message. */
  private pendingQuestion: { form: QuestionForm; answer: (response: CreateElicitationResponse) => void } | undefined;

  constructor(private readonly options: AcpAgentOptions) {
    if (options.argv.length === 0 || !options.argv[0]) throw new Error('The ACP agent command is empty.');
    this.label = options.label ?? labelFromArgv(options.argv);
    this.afterApproval = options.afterApproval ?? 'default';
    this.firstEventTimeoutMs = options.firstEventTimeoutMs ?? DEFAULT_FIRST_EVENT_TIMEOUT_MS;
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    this.stopGraceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    this.workspace = path.resolve(options.cwd);
  }

  /** The agent process id (for tests and diagnostics); undefined before start. */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** The mode the agent last reported. */
  get mode(): string | undefined {
    return this.currentMode;
  }

  async start(ctx: AgentContext, prompt: string): Promise<void> {
    if (this.ctx) throw new Error('AcpAgent.start was called twice.');
    this.ctx = ctx;
    ctx.signal.addEventListener('abort', () => void this.stop(), { once: true });
    this.translator = new AcpEventTranslator((event) => this.emit(event));
    ctx.setStatus('running');
    const acp = acpSdk();

    let proc: AgentProcess;
    try {
      proc = new AgentProcess({
        argv: this.options.argv,
        cwd: this.workspace,
        env: { ...(this.options.inheritEnv === false ? {} : process.env), ...this.options.env },
        onMalformedLine: (line) =>
          this.fail(`${this.label} wrote a line that is not JSON-RPC on its protocol channel: "${line.slice(0, 200)}"`),
      });
    } catch (error) {
      this.fail(`Could not start ${this.label}: ${errorMessage(error)}`);
      return;
    }
    this.proc = proc;
    this.log(`started ${this.options.argv.join(' ')} (pid ${proc.pid ?? '?'}) in ${this.workspace}`);
    void proc.exited.then((exit) => {
      if (!this.finished && !this.stopping) this.fail(this.describeExit(exit));
    });

    const app = acp.client({ name: 'ultraplan' });
    app.onNotification('session/update', ({ params }) => this.onSessionUpdate(params));
    app.onRequest('session/request_permission', ({ params }) => this.onPermission(params));
    app.onRequest('fs/read_text_file', ({ params }) => this.onReadFile(params, acp.RequestError));
    app.onRequest('fs/write_text_file', ({ params }) => this.onWriteFile(params, acp.RequestError));
    for (const method of ['terminal/create', 'terminal/output', 'terminal/release', 'terminal/wait_for_exit', 'terminal/kill'] as const) {
      app.onRequest(method, () => {
        this.sawEvent();
        const message = terminalRefusal(method);
        this.report('acp_refused', message, { method });
        throw new acp.RequestError(-32000, message);
      });
    }
    app.onRequest('elicitation/create', ({ params }) => this.onElicitation(params));
    app.onNotification('elicitation/complete', () => undefined);

    this.connection = app.connect(acp.ndJsonStream(proc.input(), proc.output()));
    void this.handshakeAndPrompt(prompt);
  }

  onUserMessage(text: string): void {
    if (this.finished || this.stopping) {
      this.log(`ignored a user message: the agent has ended`);
      return;
    }
    const question = this.pendingQuestion;
    if (question) {
      this.pendingQuestion = undefined;
      question.answer({ action: 'accept', content: answerQuestion(question.form, text) });
      this.ctx?.setStatus(this.reviews.size ? 'requires_action' : 'running');
      return;
    }
    if (this.promptActive || !this.acpSessionId) this.queuedPrompts.push(text);
    else this.sendPrompt(text);
  }

  onDecision(requestId: string, decision: PermissionDecision): void {
    const review = this.reviews.get(requestId);
    if (!review) {
      this.log(`ignored a decision for unknown or answered request ${requestId}`);
      return;
    }
    // Cleared before use so a repeated answer cannot decide the next review.
    this.reviews.delete(requestId);
    if (review.kind === 'tool_permission') {
      this.decideToolPermission(review, decision);
      return;
    }
    if (decision.behavior === 'allow') this.approvePlan(review, decision);
    else this.rejectPlan(review, decision.message);
    if (!this.finished) this.ctx?.setStatus(this.reviews.size ? 'requires_action' : 'running');
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  // -------------------------------------------------------------------------------------------
  // Start-up

  private async handshakeAndPrompt(prompt: string): Promise<void> {
    const connection = this.connection;
    if (!connection) return;
    const bound = this.handshakeTimeoutMs;
    const seconds = Math.round(bound / 1000);
    let step = 'initialize';
    try {
      const init = await withTimeout(
        connection.agent.request('initialize', {
          protocolVersion: 1,
          clientCapabilities: {
            fs: { readTextFile: true, writeTextFile: true },
            terminal: false,
            elicitation: { form: {} },
          },
          clientInfo: { name: 'ultraplan', title: 'Ultraplan', version: '0.1.0' },
        }),
        bound,
        `${this.label} did not answer initialize within ${seconds} s.`,
      );
      this.agentInfo = init.agentInfo;
      this.log(`initialized ${init.agentInfo ? `${init.agentInfo.name} ${init.agentInfo.version}` : 'an agent without agentInfo'}`);

      step = 'session/new';
      const session = await withTimeout(
        connection.agent.request('session/new', { cwd: this.workspace, mcpServers: [] }),
        bound,
        `${this.label} did not answer session/new within ${seconds} s.`,
      );
      this.acpSessionId = session.sessionId;
      this.currentMode = session.modes?.currentModeId;
      this.availableModeIds = (session.modes?.availableModes ?? []).map((mode) => mode.id);

      const choice = choosePlanMode(this.label, session);
      if (!choice.ok) {
        this.fail(choice.message);
        return;
      }
      this.planTarget = choice.target;
      step = 'the switch to plan mode';
      await withTimeout(this.switchToPlanMode(), bound, `${this.label} did not switch to plan mode within ${seconds} s.`);
      this.inPlanMode = true;
      this.currentMode = planModeId(choice.target);
      this.log(`session ${session.sessionId} in plan mode "${this.currentMode}"`);
    } catch (error) {
      if (error instanceof TimeoutError) this.fail(error.message);
      else await this.failFromError(step === 'session/new' ? `${this.label} refused session/new` : `${this.label} failed during ${step}`, error);
      return;
    }
    if (this.finished || this.stopping) return;
    this.emit({
      type: 'system',
      subtype: 'init',
      permissionMode: 'plan',
      cwd: this.workspace,
      model: this.agentInfo?.title ?? this.agentInfo?.name ?? this.label,
      tools: [],
      agent: { label: this.label, name: this.agentInfo?.name ?? null, version: this.agentInfo?.version ?? null, mode: this.currentMode },
    });
    this.sendPrompt(prompt);
    while (!this.promptActive && this.queuedPrompts.length) this.sendPrompt(this.queuedPrompts.shift() as string);
  }

  private async switchToPlanMode(): Promise<void> {
    const connection = this.connection;
    const target = this.planTarget;
    const sessionId = this.acpSessionId;
    if (!connection || !target || !sessionId) return;
    if (target.via === 'mode') {
      await connection.agent.request('session/set_mode', { sessionId, modeId: target.modeId });
    } else {
      await connection.agent.request('session/set_config_option', { sessionId, configId: target.configId, value: target.value });
    }
  }

  // -------------------------------------------------------------------------------------------
  // Turns

  private sendPrompt(text: string): void {
    const connection = this.connection;
    const sessionId = this.acpSessionId;
    if (!connection || !sessionId || this.finished || this.stopping) return;
    this.promptActive = true;
    this.turns += 1;
    this.ctx?.setStatus('running');
    this.armFirstEventTimer();
    connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] }).then(
      (response) => this.onTurnEnd(response.stopReason),
      (error: unknown) => void this.failFromError(`${this.label} failed while planning`, error),
    );
  }

  private onTurnEnd(stopReason: StopReason): void {
    this.disarmFirstEventTimer();
    this.promptActive = false;
    if (this.finished || this.stopping) return;
    this.translator?.flush();
    const lastText = this.translator?.lastAssistantText ?? '';
    if (stopReason === 'max_turn_requests') {
      this.emitResult('error_max_turns', `${this.label} reached its limit of model requests for one turn.`);
    } else if (stopReason === 'refusal') {
      this.emitResult('error_during_execution', `${this.label} refused to continue.`);
    } else {
      this.emit({ type: 'result', subtype: 'success', is_error: false, num_turns: this.turns, result: lastText, stop_reason: stopReason });
    }
    this.pendingQuestion?.answer({ action: 'cancel' });
    this.pendingQuestion = undefined;
    // Reviews still open belong to the ended turn: the agent no longer waits for them.
    for (const [requestId, review] of this.reviews) {
      this.log(`turn ended with review ${requestId} open; cancelling it`);
      if (review.kind === 'plan_elicitation') review.answer({ action: 'cancel' });
      else review.answer(CANCELLED);
    }
    this.reviews.clear();
    const next = this.queuedPrompts.shift();
    if (next !== undefined) this.sendPrompt(next);
    else this.ctx?.setStatus('idle');
  }

  private armFirstEventTimer(): void {
    this.disarmFirstEventTimer();
    const bound = this.firstEventTimeoutMs;
    this.firstEventTimer = setTimeout(() => {
      this.firstEventTimer = undefined;
      this.fail(
        `${this.label} sent nothing for ${Math.round(bound / 1000)} s after the prompt. It may be retrying a model ` +
          `it cannot reach (network, login or API key). Ultraplan stopped it: check the agent's login and ` +
          `network, then start again.`,
      );
    }, bound);
  }

  private disarmFirstEventTimer(): void {
    if (this.firstEventTimer) clearTimeout(this.firstEventTimer);
    this.firstEventTimer = undefined;
  }

  /** Anything from the agent during a turn counts as its first event. */
  private sawEvent(): void {
    this.disarmFirstEventTimer();
  }

  // -------------------------------------------------------------------------------------------
  // What the agent sends

  private onSessionUpdate(notification: SessionNotification): void {
    if (this.finished || this.stopping) return;
    if (this.acpSessionId && notification.sessionId !== this.acpSessionId) return;
    const update = notification.update;
    // Only signs of the model at work count: adapters send command lists and usage on their own.
    if (this.promptActive && PROGRESS_UPDATES.has(update.sessionUpdate)) this.sawEvent();
    const mode = modeFromUpdate(update as unknown as { sessionUpdate: string } & Record<string, unknown>);
    if (mode !== undefined) {
      this.onModeReported(mode);
      return;
    }
    this.translator?.update(update);
  }

  private onModeReported(mode: string): void {
    const previous = this.currentMode;
    this.currentMode = mode;
    if (!this.inPlanMode || this.approved || !this.planTarget) return;
    const plan = planModeId(this.planTarget);
    if (mode === plan || mode === previous) return;
    // Not trusted: the session stays read-only whatever mode the agent claims, and is switched back.
    const reassert = this.reassertions < MAX_PLAN_MODE_REASSERTIONS;
    this.report(
      'acp_plan_mode_left',
      `${this.label} left plan mode on its own (now "${mode}") without your approval. Ultraplan keeps the ` +
        `session read-only${reassert ? ` and switched it back to "${plan}"` : ''}.`,
      { mode },
    );
    if (!reassert) return;
    this.reassertions += 1;
    this.switchToPlanMode().then(
      () => {
        this.currentMode = plan;
        this.log(`switched back to plan mode "${plan}"`);
      },
      (error: unknown) => this.log(`could not switch back to plan mode: ${errorMessage(error)}`),
    );
  }

  private async onPermission(request: RequestPermissionRequest): Promise<RequestPermissionResponse> {
    this.sawEvent();
    if (this.finished || this.stopping) return CANCELLED;
    const toolCall = request.toolCall;
    const translator = this.translator;
    if (!translator) return CANCELLED;
    if (!this.approved && isPlanExitRequest(request)) {
      const plan = await this.planFor(toolCall);
      translator.flush();
      const toolUseId = translator.exitPlanToolUse(toolCall.toolCallId, plan);
      return new Promise<RequestPermissionResponse>((answer) => {
        this.openReview({ kind: 'plan_permission', toolUseId, plan, options: request.options, answer }, toolUseId, 'ExitPlanMode', { plan });
      });
    }
    const kind = toolCall.kind ?? translator.toolCall(toolCall.toolCallId)?.kind ?? 'other';
    const title = toolCall.title ?? translator.toolCall(toolCall.toolCallId)?.title ?? toolCall.toolCallId;
    if (!this.approved) {
      if (LOOKING_TOOL_KINDS.has(kind)) {
        const allow = request.options.find((option) => option.kind === 'allow_once');
        this.log(`allowed "${title}" (${kind}) while planning: it only looks`);
        return allow ? { outcome: { outcome: 'selected', optionId: allow.optionId } } : CANCELLED;
      }
      const message = permissionRefusal(kind, title);
      this.report('acp_refused', message, { method: 'session/request_permission', kind, title });
      const reject = chooseRejectOption(this.label, request.options);
      const meta = { ultraplan: { refused: message } };
      return reject.ok ? { outcome: { outcome: 'selected', optionId: reject.option.optionId }, _meta: meta } : { ...CANCELLED, _meta: meta };
    }
    // After approval the agent executes; each permission it asks goes to the reviewer.
    translator.ensureToolUse(toolCall);
    return new Promise<RequestPermissionResponse>((answer) => {
      this.openReview({ kind: 'tool_permission', toolUseId: toolCall.toolCallId, options: request.options, answer }, toolCall.toolCallId, title, toolCall.rawInput ?? {});
    });
  }

  private async onElicitation(request: CreateElicitationRequest): Promise<CreateElicitationResponse> {
    this.sawEvent();
    if (this.finished || this.stopping) return { action: 'cancel' };
    const form = this.approved ? undefined : planReviewForm(request);
    const translator = this.translator;
    if (!translator) return { action: 'cancel' };
    if (!form) {
      const question = questionForm(request);
      if (!question || this.pendingQuestion) {
        this.report('acp_elicitation_declined', `${this.label} asked "${request.message}" in a way Ultraplan cannot show, so it declined.`, {});
        return { action: 'decline' };
      }
      // A question for the person: it goes to the log as the agent's message; their reply answers it.
      translator.assistantText(question.text);
      return new Promise<CreateElicitationResponse>((answer) => {
        this.pendingQuestion = { form: question, answer };
        this.ctx?.setStatus('requires_action');
      });
    }
    const remembered = form.toolCallId ? translator.toolCall(form.toolCallId) : undefined;
    const carrier = remembered && rawInputPlan({ rawInput: remembered.rawInput }) ? remembered : translator.latestPlanToolCall();
    const plan = (carrier && rawInputPlan({ rawInput: carrier.rawInput })) || request.message;
    translator.flush();
    const toolUseId = translator.exitPlanToolUse(form.toolCallId ?? carrier?.toolCallId ?? 'elicitation', plan);
    return new Promise<CreateElicitationResponse>((answer) => {
      this.openReview({ kind: 'plan_elicitation', toolUseId, plan, form, answer }, toolUseId, 'ExitPlanMode', { plan });
    });
  }

  private openReview(review: PendingReview, toolUseId: string, toolName: string, input: unknown): void {
    const requestId = `acp-${randomUUID()}`;
    this.reviews.set(requestId, review);
    this.emit({
      type: 'control_request',
      request_id: requestId,
      request: { subtype: 'can_use_tool', tool_name: toolName, input, tool_use_id: toolUseId },
    });
    this.ctx?.setStatus('requires_action');
  }

  private async onReadFile(
    request: ReadTextFileRequest,
    RequestError: new (code: number, message: string) => Error,
  ): Promise<{ content: string }> {
    this.sawEvent();
    if (!path.isAbsolute(request.path)) throw new RequestError(-32602, `The path must be absolute: ${request.path}`);
    let content: string;
    try {
      content = this.writtenPlans.get(path.resolve(request.path)) ?? (await readFile(request.path, 'utf8'));
    } catch (error) {
      throw new RequestError(-32002, `Could not read ${request.path}: ${errorMessage(error)}`);
    }
    if (request.line == null && request.limit == null) return { content };
    const lines = content.split('\n');
    const start = Math.max(0, (request.line ?? 1) - 1);
    const end = request.limit == null ? lines.length : start + Math.max(0, request.limit);
    return { content: lines.slice(start, end).join('\n') };
  }

  private async onWriteFile(
    request: WriteTextFileRequest,
    RequestError: new (code: number, message: string) => Error,
  ): Promise<Record<string, never>> {
    this.sawEvent();
    const verdict = writeVerdict({
      filePath: request.path,
      workspace: this.workspace,
      planning: !this.approved,
      namedPlanFiles: this.namedPlanFiles,
    });
    const resolved = path.resolve(request.path);
    // The same check where the write would really land: a symlink in the path (a plans/x.md
    // planted to point at src/app.ts or ~/.bashrc) must not carry a write past the policy.
    const real = verdict.allowed ? await realWriteTarget(resolved) : resolved;
    const realVerdict: WriteVerdict =
      !verdict.allowed || real === resolved
        ? verdict
        : real === undefined
          ? { allowed: false, message: `Ultraplan refused to write ${resolved}: it is a symbolic link to a file that does not exist.` }
          : writeVerdict({
              filePath: real,
              workspace: await realpath(this.workspace).catch(() => this.workspace),
              planning: !this.approved,
              namedPlanFiles: this.namedPlanFiles.has(resolved) ? new Set([...this.namedPlanFiles, real]) : this.namedPlanFiles,
            });
    if (!realVerdict.allowed) {
      this.report('acp_refused', realVerdict.message, { method: 'fs/write_text_file', path: request.path });
      throw new RequestError(-32000, realVerdict.message);
    }
    try {
      await mkdir(path.dirname(resolved), { recursive: true });
      await writeFile(resolved, request.content, 'utf8');
    } catch (error) {
      throw new RequestError(-32603, `Could not write ${resolved}: ${errorMessage(error)}`);
    }
    if (!this.approved) {
      // The plan file: remembered so the exit request naming it reads what was written.
      this.namedPlanFiles.add(resolved);
      this.writtenPlans.set(resolved, request.content);
      this.log(`wrote the plan file ${resolved}`);
    }
    return {};
  }

  /** The plan of an exit request: rawInput.plan, else its text, else the plan file it names. */
  private async planFor(toolCall: ToolCallUpdate): Promise<string> {
    const remembered = this.translator?.toolCall(toolCall.toolCallId);
    const source = planSource({
      rawInput: toolCall.rawInput ?? remembered?.rawInput,
      content: toolCall.content,
      locations: toolCall.locations,
    });
    if (source.kind === 'text') return source.text;
    if (source.kind === 'none') {
      this.log(`the exit-plan request ${toolCall.toolCallId} carries no plan`);
      return `(${this.label} asked to leave plan mode without a plan text.)`;
    }
    const resolved = path.resolve(this.workspace, source.path);
    this.namedPlanFiles.add(resolved);
    const written = this.writtenPlans.get(resolved);
    if (written !== undefined) return written;
    try {
      const real = await realpath(resolved);
      const root = await realpath(this.workspace);
      if (!isInside(root, real)) {
        return `(${this.label} named its plan file ${resolved}, which is outside the workspace; Ultraplan reads plan files only inside the workspace.)`;
      }
      return await readFile(real, 'utf8');
    } catch (error) {
      return `(${this.label} named its plan file ${resolved}, but it could not be read: ${errorMessage(error)})`;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Decisions

  private approvePlan(review: Exclude<PendingReview, { kind: 'tool_permission' }>, decision: PermissionDecision & { behavior: 'allow' }): void {
    const edited = typeof decision.updatedInput.plan === 'string' ? decision.updatedInput.plan : review.plan;
    const wasEdited = edited !== review.plan;
    if (review.kind === 'plan_permission') {
      let choice = chooseApproveOption(this.label, review.options, this.afterApproval);
      let thenMode: string | undefined;
      if (!choice.ok && this.afterApproval === 'acceptEdits' && this.availableModeIds.includes('acceptEdits')) {
        // No auto-accept option on this request (Claude's adapter offers auto mode instead), but
        // the agent has the mode: approve with manual edits, then switch to it, as asked.
        const manual = chooseApproveOption(this.label, review.options, 'default');
        if (manual.ok) {
          choice = manual;
          thenMode = 'acceptEdits';
        }
      }
      if (!choice.ok) {
        review.answer(CANCELLED);
        this.fail(choice.message);
        return;
      }
      if (thenMode) this.switchModeAfterApproval(thenMode);
      this.approved = true;
      this.translator?.toolResult(review.toolUseId, this.approvedText(edited, wasEdited), false);
      review.answer({ outcome: { outcome: 'selected', optionId: choice.option.optionId } });
      this.log(`approved the plan with "${choice.option.name}" (${choice.option.optionId})`);
    } else {
      this.approved = true;
      this.translator?.toolResult(review.toolUseId, this.approvedText(edited, wasEdited), false);
      review.answer({ action: 'accept', content: { [review.form.choiceKey]: review.form.approveValue } });
      this.log(`approved the plan with "${review.form.approveValue}"`);
    }
    if (wasEdited) {
      this.queuePrompt(`The reviewer edited the plan before approving it. Follow this version:\n\n${edited}`);
    }
  }

  private switchModeAfterApproval(modeId: string): void {
    const connection = this.connection;
    const sessionId = this.acpSessionId;
    if (!connection || !sessionId) return;
    // After the permission answer, so the agent's own switch to manual mode does not undo it.
    setTimeout(() => {
      connection.agent.request('session/set_mode', { sessionId, modeId }).then(
        () => this.log(`switched to "${modeId}" after approval (ultraplan.afterApproval)`),
        (error: unknown) => this.report('acp_decision_error', `Could not switch ${this.label} to "${modeId}" after approval: ${errorMessage(error)}`, {}),
      );
    }, 0);
  }

  private approvedText(plan: string, edited: boolean): string {
    return `User approved the plan.\n\n${edited ? APPROVED_PLAN_EDITED_MARKER : APPROVED_PLAN_MARKER}${plan}`;
  }

  private rejectPlan(review: Exclude<PendingReview, { kind: 'tool_permission' }>, message: string): void {
    const teleport = message.includes(ULTRAPLAN_TELEPORT_SENTINEL);
    let feedbackInAnswer = false;
    if (review.kind === 'plan_permission') {
      const choice = chooseRejectOption(this.label, review.options);
      if (!choice.ok) {
        review.answer(CANCELLED);
        this.fail(choice.message);
        return;
      }
      this.translator?.toolResult(review.toolUseId, message, true);
      review.answer({ outcome: { outcome: 'selected', optionId: choice.option.optionId } });
      this.log(`${teleport ? 'teleport: rejected' : 'rejected'} the plan with "${choice.option.name}" (${choice.option.optionId})`);
    } else {
      const content: Record<string, string> = { [review.form.choiceKey]: review.form.keepPlanningValue };
      if (!teleport && review.form.feedbackKey) {
        content[review.form.feedbackKey] = message;
        feedbackInAnswer = true;
      }
      this.translator?.toolResult(review.toolUseId, message, true);
      review.answer({ action: 'accept', content });
      this.log(`${teleport ? 'teleport: kept planning' : 'kept planning'} with "${review.form.keepPlanningValue}"`);
    }
    if (teleport) {
      // The plan runs locally: this turn has nothing more to do.
      this.cancelTurn();
    } else if (!feedbackInAnswer) {
      this.queuePrompt(`The reviewer rejected the plan. Their feedback:\n\n${message}\n\nStay in plan mode, revise the plan, and ask again when it is ready.`);
    }
  }

  private decideToolPermission(review: Extract<PendingReview, { kind: 'tool_permission' }>, decision: PermissionDecision): void {
    const choice =
      decision.behavior === 'allow' ? chooseToolAllowOption(this.label, review.options) : chooseToolRejectOption(this.label, review.options);
    if (!choice.ok) {
      review.answer(CANCELLED);
      this.report('acp_decision_error', choice.message, {});
      this.translator?.toolResult(review.toolUseId, choice.message, true);
      return;
    }
    review.answer({ outcome: { outcome: 'selected', optionId: choice.option.optionId } });
    this.log(`${decision.behavior === 'allow' ? 'allowed' : 'denied'} ${review.toolUseId} with "${choice.option.name}" (${choice.option.optionId})`);
    if (decision.behavior === 'deny') this.translator?.toolResult(review.toolUseId, decision.message, true);
    this.ctx?.setStatus(this.reviews.size ? 'requires_action' : 'running');
  }

  private queuePrompt(text: string): void {
    if (this.promptActive) this.queuedPrompts.push(text);
    else this.sendPrompt(text);
  }

  private cancelTurn(): void {
    const connection = this.connection;
    const sessionId = this.acpSessionId;
    if (!connection || !sessionId || !this.promptActive) return;
    connection.agent.notify('session/cancel', { sessionId }).catch((error: unknown) => this.log(`session/cancel failed: ${errorMessage(error)}`));
  }

  // -------------------------------------------------------------------------------------------
  // Failures and the end

  private describeExit(exit: AgentExit): string {
    if (exit.spawnError) {
      return `Could not start ${this.label} (${this.options.argv[0]}): ${exit.spawnError}. Is it installed and on PATH? Choose another agent or set ultraplan.agent.command.`;
    }
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    return `${this.label} ${how} unexpectedly.`;
  }

  /** A request failed: when the process died, its exit says more than "connection closed". */
  private async failFromError(context: string, error: unknown): Promise<void> {
    if (this.finished || this.stopping) return;
    const proc = this.proc;
    if (proc) await Promise.race([proc.exited, new Promise((resolve) => setTimeout(resolve, 500))]);
    if (this.finished || this.stopping) return;
    const exit = proc?.exit;
    if (exit) {
      this.fail(this.describeExit(exit));
      return;
    }
    const message = errorMessage(error);
    const hint = /authenticat|log ?in|credential|api.?key|unauthori[sz]ed/i.test(message)
      ? ` Log in with ${this.label}'s own command line (or set its API key), then start again.`
      : '';
    this.fail(`${context}: ${message}.${hint}`);
  }

  private fail(message: string): void {
    if (this.finished || this.stopping) return;
    this.finished = true;
    this.disarmFirstEventTimer();
    this.translator?.flush();
    const tail = this.proc
      ?.stderrTail()
      .slice(-STDERR_IN_MESSAGE_CHARS)
      .split('\n')
      .slice(-STDERR_IN_MESSAGE_LINES)
      .join('\n');
    const full = tail ? `${message}\n\n${this.label} stderr (last lines):\n${tail}` : message;
    this.emitResult('error_during_execution', full);
    this.ctx?.setStatus('idle');
    void this.stop();
  }

  private emitResult(subtype: string, message: string): void {
    this.log(message);
    this.emit({ type: 'result', subtype, is_error: true, num_turns: this.turns, result: message, errors: [message] });
  }

  private async shutdown(): Promise<void> {
    this.disarmFirstEventTimer();
    for (const review of this.reviews.values()) {
      if (review.kind === 'plan_elicitation') review.answer({ action: 'cancel' });
      else review.answer(CANCELLED);
    }
    this.reviews.clear();
    this.pendingQuestion?.answer({ action: 'cancel' });
    this.pendingQuestion = undefined;
    this.queuedPrompts.length = 0;
    const connection = this.connection;
    if (connection && this.acpSessionId && this.promptActive && !this.proc?.exit) {
      // Best effort: a polite cancel before the signals.
      await Promise.race([
        connection.agent.notify('session/cancel', { sessionId: this.acpSessionId }).catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, 200)),
      ]);
    }
    connection?.close();
    if (this.proc) {
      const exit = await this.proc.stop(this.stopGraceMs);
      this.log(`stopped (${exit.signal ?? `code ${exit.code}`})`);
    }
  }

  private report(subtype: string, message: string, extra: Record<string, unknown>): void {
    this.log(message);
    this.emit({ type: 'system', subtype, message, ...extra });
  }

  private emit(event: AnyEvent): void {
    const ctx = this.ctx;
    if (!ctx || ctx.signal.aborted) return;
    try {
      ctx.emit(event);
    } catch (error) {
      this.log(`could not append a ${event.type} event: ${errorMessage(error)}`);
    }
  }

  private log(line: string): void {
    const text = `[acp ${this.label}] ${line}`;
    this.ctx?.log(text);
    this.options.log?.(text);
  }
}

/** One AcpAgent per session, all running the same command in the same workspace. */
export function createAcpAgentFactory(options: AcpAgentOptions): AgentFactory {
  if (options.argv.length === 0 || !options.argv[0]) throw new Error('The ACP agent command is empty.');
  return () => new AcpAgent({ ...options });
}

/**
 * The file a write to `file` would really change: symlinks in its folders and in its own name
 * resolved (missing folders are kept as named, since they will be created). undefined for a
 * symlink whose target does not exist (writing would create that target wherever it points).
 */
async function realWriteTarget(file: string): Promise<string | undefined> {
  try {
    if ((await lstat(file)).isSymbolicLink()) return await realpath(file).catch(() => undefined);
  } catch {
    /* missing: its folders decide */
  }
  const rest: string[] = [path.basename(file)];
  let dir = path.dirname(file);
  for (let depth = 0; depth < 4096; depth++) {
    try {
      return path.join(await realpath(dir), ...rest);
    } catch {
      const parent = path.dirname(dir);
      if (parent === dir) return file;
      rest.unshift(path.basename(dir));
      dir = parent;
    }
  }
  return file;
}

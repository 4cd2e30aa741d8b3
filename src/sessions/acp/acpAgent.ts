// An ACP agent (Claude's adapter, Gemini CLI, Codex's adapter, …) planning behind the Agent seam:
// spawned as a child process, switched to its plan mode, its updates translated into the session
// event log, its exit-plan request turned into an ExitPlanMode review, and kept read-only until
// the reviewer approves.
import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
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
import type { AnyEvent, PermissionDecision } from '../../core/protocol';
import { APPROVED_PLAN_EDITED_MARKER, APPROVED_PLAN_MARKER, ULTRAPLAN_TELEPORT_SENTINEL, agentModeEvent } from '../../core/protocolMarkers';
import type { Agent, AgentContext } from '../agent';
import { claudeSessionMeta, claudeStartupRefusal } from './claudeBypass';
import { labelFromArgv } from './agentLabel';
import { AgentProcess, type AgentExit } from './agentProcess';
import { acpSdk } from './sdk';
import { AcpEventTranslator } from './eventTranslator';
import { choosePlanMode, modeFromUpdate, planModeId, sessionModeFromUpdate, type PlanModeTarget } from './planMode';
import {
  CODEX_LOGIN_HINT,
  CODEX_READ_ONLY_PRESET,
  CODEX_IMPLEMENT_PROMPT,
  codexAuthentication,
  codexImplementOption,
  codexLeavePlanMode,
  codexPresetAfterApproval,
  codexStatusText,
  isCodex,
} from './agents/codex';
import { claudeApproval, claudeNotice, claudeRejectOption, isClaudeAdapter } from './agents/claude';
import { GEMINI_TRUST_HINT, geminiModeAfterApproval, geminiModeUpdate, geminiPlanPath, isGemini, isGeminiPlanExit } from './agents/gemini';
import {
  chooseApproveOption,
  chooseRejectOption,
  chooseToolAllowOption,
  chooseToolRejectOption,
  isPlanExitRequest,
  isUnclearRequest,
  namedPlanFile,
  answerQuestion,
  planReviewForm,
  planSource,
  questionForm,
  rawInputPlan,
  toolCallText,
  type AfterApproval,
  type PlanReviewForm,
  type QuestionForm,
} from './planReview';
import { AgentFileAccess } from './agentFileAccess';
import {
  accessDenial,
  agentDirs,
  isInside,
  LOOKING_TOOL_KINDS,
  lookedAtPaths,
  permissionRefusal,
  terminalRefusal,
  type OutsideAccess,
  type ReadVerdict,
} from './readOnlyPolicy';

export const DEFAULT_FIRST_EVENT_TIMEOUT_MS = 120_000;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 120_000;
export const DEFAULT_STOP_GRACE_MS = 2_000;
/** How much stderr an error message quotes. */
const STDERR_IN_MESSAGE_CHARS = 2_000;
const STDERR_IN_MESSAGE_LINES = 12;
/** How often an agent that leaves plan mode on its own is switched back before we stop trying. */
const MAX_PLAN_MODE_REASSERTIONS = 3;
/** Files the agent proposed while planning (edit diffs), remembered for its exit request. */
const MAX_PROPOSED_FILES = 100;
/** How long an exit request without a plan waits for the tool call's update that carries it. */
const ANNOUNCED_INPUT_WAIT_MS = 3000;
/** Sent once when an agent ends its turn after a refused change without proposing a plan. */
export const CONTINUE_PLANNING_PROMPT =
  'Ultraplan refused your change: this session is in plan mode and read-only until the reviewer approves a plan. ' +
  'Continue planning without changing any file, and propose your plan when it is ready.';

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
  /** Files never read for the agent, whatever it asks (the server's token file). */
  secretFiles?: readonly string[];
  /** The agent's home folder, where it keeps its plans folder (default: its HOME, else the user's). */
  home?: string;
  /** Reads outside the workspace and fetches: asked (default), allowed or refused without asking; each logged. */
  outsideAccess?: OutsideAccess;
}

type PendingReview =
  | {
      kind: 'plan_permission';
      toolUseId: string;
      /** The agent's own id of the exit tool call. */
      agentToolCallId: string;
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
    }
  | {
      /** A read outside the workspace through fs/read_text_file: the person decides. */
      kind: 'file_read';
      answer: (decision: 'allow' | 'deny' | 'cancel') => void;
    };

type PlanReview = Extract<PendingReview, { kind: 'plan_permission' | 'plan_elicitation' }>;

function cancelReview(review: PendingReview): void {
  if (review.kind === 'plan_elicitation') review.answer({ action: 'cancel' });
  else if (review.kind === 'file_read') review.answer('cancel');
  else review.answer(CANCELLED);
}

/** Updates that show a turn is progressing (for the first-event bound). */
const PROGRESS_UPDATES: ReadonlySet<string> = new Set([
  'agent_message_chunk',
  'agent_thought_chunk',
  'tool_call',
  'tool_call_update',
  'plan',
]);

const CANCELLED: RequestPermissionResponse = { outcome: { outcome: 'cancelled' } };

class TimeoutError extends Error {}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** What a JSON-RPC error's `data` says: agents put the cause there ("Internal error" alone says nothing). */
function errorDetail(data: unknown): string {
  if (typeof data === 'string') return data;
  if (!data || typeof data !== 'object') return '';
  const record = data as Record<string, unknown>;
  for (const key of ['message', 'details', 'detail', 'error']) {
    if (typeof record[key] === 'string' && record[key]) return (record[key] as string).trim();
  }
  return '';
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const detail = errorDetail((error as { data?: unknown }).data);
    if (!detail || error.message.includes(detail)) return error.message;
    // The cause instead of a bare "Internal error".
    return /^internal error$/i.test(error.message.trim()) ? detail : `${error.message} (${detail})`;
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
  /** The names the agent gave its modes (session/new), by id. */
  private readonly modeNames = new Map<string, string>();
  /** The last mode reported in the session's events (id and read-only), so each change is reported once. */
  private reportedMode: string | undefined;
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
  private readonly files: AgentFileAccess;
  private readonly outsideAccess: OutsideAccess;
  private readonly home: string;
  private agentInfo: InitializeResponse['agentInfo'];
  private availableModeIds: string[] = [];
  /** Agents whose behaviour differs from the protocol's plain reading (agents/claude.ts, agents/codex.ts, agents/gemini.ts). */
  private agentKind: 'claude' | 'codex' | 'gemini' | 'other' = 'other';
  /** The whole new text of files the agent's edit tool calls announced while planning (by path). */
  private readonly proposedFiles = new Map<string, string>();
  /** A mode to set once the approved exit tool call has run (the agent switches itself first). */
  private modeAfterExitTool: { toolCallId: string; modeId: string } | undefined;
  /** The session mode the agent last reported (for Codex, its permission preset). */
  private currentSessionMode: string | undefined;
  /** This turn: a change was refused, a plan review was opened; the nudge is sent once. */
  private refusedThisTurn = false;
  private planOfferedThisTurn = false;
  private nudged = false;
  /** The turn ends only to go on with the next prompt (Codex's implementation with the chosen preset). */
  private handingOver = false;
  /** Messages sent into the running turn (see joinTurn) whose prompt has not answered yet. */
  private joinedPrompts = 0;
  /** The turn's own prompt answered while a joined one still ran: the turn ends with the last of them. */
  private turnEndDeferred: StopReason | undefined;
  /** Status lines the agent sent during a turn without progress ("Reconnecting…"), for the timeout message. */
  private statusChatter: { last: string; count: number } | undefined;
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
    this.outsideAccess = options.outsideAccess ?? 'ask';
    // The agent's own folders follow the environment it runs with, not ours.
    const env = { ...(options.inheritEnv === false ? {} : process.env), ...options.env };
    this.home = options.home ?? env.HOME ?? homedir();
    this.files = new AgentFileAccess({
      workspace: this.workspace,
      home: agentDirs(this.home, env),
      secretFiles: options.secretFiles ?? [],
    });
  }

  /** The agent process id (for tests and diagnostics); undefined before start. */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** The mode the agent last reported. */
  get mode(): string | undefined {
    return this.currentMode;
  }

  /** The session mode the agent last reported; for Codex, whose plan mode is a config option, its permission preset. */
  get sessionMode(): string | undefined {
    return this.currentSessionMode;
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
        env: this.agentEnv(),
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

  private agentEnv(): Record<string, string | undefined> {
    return { ...(this.options.inheritEnv === false ? {} : process.env), ...this.options.env };
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
    if (this.promptActive && this.takesMessagesMidTurn()) this.joinTurn(text);
    else if (this.promptActive || !this.acpSessionId) this.queuedPrompts.push(text);
    else this.sendPrompt(text);
  }

  /**
   * Claude's adapter queues a prompt sent during a turn into Claude Code's input, and Claude Code
   * shows it to the model at its next request, inside the running turn ("The user sent a new
   * message while you were working"). After approval that is where the reviewer's notes belong:
   * with the approval, before the plan is carried out. Other agents get it after the turn.
   */
  private takesMessagesMidTurn(): boolean {
    return this.agentKind === 'claude' && this.approved && !this.handingOver;
  }

  private joinTurn(text: string): void {
    const connection = this.connection;
    const sessionId = this.acpSessionId;
    if (!connection || !sessionId) {
      this.queuedPrompts.push(text);
      return;
    }
    this.joinedPrompts += 1;
    this.log(`sent a message into the running turn (${text.length} chars)`);
    connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] }).then(
      (response) => this.onJoinedPromptEnd(response.stopReason),
      (error: unknown) => {
        this.log(`the message sent into the running turn failed: ${errorMessage(error)}`);
        this.onJoinedPromptEnd(undefined);
      },
    );
  }

  private onJoinedPromptEnd(stopReason: StopReason | undefined): void {
    this.joinedPrompts -= 1;
    const deferred = this.turnEndDeferred;
    if (this.joinedPrompts > 0 || deferred === undefined) return;
    this.turnEndDeferred = undefined;
    this.onTurnEnd(stopReason ?? deferred);
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
    if (review.kind === 'file_read') {
      review.answer(decision.behavior);
      this.ctx?.setStatus(this.reviews.size ? 'requires_action' : 'running');
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
      this.agentKind = isCodex(init.agentInfo)
        ? 'codex'
        : isClaudeAdapter(init.agentInfo)
          ? 'claude'
          : isGemini(init.agentInfo)
            ? 'gemini'
            : 'other';
      this.log(`initialized ${init.agentInfo ? `${init.agentInfo.name} ${init.agentInfo.version}` : 'an agent without agentInfo'}`);
      if (this.agentKind === 'codex') {
        step = 'authenticate';
        const auth = codexAuthentication(init, this.agentEnv());
        if ('methodId' in auth) {
          await withTimeout(
            connection.agent.request('authenticate', { methodId: auth.methodId }),
            bound,
            `${this.label} did not answer authenticate within ${seconds} s.`,
          );
          this.log(`authenticated with "${auth.methodId}"`);
        } else {
          this.log(`did not authenticate: ${auth.skip}`);
        }
      }

      step = 'session/new';
      const session = await withTimeout(
        connection.agent.request('session/new', {
          cwd: this.workspace,
          mcpServers: [],
          ...(this.agentKind === 'claude' ? { _meta: claudeSessionMeta(this.afterApproval) } : {}),
        }),
        bound,
        `${this.label} did not answer session/new within ${seconds} s.`,
      );
      this.acpSessionId = session.sessionId;
      this.currentMode = session.modes?.currentModeId;
      this.currentSessionMode = session.modes?.currentModeId;
      this.availableModeIds = (session.modes?.availableModes ?? []).map((mode) => mode.id);
      for (const mode of session.modes?.availableModes ?? []) this.modeNames.set(mode.id, mode.name);

      const choice = choosePlanMode(this.label, session);
      if (!choice.ok) {
        this.fail(choice.message);
        return;
      }
      this.planTarget = choice.target;
      this.modeNames.set(planModeId(choice.target), choice.target.name);
      step = 'the switch to plan mode';
      await withTimeout(this.switchToPlanMode(), bound, `${this.label} did not switch to plan mode within ${seconds} s.`);
      this.inPlanMode = true;
      this.currentMode = planModeId(choice.target);
      this.log(`session ${session.sessionId} in plan mode "${this.currentMode}"`);
      if (this.agentKind === 'codex') {
        // Codex in plan mode alone edits without asking: only its read-only preset turns edits
        // into permission requests (which we refuse while planning).
        if (!this.availableModeIds.includes(CODEX_READ_ONLY_PRESET)) {
          this.fail(
            `${this.label} offers no "${CODEX_READ_ONLY_PRESET}" preset (it offers ${this.availableModeIds.join(', ') || 'none'}), ` +
              `and in plan mode alone it edits files without asking. Ultraplan will not plan with it; install ${'@agentclientprotocol/codex-acp'} 2.6.0.`,
          );
          return;
        }
        step = `the switch to the "${CODEX_READ_ONLY_PRESET}" preset`;
        await withTimeout(
          connection.agent.request('session/set_mode', { sessionId: session.sessionId, modeId: CODEX_READ_ONLY_PRESET }),
          bound,
          `${this.label} did not switch to its "${CODEX_READ_ONLY_PRESET}" preset within ${seconds} s.`,
        );
        this.currentSessionMode = CODEX_READ_ONLY_PRESET;
        this.log(`set the "${CODEX_READ_ONLY_PRESET}" preset while planning`);
      }
    } catch (error) {
      if (error instanceof TimeoutError) this.fail(error.message);
      else {
        const refusal = this.agentKind === 'claude' ? claudeStartupRefusal(error, this.afterApproval) : undefined;
        if (refusal) {
          this.fail(refusal, { stderr: false });
          return;
        }
        const context = step === 'session/new' ? `${this.label} refused session/new` : `${this.label} failed during ${step}`;
        const hint = this.agentKind === 'codex' && (step === 'session/new' || step === 'authenticate') ? CODEX_LOGIN_HINT : undefined;
        await this.failFromError(context, error, hint);
      }
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
    this.reportMode();
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
    this.refusedThisTurn = false;
    this.planOfferedThisTurn = false;
    this.statusChatter = undefined;
    this.ctx?.setStatus('running');
    this.armFirstEventTimer();
    connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] }).then(
      (response) => this.onTurnEnd(response.stopReason),
      (error: unknown) =>
        void this.failFromError(`${this.label} failed while planning`, error, this.agentKind === 'codex' ? CODEX_LOGIN_HINT : undefined),
    );
  }

  private onTurnEnd(stopReason: StopReason): void {
    if (this.joinedPrompts > 0 && !this.finished && !this.stopping) {
      // Claude Code carries on with the joined message in the same piece of work: one result, at its end.
      this.turnEndDeferred = stopReason;
      return;
    }
    this.disarmFirstEventTimer();
    this.promptActive = false;
    if (this.finished || this.stopping) return;
    this.translator?.flush();
    const lastText = this.translator?.lastAssistantText ?? '';
    if (this.handingOver && this.queuedPrompts.length > 0) {
      // The approved plan's turn goes on in the next prompt (Codex with another preset): no result yet.
      this.handingOver = false;
      this.sendPrompt(this.queuedPrompts.shift() as string);
      return;
    }
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
      cancelReview(review);
    }
    this.reviews.clear();
    if (this.refusedThisTurn && !this.planOfferedThisTurn && !this.approved && !this.nudged && this.queuedPrompts.length === 0) {
      // Codex ends its turn when an edit is refused: ask once to go on planning, read-only.
      this.nudged = true;
      this.report(
        'acp_continue_planning',
        `${this.label} ended its turn after Ultraplan refused a change, without proposing a plan. Ultraplan asked it once to continue planning read-only.`,
        {},
      );
      this.queuedPrompts.push(CONTINUE_PLANNING_PROMPT);
    }
    const next = this.queuedPrompts.shift();
    if (next !== undefined) this.sendPrompt(next);
    else this.ctx?.setStatus('idle');
  }

  private armFirstEventTimer(): void {
    this.disarmFirstEventTimer();
    const bound = this.firstEventTimeoutMs;
    this.firstEventTimer = setTimeout(() => {
      this.firstEventTimer = undefined;
      const chatter = this.statusChatter;
      const what = chatter ? `only reported "${chatter.last}"${chatter.count > 1 ? ` (${chatter.count} times)` : ''}` : 'sent nothing';
      this.fail(
        `${this.label} ${what} for ${Math.round(bound / 1000)} s after the prompt. It may be retrying a model ` +
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
    // Only signs of the model at work count: adapters send command lists, usage and status
    // ("Reconnecting…") on their own.
    if (this.promptActive && PROGRESS_UPDATES.has(update.sessionUpdate)) this.sawEvent();
    const raw = update as unknown as { sessionUpdate: string } & Record<string, unknown>;
    const status = this.agentKind === 'codex' ? codexStatusText(raw) : undefined;
    if (status) {
      this.statusChatter = { last: status, count: (this.statusChatter?.count ?? 0) + 1 };
      this.log(`status: ${status}`);
    }
    const sessionMode = sessionModeFromUpdate(raw);
    if (sessionMode !== undefined) this.currentSessionMode = sessionMode;
    const textMode = this.agentKind === 'gemini' ? geminiModeUpdate(raw) : undefined;
    if (textMode !== undefined) {
      // A mode signal, not something the agent said.
      this.onModeReported(textMode);
      return;
    }
    const notice = this.agentKind === 'claude' ? claudeNotice(raw) : undefined;
    if (notice !== undefined) {
      // The adapter's own notice: in the log, never taken for the model's question or plan.
      this.report('acp_agent_notice', `${this.label}: ${notice}`, {});
      return;
    }
    if (update.sessionUpdate === 'tool_call' || update.sessionUpdate === 'tool_call_update') this.onToolCallSeen(update);
    const mode = modeFromUpdate(raw, this.planTarget);
    if (mode !== undefined) {
      this.onModeReported(mode);
      return;
    }
    this.translator?.update(update);
  }

  /**
   * While planning, remembers the whole new text of each file an edit tool call completed (Gemini
   * announces its plan file only so); after approval, runs a mode switch that waits for the exit
   * tool call to complete.
   */
  private onToolCallSeen(call: ToolCallUpdate): void {
    if (!this.approved && call.status === 'completed') {
      for (const item of call.content ?? []) {
        if (item.type !== 'diff') continue;
        const file = path.resolve(this.workspace, item.path);
        this.proposedFiles.delete(file);
        this.proposedFiles.set(file, item.newText);
        const oldest = this.proposedFiles.size > MAX_PROPOSED_FILES ? this.proposedFiles.keys().next().value : undefined;
        if (oldest !== undefined) this.proposedFiles.delete(oldest);
      }
    }
    const pending = this.modeAfterExitTool;
    if (pending && call.toolCallId === pending.toolCallId && (call.status === 'completed' || call.status === 'failed')) {
      this.modeAfterExitTool = undefined;
      if (call.status === 'completed') this.switchModeAfterApproval(pending.modeId);
    }
  }

  /**
   * Puts the agent's current mode in the session's events when it changed since the last report:
   * what the person sees as the agent's mode is what the agent said, and whether we still hold it
   * read-only (until a plan is approved).
   */
  private reportMode(): void {
    const id = this.currentMode;
    if (!id || !this.inPlanMode) return;
    const readOnly = !this.approved;
    const key = `${id}\n${readOnly}`;
    if (key === this.reportedMode) return;
    this.reportedMode = key;
    const name = this.modeNames.get(id);
    this.emit(agentModeEvent(name ? { id, name } : { id }, readOnly));
  }

  /** From here on the session is no longer held read-only: the person approved a plan. */
  private markApproved(): void {
    this.approved = true;
    this.reportMode();
  }

  private onModeReported(mode: string): void {
    const previous = this.currentMode;
    this.currentMode = mode;
    this.reportMode();
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
        this.reportMode();
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
    const otherModeIds =
      this.planTarget?.via === 'mode' ? this.availableModeIds.filter((id) => id !== planModeId(this.planTarget as PlanModeTarget)) : [];
    if (!this.approved && (isPlanExitRequest(request, { otherModeIds }) || (this.agentKind === 'gemini' && isGeminiPlanExit(toolCall)))) {
      this.log(`plan review requested (${toolCall.toolCallId})`);
      const plan = await this.planFor(toolCall);
      translator.flush();
      const toolUseId = translator.exitPlanToolUse(toolCall.toolCallId, plan);
      return new Promise<RequestPermissionResponse>((answer) => {
        this.openReview(
          { kind: 'plan_permission', toolUseId, agentToolCallId: toolCall.toolCallId, plan, options: request.options, answer },
          toolUseId,
          'ExitPlanMode',
          { plan },
        );
      });
    }
    const kind = toolCall.kind ?? translator.toolCall(toolCall.toolCallId)?.kind ?? 'other';
    const title = toolCall.title ?? translator.toolCall(toolCall.toolCallId)?.title ?? toolCall.toolCallId;
    if (!this.approved) {
      let message = permissionRefusal(kind, title);
      if (LOOKING_TOOL_KINDS.has(kind)) {
        const verdict = this.byOutsideAccess(await this.lookingVerdict(kind, toolCall), title);
        if (verdict.kind === 'allow') {
          const allow = request.options.find((option) => option.kind === 'allow_once');
          this.log(`allowed "${title}" (${kind}) while planning`);
          return allow ? { outcome: { outcome: 'selected', optionId: allow.optionId } } : CANCELLED;
        }
        if (verdict.kind === 'ask') {
          this.log(`asked the person about "${title}" (${kind}) while planning: ${verdict.reason}`);
          return this.askPerson(translator, toolCall, title, request.options);
        }
        message = verdict.message;
      }
      this.refusedThisTurn = true;
      if (isUnclearRequest(toolCall, translator.toolCall(toolCall.toolCallId)?.kind ?? undefined)) {
        // It may have been a plan exit we do not recognise: the person hears of it, not only the
        // agent, in the conversation they read (the session's last message when the turn ends).
        const unclear =
          `${this.label} asked permission for "${title}" (kind ${kind}) while planning, with the options ` +
          `${request.options.map((option) => `"${option.name}"`).join(', ') || 'none'}. Ultraplan cannot tell whether this ` +
          `is its request to leave plan mode or a change, so it refused it to keep planning read-only. If it was the plan, ` +
          `ask the agent to show the plan as text.`;
        this.report('acp_unclear_request', unclear, { kind, title });
        translator.flush();
        translator.assistantText(`Ultraplan: ${unclear}`);
      } else {
        this.report('acp_refused', message, { method: 'session/request_permission', kind, title });
      }
      const reject = chooseRejectOption(this.label, request.options);
      const meta = { ultraplan: { refused: message } };
      return reject.ok
        ? { outcome: { outcome: 'selected', optionId: reject.option.optionId }, _meta: meta }
        : { ...CANCELLED, _meta: meta };
    }
    if (this.afterApproval === 'acceptEdits' && kind === 'edit' && this.editsOnlyWorkspace(toolCall)) {
      // The person chose to accept edits; the agent may ask before its switch to that mode lands.
      const allow = chooseToolAllowOption(this.label, request.options);
      if (allow.ok) {
        this.log(`accepted the edit "${title}" (ultraplan.afterApproval = acceptEdits)`);
        return { outcome: { outcome: 'selected', optionId: allow.option.optionId } };
      }
    }
    // After approval the agent executes; each permission it asks goes to the reviewer.
    return this.askPerson(translator, toolCall, title, request.options);
  }

  /** A permission request put to the person in the review; answered by their choice. */
  private askPerson(
    translator: AcpEventTranslator,
    toolCall: RequestPermissionRequest['toolCall'],
    title: string,
    options: RequestPermissionRequest['options'],
  ): Promise<RequestPermissionResponse> {
    translator.ensureToolUse(toolCall);
    return new Promise<RequestPermissionResponse>((answer) => {
      this.openReview(
        { kind: 'tool_permission', toolUseId: toolCall.toolCallId, options, answer },
        toolCall.toolCallId,
        title,
        toolCall.rawInput ?? {},
      );
    });
  }

  /** An edit whose every named file is inside the workspace, outside .git (and at least one is named). */
  private editsOnlyWorkspace(toolCall: ToolCallUpdate): boolean {
    const files = [
      ...(toolCall.locations ?? []).map((location) => location.path),
      ...(toolCall.content ?? []).flatMap((item) => (item.type === 'diff' ? [item.path] : [])),
    ];
    return (
      files.length > 0 &&
      files.every(
        (file) =>
          path.isAbsolute(file) && isInside(this.workspace, path.resolve(file)) && !path.resolve(file).split(path.sep).includes('.git'),
      )
    );
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
        this.report(
          'acp_elicitation_declined',
          `${this.label} asked "${request.message}" in a way Ultraplan cannot show, so it declined.`,
          {},
        );
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
    if (review.kind !== 'tool_permission') this.planOfferedThisTurn = true;
    this.reviews.set(requestId, review);
    this.emit({
      type: 'control_request',
      request_id: requestId,
      request: { subtype: 'can_use_tool', tool_name: toolName, input, tool_use_id: toolUseId },
    });
    this.ctx?.setStatus('requires_action');
  }

  /**
   * A looking tool call while planning: a fetch goes to the person (it can send what was read to
   * anyone); a read or search is allowed inside the workspace, goes to the person outside it, and
   * is refused for the kernel's files and our secrets.
   */
  private async lookingVerdict(kind: string, toolCall: ToolCallUpdate): Promise<ReadVerdict> {
    if (kind === 'fetch') return { kind: 'ask', reason: 'a fetch can send what the agent read to anyone' };
    if (kind === 'think') return { kind: 'allow' };
    const remembered = this.translator?.toolCall(toolCall.toolCallId);
    let result: ReadVerdict = { kind: 'allow' };
    for (const looked of lookedAtPaths(
      { rawInput: toolCall.rawInput ?? remembered?.rawInput, locations: toolCall.locations },
      this.workspace,
      this.home,
    )) {
      const { verdict } = await this.files.readVerdict(looked);
      if (verdict.kind === 'refuse') return verdict;
      if (verdict.kind === 'ask' && result.kind === 'allow') result = verdict;
    }
    return result;
  }

  /** A question for the person, unless ultraplan's outside-access setting answers it. */
  private byOutsideAccess(verdict: ReadVerdict, what: string): ReadVerdict {
    if (verdict.kind !== 'ask' || this.outsideAccess === 'ask') return verdict;
    this.log(
      `${this.outsideAccess === 'allow' ? 'allowed' : 'refused'} "${what}" without asking (outside access "${this.outsideAccess}"): ${verdict.reason}`,
    );
    return this.outsideAccess === 'allow'
      ? { kind: 'allow' }
      : {
          kind: 'refuse',
          message: `Ultraplan refused "${what}": ${verdict.reason}, and reads outside the workspace and fetches are set to be refused.`,
        };
  }

  private async onReadFile(
    request: ReadTextFileRequest,
    RequestError: new (code: number, message: string) => Error,
  ): Promise<{ content: string }> {
    this.sawEvent();
    const outcome = await this.files.read(request.path, (real, reason) => this.askToRead(real, reason));
    if (
      !outcome.ok &&
      outcome.missing &&
      this.agentKind === 'gemini' &&
      this.approved &&
      isInside(this.workspace, path.resolve(request.path))
    ) {
      // Gemini's edit tools read a file before writing it and take any error for an unreadable
      // file (agents/gemini.ts): once it may edit, a file to be created reads as empty.
      return { content: '' };
    }
    if (!outcome.ok) {
      if (outcome.refused) this.report('acp_refused', outcome.message, { method: 'fs/read_text_file', path: request.path });
      throw new RequestError(outcome.refused ? -32000 : -32002, outcome.message);
    }
    const content = outcome.value;
    if (request.line == null && request.limit == null) return { content };
    const lines = content.split('\n');
    const start = Math.max(0, (request.line ?? 1) - 1);
    const end = request.limit == null ? lines.length : start + Math.max(0, request.limit);
    return { content: lines.slice(start, end).join('\n') };
  }

  /** A read outside the workspace goes to the person, through the same path as any tool permission. */
  private askToRead(real: string, reason: string): Promise<boolean> {
    if (this.finished || this.stopping) return Promise.resolve(false);
    const verdict = this.byOutsideAccess({ kind: 'ask', reason }, `Read ${real}`);
    if (verdict.kind !== 'ask') return Promise.resolve(verdict.kind === 'allow');
    this.log(`asked the person to allow reading ${real} (${reason})`);
    return new Promise<boolean>((answer) => {
      const toolUseId = `read-${randomUUID()}`;
      // A tool_use and, once answered, its tool_result: every reader of the log sees the request settle.
      this.translator?.ensureToolUse({ toolCallId: toolUseId, title: `Read ${real}`, kind: 'read', rawInput: { file_path: real } });
      this.openReview(
        {
          kind: 'file_read',
          answer: (decision) => {
            const allowed = decision === 'allow';
            this.log(
              decision === 'cancel'
                ? `the request to read ${real} ended unanswered`
                : `the person ${allowed ? 'allowed' : 'denied'} reading ${real}`,
            );
            this.translator?.toolResult(
              toolUseId,
              allowed ? `The person allowed reading ${real}.` : accessDenial(`reading ${real}`),
              !allowed,
            );
            answer(allowed);
          },
        },
        toolUseId,
        'Read',
        { file_path: real, reason },
      );
    });
  }

  private async onWriteFile(
    request: WriteTextFileRequest,
    RequestError: new (code: number, message: string) => Error,
  ): Promise<Record<string, never>> {
    this.sawEvent();
    const outcome = await this.files.write(request.path, request.content, !this.approved);
    if (!outcome.ok) {
      if (outcome.refused && !this.approved) this.refusedThisTurn = true;
      if (outcome.refused) this.report('acp_refused', outcome.message, { method: 'fs/write_text_file', path: request.path });
      throw new RequestError(outcome.refused ? -32000 : -32603, outcome.message);
    }
    // The plan file: remembered so the exit request naming it reads what was written.
    if (outcome.value === 'plan') this.log(`wrote the plan file ${path.resolve(request.path)}`);
    return {};
  }

  /** The plan of an exit request: rawInput.plan, else its text, else the plan file it names. */
  private async planFor(toolCall: ToolCallUpdate): Promise<string> {
    if (this.agentKind === 'gemini' && isGeminiPlanExit(toolCall)) return this.geminiPlan(toolCall);
    // An empty rawInput (Claude's adapter, when the model passed the plan inline) falls back to
    // what the same tool call announced in its update, which may come just after the request.
    const ownInput =
      toolCall.rawInput && typeof toolCall.rawInput === 'object' && Object.keys(toolCall.rawInput).length ? toolCall.rawInput : undefined;
    const textOrFile = toolCallText(toolCall).trim() !== '' || (toolCall.locations?.length ?? 0) > 0;
    const remembered =
      ownInput !== undefined
        ? undefined
        : textOrFile
          ? this.translator?.toolCall(toolCall.toolCallId)?.rawInput
          : await this.announcedInput(toolCall.toolCallId);
    const source = planSource({
      rawInput: ownInput ?? remembered,
      content: toolCall.content,
      locations: toolCall.locations,
    });
    if (source.kind === 'text') return source.text;
    if (source.kind === 'none') return this.planWithoutSource(toolCall.toolCallId);
    return this.namedPlanText(path.resolve(this.workspace, source.path));
  }

  /**
   * The rawInput a tool call announced in its updates. Claude's adapter asks its permission from
   * one path and streams the tool call's input from another, so the update carrying the plan may
   * arrive just after the request: waited for, briefly, when the request came without one.
   */
  private async announcedInput(toolCallId: string): Promise<unknown> {
    const deadline = Date.now() + ANNOUNCED_INPUT_WAIT_MS;
    for (;;) {
      const input = this.translator?.toolCall(toolCallId)?.rawInput;
      if (
        rawInputPlan({ rawInput: input }) ||
        namedPlanFile({ rawInput: input }) ||
        Date.now() > deadline ||
        this.finished ||
        this.stopping
      )
        return input;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** No plan in the request: the agent's last words are the plan it proposed, if it said any. */
  private planWithoutSource(toolCallId: string): string {
    this.log(`the exit-plan request ${toolCallId} carries no plan`);
    const said = this.translator?.lastAssistantText.trim();
    return said || `(${this.label} asked to leave plan mode without a plan text.)`;
  }

  /** Gemini's plan: the edit that wrote the file its request names, else exactly that file (under the read policy). */
  private async geminiPlan(toolCall: ToolCallUpdate): Promise<string> {
    const named = geminiPlanPath(toolCall);
    if (!named) return this.planWithoutSource(toolCall.toolCallId);
    const file = path.resolve(this.workspace, named);
    const proposed = this.proposedFiles.get(file);
    if (proposed !== undefined) return proposed;
    return this.namedPlanText(file);
  }

  /** The plan file an exit request names, read under the policy, or why not. */
  private async namedPlanText(resolved: string): Promise<string> {
    const named = await this.files.namedPlan(resolved);
    if (named.ok) return named.value;
    this.log(`did not read the named plan file ${resolved}: ${named.message}`);
    return `(${this.label} named its plan file ${resolved}, but Ultraplan did not read it: ${named.message}.)`;
  }

  // -------------------------------------------------------------------------------------------
  // Decisions

  private approvePlan(review: PlanReview, decision: PermissionDecision & { behavior: 'allow' }): void {
    const edited = typeof decision.updatedInput.plan === 'string' ? decision.updatedInput.plan : review.plan;
    const wasEdited = edited !== review.plan;
    if (review.kind === 'plan_permission' && this.agentKind === 'codex' && codexImplementOption(review.options)) {
      this.approveCodexPlan(review, edited, wasEdited);
      return;
    } else if (review.kind === 'plan_permission') {
      const claude = this.agentKind === 'claude' ? claudeApproval(review.options, this.afterApproval) : undefined;
      const gemini = this.agentKind === 'gemini';
      // Gemini offers a plain Allow only: the mode chosen is set once its exit tool call ran.
      let choice = claude
        ? { ok: true as const, option: claude.option }
        : chooseApproveOption(this.label, review.options, gemini ? 'default' : this.afterApproval);
      let thenMode: string | undefined = claude?.thenMode;
      const geminiMode = gemini ? geminiModeAfterApproval(this.afterApproval) : undefined;
      if (geminiMode) this.modeAfterExitTool = { toolCallId: review.agentToolCallId, modeId: geminiMode };
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
      this.markApproved();
      this.translator?.toolResult(review.toolUseId, this.approvedText(edited, wasEdited), false);
      review.answer({ outcome: { outcome: 'selected', optionId: choice.option.optionId } });
      this.log(`approved the plan with "${choice.option.name}" (${choice.option.optionId})`);
    } else {
      this.markApproved();
      this.translator?.toolResult(review.toolUseId, this.approvedText(edited, wasEdited), false);
      review.answer({ action: 'accept', content: { [review.form.choiceKey]: review.form.approveValue } });
      this.log(`approved the plan with "${review.form.approveValue}"`);
    }
    if (wasEdited) {
      this.queuePrompt(`The reviewer edited the plan before approving it. Follow this version:\n\n${edited}`);
    }
  }

  /**
   * Codex's adapter implements an approved plan at once, in the same prompt, with the preset that
   * was in force when that prompt began (read-only, while planning). When the person chose that
   * preset (ultraplan.afterApproval = default: each edit asked), implement_plan is the answer.
   * Otherwise the preset is set, plan mode left, the review closed with revise_plan (which the
   * model never sees) and the adapter's own next prompt sent, so the implementation runs with
   * the chosen preset.
   */
  private approveCodexPlan(review: Extract<PendingReview, { kind: 'plan_permission' }>, edited: string, wasEdited: boolean): void {
    const implement = codexImplementOption(review.options) as PermissionOption;
    const preset = codexPresetAfterApproval(this.afterApproval, this.availableModeIds);
    const connection = this.connection;
    const sessionId = this.acpSessionId;
    this.markApproved();
    this.translator?.toolResult(review.toolUseId, this.approvedText(edited, wasEdited), false);
    if (!preset || !connection || !sessionId || preset === this.currentSessionMode) {
      if (!preset)
        this.log(
          `${this.label} offers no preset for ultraplan.afterApproval = ${this.afterApproval}; it keeps "${this.currentSessionMode}"`,
        );
      review.answer({ outcome: { outcome: 'selected', optionId: implement.optionId } });
      this.log(`approved the plan with "${implement.name}" (${implement.optionId}); the "${this.currentSessionMode}" preset stays`);
      if (wasEdited) this.queuePrompt(`The reviewer edited the plan before approving it. Follow this version:\n\n${edited}`);
      return;
    }
    const close = chooseRejectOption(this.label, review.options);
    const leave = codexLeavePlanMode(this.planTarget);
    void (async () => {
      try {
        await connection.agent.request('session/set_mode', { sessionId, modeId: preset });
        this.currentSessionMode = preset;
        if (leave) await connection.agent.request('session/set_config_option', { sessionId, configId: leave.configId, value: leave.value });
      } catch (error) {
        review.answer(CANCELLED);
        this.fail(
          `Could not switch ${this.label} to its "${preset}" preset after approval, so the plan was not approved: ${errorMessage(error)}`,
        );
        return;
      }
      this.log(`set the "${preset}" preset after approval (ultraplan.afterApproval = ${this.afterApproval}) and left plan mode`);
      if (close.ok) {
        this.handingOver = true;
        this.queuedPrompts.unshift(
          wasEdited
            ? `${CODEX_IMPLEMENT_PROMPT} The reviewer edited it before approving; follow this version:\n\n${edited}`
            : CODEX_IMPLEMENT_PROMPT,
        );
      }
      review.answer({ outcome: { outcome: 'selected', optionId: close.ok ? close.option.optionId : implement.optionId } });
    })();
  }

  private switchModeAfterApproval(modeId: string): void {
    const connection = this.connection;
    const sessionId = this.acpSessionId;
    if (!connection || !sessionId) return;
    // After the permission answer, so the agent's own switch to manual mode does not undo it.
    setTimeout(() => {
      connection.agent.request('session/set_mode', { sessionId, modeId }).then(
        () => this.log(`switched to "${modeId}" after approval (ultraplan.afterApproval)`),
        (error: unknown) => {
          const message = errorMessage(error);
          const hint = this.agentKind === 'gemini' && /untrusted/i.test(message) ? ` ${GEMINI_TRUST_HINT}` : '';
          this.report(
            'acp_decision_error',
            `Could not switch ${this.label} to "${modeId}" after approval: ${message.replace(/\.$/, '')}.${hint}`,
            {},
          );
        },
      );
    }, 0);
  }

  private approvedText(plan: string, edited: boolean): string {
    return `User approved the plan.\n\n${edited ? APPROVED_PLAN_EDITED_MARKER : APPROVED_PLAN_MARKER}${plan}`;
  }

  private rejectPlan(review: PlanReview, message: string): void {
    const teleport = message.includes(ULTRAPLAN_TELEPORT_SENTINEL);
    let feedbackInAnswer = false;
    if (review.kind === 'plan_permission') {
      const claudeReject = this.agentKind === 'claude' ? claudeRejectOption(review.options) : undefined;
      const choice = claudeReject ? { ok: true as const, option: claudeReject } : chooseRejectOption(this.label, review.options);
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
      this.queuePrompt(
        `The reviewer rejected the plan. Their feedback:\n\n${message}\n\nStay in plan mode, revise the plan, and ask again when it is ready.`,
      );
    }
  }

  private decideToolPermission(review: Extract<PendingReview, { kind: 'tool_permission' }>, decision: PermissionDecision): void {
    const choice =
      decision.behavior === 'allow'
        ? chooseToolAllowOption(this.label, review.options)
        : chooseToolRejectOption(this.label, review.options);
    if (!choice.ok) {
      review.answer(CANCELLED);
      this.report('acp_decision_error', choice.message, {});
      this.translator?.toolResult(review.toolUseId, choice.message, true);
      return;
    }
    review.answer({ outcome: { outcome: 'selected', optionId: choice.option.optionId } });
    this.log(
      `${decision.behavior === 'allow' ? 'allowed' : 'denied'} ${review.toolUseId} with "${choice.option.name}" (${choice.option.optionId})`,
    );
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
    connection.agent
      .notify('session/cancel', { sessionId })
      .catch((error: unknown) => this.log(`session/cancel failed: ${errorMessage(error)}`));
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
  private async failFromError(context: string, error: unknown, loginHint?: string): Promise<void> {
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
      ? ` ${loginHint ?? `Log in with ${this.label}'s own command line (or set its API key), then start again.`}`
      : '';
    this.fail(`${context}: ${message}.${hint}`);
  }

  /** Ends the session with `message`; the agent's last stderr lines follow unless the message already says it all. */
  private fail(message: string, options: { stderr: boolean } = { stderr: true }): void {
    if (this.finished || this.stopping) return;
    this.finished = true;
    this.disarmFirstEventTimer();
    this.translator?.flush();
    const tail =
      options.stderr && this.proc?.stderrTail().slice(-STDERR_IN_MESSAGE_CHARS).split('\n').slice(-STDERR_IN_MESSAGE_LINES).join('\n');
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
    for (const review of this.reviews.values()) cancelReview(review);
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

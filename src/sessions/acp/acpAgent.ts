// An ACP agent (Claude's adapter, Gemini CLI, Codex's adapter, …) planning behind the Agent seam:
// spawned as a child process, switched to its plan mode, its updates translated into the session
// event log, its exit-plan request turned into an ExitPlanMode review, and kept read-only until
// the reviewer approves. This class owns the process and the connection and routes between the
// parts: the handshake, the turn queue, the planning guard, the plan texts, the agent's requests
// and the review decisions; what differs by agent comes from its quirks (agents/).
import { homedir } from 'node:os';
import * as path from 'node:path';
import type { ClientConnection, InitializeResponse, SessionNotification, StopReason, ToolCallUpdate } from '@agentclientprotocol/sdk' with {
  'resolution-mode': 'import',
};
import type { AnyEvent, PermissionDecision, SessionStatus } from '../../core/protocol';
import type { Agent, AgentContext, AgentStartOptions, ResumeOutcome } from '../agent';
import { SavedSession, parseAcpCheckpoint } from './acpCheckpoint';
import { labelFromArgv } from './agentLabel';
import { AgentFileAccess } from './agentFileAccess';
import { AgentProcess, type AgentExit } from './agentProcess';
import { AgentRequests, type AgentRequestsHost } from './agentRequests';
import { PLAIN_ACP, type AgentQuirks } from './agents/agentQuirks';
import { AcpEventTranslator } from './eventTranslator';
import { enterCarryOut, handshake, type HandshakeHost, type SessionStart } from './handshake';
import { PendingReviews, type PendingReviewsHost } from './pendingReviews';
import { modeFromUpdate, sessionModeFromUpdate } from './planMode';
import { PlanningGuard, type PlanningGuardHost } from './planningGuard';
import type { AfterApproval } from './planReview';
import { PlanTexts, type PlanTextHost } from './planText';
import { agentDirs, type OutsideAccess } from './readOnlyPolicy';
import { errorMessage } from './requestErrors';
import { ReviewDecisions, type ReviewDecisionsHost } from './reviewDecisions';
import { acpSdk } from './sdk';
import type { AcpSessionChannel } from './sessionChannel';
import { TurnQueue, type TurnQueueHost } from './turnQueue';

export { CONTINUE_PLANNING_PROMPT } from './planningGuard';

export const DEFAULT_FIRST_EVENT_TIMEOUT_MS = 120_000;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 120_000;
export const DEFAULT_STOP_GRACE_MS = 2_000;
/** How much stderr an error message quotes. */
const STDERR_IN_MESSAGE_CHARS = 2_000;
const STDERR_IN_MESSAGE_LINES = 12;

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

/** What the parts of one agent ask of it, and of each other. */
type PartsHost = HandshakeHost &
  TurnQueueHost &
  PlanningGuardHost &
  PendingReviewsHost &
  PlanTextHost &
  ReviewDecisionsHost &
  AgentRequestsHost;

/** Updates that show a turn is progressing (for the first-event bound). */
const PROGRESS_UPDATES: ReadonlySet<string> = new Set([
  'agent_message_chunk',
  'agent_thought_chunk',
  'tool_call',
  'tool_call_update',
  'plan',
]);

export class AcpAgent implements Agent {
  readonly label: string;
  readonly #options: AcpAgentOptions;
  readonly #workspace: string;
  readonly #translator: AcpEventTranslator;
  readonly #guard: PlanningGuard;
  readonly #turns: TurnQueue;
  readonly #reviews: PendingReviews;
  readonly #planTexts: PlanTexts;
  readonly #decisions: ReviewDecisions;
  readonly #requests: AgentRequests;
  readonly #host: PartsHost;

  #ctx: AgentContext | undefined;
  #proc: AgentProcess | undefined;
  #connection: ClientConnection | undefined;
  #session: AcpSessionChannel | undefined;
  #agentInfo: InitializeResponse['agentInfo'];
  /** What sets this agent apart, known once initialize answers. */
  #quirks: AgentQuirks = PLAIN_ACP;
  #finished = false;
  #replaying = false;
  readonly #saved = new SavedSession((state) => this.#ctx?.checkpoint?.(state));
  #stopping: Promise<void> | undefined;

  constructor(options: AcpAgentOptions) {
    if (options.argv.length === 0 || !options.argv[0]) throw new Error('The ACP agent command is empty.');
    this.#options = options;
    this.label = options.label ?? labelFromArgv(options.argv);
    this.#workspace = path.resolve(options.cwd);
    // The agent's own folders follow the environment it runs with, not ours.
    const env = this.#agentEnv();
    const home = options.home ?? env.HOME ?? homedir();
    const files = new AgentFileAccess({ workspace: this.#workspace, home: agentDirs(home, env), secretFiles: options.secretFiles ?? [] });
    this.#translator = new AcpEventTranslator((event) => this.#emit(event));
    const host = (this.#host = this.#partsHost(home, files));
    this.#guard = new PlanningGuard(host);
    this.#turns = new TurnQueue(host, options.firstEventTimeoutMs ?? DEFAULT_FIRST_EVENT_TIMEOUT_MS);
    this.#reviews = new PendingReviews(host);
    this.#planTexts = new PlanTexts(host);
    this.#decisions = new ReviewDecisions(host);
    this.#requests = new AgentRequests(host);
  }

  /** The agent process id (for tests and diagnostics); undefined before start. */
  get pid(): number | undefined {
    return this.#proc?.pid;
  }

  /** The mode the agent last reported. */
  get mode(): string | undefined {
    return this.#guard.mode;
  }

  /** The session mode the agent last reported; for Codex, whose plan mode is a config option, its permission preset. */
  get sessionMode(): string | undefined {
    return this.#guard.sessionMode;
  }

  async start(ctx: AgentContext, prompt: string, options?: AgentStartOptions): Promise<void> {
    const connection = this.#spawn(ctx);
    if (connection) void this.#startSession(connection, { kind: 'new', carryOut: options?.carryOut === true }, prompt);
  }

  /** After a restart of the host: its own session back through session/load (not its open requests), or lost, with why. */
  async resume(ctx: AgentContext, checkpoint: unknown): Promise<ResumeOutcome> {
    const saved = parseAcpCheckpoint(checkpoint);
    if (!saved) return { lost: 'no ACP session of it was saved' };
    if (!saved.loadable) return { lost: `${this.label} is not resumed with session/load` };
    const connection = this.#spawn(ctx);
    if (!connection) return { lost: `${this.label} could not be started` };
    const outcome = await handshake(connection, this.#host, { kind: 'load', sessionId: saved.sessionId, carryOut: saved.approved });
    if (!outcome.ok) {
      await this.stop();
      return { lost: 'message' in outcome ? outcome.message : `${outcome.context}: ${errorMessage(outcome.error)}` };
    }
    this.#saveCheckpoint();
    ctx.setStatus('idle');
    return 'reloaded';
  }

  /** A reloaded session's plan was approved: leave plan mode as Approve would, then carry it out. */
  carryOut(prompt: string): void {
    const session = this.#session;
    if (!this.#live || !session) return;
    enterCarryOut(session, this.#quirks, this.#guard, this.#host.afterApproval).then(
      () => this.#turns.message(prompt, false),
      (error: unknown) => this.#fail(`Could not switch ${this.label} out of plan mode to carry out the plan: ${errorMessage(error)}`),
    );
  }

  /** The process and the connection, with every request of the agent routed; undefined when it could not start. */
  #spawn(ctx: AgentContext): ClientConnection | undefined {
    if (this.#ctx) throw new Error('AcpAgent was started twice.');
    this.#ctx = ctx;
    ctx.signal.addEventListener('abort', () => void this.stop(), { once: true });
    ctx.setStatus('running');
    const acp = acpSdk();

    let proc: AgentProcess;
    try {
      proc = new AgentProcess({
        argv: this.#options.argv,
        cwd: this.#workspace,
        env: this.#agentEnv(),
        onMalformedLine: (line) =>
          this.#fail(`${this.label} wrote a line that is not JSON-RPC on its protocol channel: "${line.slice(0, 200)}"`),
      });
    } catch (error) {
      this.#fail(`Could not start ${this.label}: ${errorMessage(error)}`);
      return undefined;
    }
    this.#proc = proc;
    this.#log(`started ${this.#options.argv.join(' ')} (pid ${proc.pid ?? '?'}) in ${this.#workspace}`);
    void proc.exited.then((exit) => {
      if (!this.#finished && !this.#stopping) this.#fail(this.#describeExit(exit));
    });

    const requests = this.#requests;
    const app = acp.client({ name: 'ultraplan' });
    app.onNotification('session/update', ({ params }) => this.#onSessionUpdate(params));
    app.onRequest('session/request_permission', ({ params }) => requests.permission(params));
    app.onRequest('fs/read_text_file', ({ params }) => requests.readFile(params, acp.RequestError));
    app.onRequest('fs/write_text_file', ({ params }) => requests.writeFile(params, acp.RequestError));
    for (const method of ['terminal/create', 'terminal/output', 'terminal/release', 'terminal/wait_for_exit', 'terminal/kill'] as const) {
      app.onRequest(method, () => requests.terminal(method, acp.RequestError));
    }
    app.onRequest('elicitation/create', ({ params }) => requests.elicitation(params));
    app.onNotification('elicitation/complete', () => undefined);

    this.#connection = app.connect(acp.ndJsonStream(proc.input(), proc.output()));
    return this.#connection;
  }

  onUserMessage(text: string): void {
    if (!this.#live) {
      this.#log(`ignored a user message: the agent has ended`);
      return;
    }
    if (this.#requests.answerQuestion(text)) {
      this.#reviews.settleStatus();
      return;
    }
    this.#turns.message(text, this.#quirks.joinsTurnAfterApproval && this.#guard.approved);
  }

  onDecision(requestId: string, decision: PermissionDecision): void {
    this.#decisions.decide(requestId, decision);
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#shutdown();
    return this.#stopping;
  }

  #agentEnv(): Record<string, string | undefined> {
    return { ...(this.#options.inheritEnv === false ? {} : process.env), ...this.#options.env };
  }

  get #live(): boolean {
    return !this.#finished && !this.#stopping;
  }

  /** The object the parts share: this agent's state and acts, by name. */
  #partsHost(home: string, files: AgentFileAccess): PartsHost {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the getters below read the agent's live state
    const agent = this;
    const options = this.#options;
    return {
      label: this.label,
      workspace: this.#workspace,
      get env() {
        return agent.#agentEnv();
      },
      home,
      files,
      boundMs: options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
      afterApproval: options.afterApproval ?? 'default',
      outsideAccess: options.outsideAccess ?? 'ask',
      get translator() {
        return agent.#translator;
      },
      get guard() {
        return agent.#guard;
      },
      get turns() {
        return agent.#turns;
      },
      get reviews() {
        return agent.#reviews;
      },
      get planTexts() {
        return agent.#planTexts;
      },
      get quirks() {
        return agent.#quirks;
      },
      get session() {
        return agent.#session;
      },
      get live() {
        return agent.#live;
      },
      get ended() {
        return agent.#finished;
      },
      introduced: (agentInfo, quirks, loadable) => {
        this.#agentInfo = agentInfo;
        this.#quirks = quirks;
        this.#saved.loadable = loadable;
      },
      sessionCreated: (session) => {
        this.#session = session;
      },
      replaying: (on) => {
        this.#replaying = on;
      },
      enterPlanMode: async (target) => {
        await this.#session?.enterPlanMode(target);
      },
      turnStarted: () => {
        this.#guard.turnStarted();
        this.#ctx?.setStatus('running');
      },
      turnEnded: (stopReason) => this.#turnEnded(stopReason),
      promptFailed: (error) => void this.#failFromError(`${this.label} failed while planning`, error, this.#quirks.loginHint),
      silent: (message) => this.#fail(message),
      planOffered: () => this.#guard.planOffered(),
      setStatus: (status: Exclude<SessionStatus, 'archived'>) => this.#ctx?.setStatus(status),
      emit: (event) => this.#emit(event),
      report: (subtype, message, extra) => this.#report(subtype, message, extra),
      log: (line) => this.#log(line),
      fail: (message) => this.#fail(message),
    };
  }

  async #startSession(connection: ClientConnection, start: SessionStart & { kind: 'new' }, prompt: string): Promise<void> {
    const outcome = await handshake(connection, this.#host, start);
    if (!outcome.ok) {
      if ('message' in outcome) this.#fail(outcome.message, { stderr: !outcome.complete });
      else await this.#failFromError(outcome.context, outcome.error, outcome.loginHint);
      return;
    }
    if (!this.#live) return;
    this.#saveCheckpoint();
    const info = this.#agentInfo;
    this.#emit({
      type: 'system',
      subtype: 'init',
      permissionMode: start.carryOut ? (this.#guard.sessionMode ?? 'default') : 'plan',
      cwd: this.#workspace,
      model: info?.title ?? info?.name ?? this.label,
      tools: [],
      agent: { label: this.label, name: info?.name ?? null, version: info?.version ?? null, mode: this.#guard.mode },
    });
    this.#guard.reportMode();
    this.#turns.send(prompt);
    this.#turns.sendQueued();
  }

  #onSessionUpdate(notification: SessionNotification): void {
    // session/load replays the conversation the log already holds: history, not news.
    if (!this.#live || this.#replaying) return;
    if (this.#session && notification.sessionId !== this.#session.sessionId) return;
    const update = notification.update;
    // Only signs of the model at work count: adapters send command lists, usage and status
    // ("Reconnecting…") on their own.
    if (this.#turns.active && PROGRESS_UPDATES.has(update.sessionUpdate)) this.#turns.sawEvent();
    const raw = update as unknown as { sessionUpdate: string } & Record<string, unknown>;
    const own = this.#quirks.readUpdate(raw);
    if (own?.kind === 'status') {
      this.#turns.sawStatus(own.text);
      this.#log(`status: ${own.text}`);
    }
    const sessionMode = sessionModeFromUpdate(raw);
    if (sessionMode !== undefined) this.#guard.sessionMode = sessionMode;
    if (own?.kind === 'mode') {
      // A mode signal, not something the agent said.
      this.#guard.modeReported(own.mode);
      return;
    }
    if (own?.kind === 'notice') {
      // The adapter's own notice: in the log, never taken for the model's question or plan.
      this.#report('acp_agent_notice', `${this.label}: ${own.text}`, {});
      return;
    }
    if (update.sessionUpdate === 'tool_call' || update.sessionUpdate === 'tool_call_update') this.#onToolCallSeen(update);
    const mode = modeFromUpdate(raw, this.#guard.planTarget);
    if (mode !== undefined) {
      this.#guard.modeReported(mode);
      return;
    }
    this.#translator.update(update);
  }

  #onToolCallSeen(call: ToolCallUpdate): void {
    if (!this.#guard.approved) this.#planTexts.toolCallSeen(call);
    this.#decisions.toolCallSeen(call);
  }

  #turnEnded(stopReason: StopReason): void {
    this.#translator.flush();
    // The approved plan's turn goes on in the next prompt (Codex with another preset): no result yet.
    if (this.#turns.continueHandover()) return;
    const turns = this.#turns.turns;
    if (stopReason === 'max_turn_requests') {
      this.#emitResult('error_max_turns', `${this.label} reached its limit of model requests for one turn.`);
    } else if (stopReason === 'refusal') {
      this.#emitResult('error_during_execution', `${this.label} refused to continue.`);
    } else {
      const result = this.#translator.lastAssistantText;
      this.#emit({ type: 'result', subtype: 'success', is_error: false, num_turns: turns, result, stop_reason: stopReason });
    }
    this.#requests.cancelQuestion();
    // Reviews still open belong to the ended turn: the agent no longer waits for them.
    this.#reviews.cancelAll((requestId) => `turn ended with review ${requestId} open; cancelling it`);
    const nudge = this.#guard.continuePlanningPrompt(this.#turns.nothingQueued);
    if (nudge) this.#turns.append(nudge);
    if (!this.#turns.sendNext()) this.#ctx?.setStatus('idle');
  }

  // Failures and the end.

  #describeExit(exit: AgentExit): string {
    if (exit.spawnError) {
      return `Could not start ${this.label} (${this.#options.argv[0]}): ${exit.spawnError}. Is it installed and on PATH? Choose another agent or set ultraplan.agent.command.`;
    }
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    return `${this.label} ${how} unexpectedly.`;
  }

  /** A request failed: when the process died, its exit says more than "connection closed". */
  async #failFromError(context: string, error: unknown, loginHint?: string): Promise<void> {
    if (!this.#live) return;
    const proc = this.#proc;
    if (proc) await Promise.race([proc.exited, new Promise((resolve) => setTimeout(resolve, 500))]);
    if (!this.#live) return;
    const exit = proc?.exit;
    if (exit) {
      this.#fail(this.#describeExit(exit));
      return;
    }
    const message = errorMessage(error);
    const hint = /authenticat|log ?in|credential|api.?key|unauthori[sz]ed/i.test(message)
      ? ` ${loginHint ?? `Log in with ${this.label}'s own command line (or set its API key), then start again.`}`
      : '';
    this.#fail(`${context}: ${message}.${hint}`);
  }

  /** Ends the session with `message`; the agent's last stderr lines follow unless the message says it all. */
  #fail(message: string, options: { stderr: boolean } = { stderr: true }): void {
    if (!this.#live) return;
    this.#finished = true;
    this.#turns.clear();
    this.#translator.flush();
    const tail =
      options.stderr && this.#proc?.stderrTail().slice(-STDERR_IN_MESSAGE_CHARS).split('\n').slice(-STDERR_IN_MESSAGE_LINES).join('\n');
    const full = tail ? `${message}\n\n${this.label} stderr (last lines):\n${tail}` : message;
    this.#emitResult('error_during_execution', full);
    this.#ctx?.setStatus('idle');
    void this.stop();
  }

  #emitResult(subtype: string, message: string): void {
    this.#log(message);
    this.#emit({ type: 'result', subtype, is_error: true, num_turns: this.#turns.turns, result: message, errors: [message] });
  }

  async #shutdown(): Promise<void> {
    this.#reviews.cancelAll();
    this.#requests.cancelQuestion();
    this.#turns.clear();
    const session = this.#session;
    if (session && this.#turns.active && !this.#proc?.exit) {
      // Best effort: a polite cancel before the signals.
      await Promise.race([session.cancel().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 200))]);
    }
    this.#connection?.close();
    if (this.#proc) {
      const exit = await this.#proc.stop(this.#options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS);
      this.#log(`stopped (${exit.signal ?? `code ${exit.code}`})`);
    }
  }

  #report(subtype: string, message: string, extra: Record<string, unknown>): void {
    this.#log(message);
    this.#emit({ type: 'system', subtype, message, ...extra });
  }

  #saveCheckpoint(): void {
    if (this.#session) this.#saved.save(this.#session.sessionId, this.#guard.approved);
  }

  #emit(event: AnyEvent): void {
    const ctx = this.#ctx;
    if (!ctx || ctx.signal.aborted) return;
    // The approval's own tool_result is the first event after it: saved with it, in order.
    if (this.#saved.approved === !this.#guard.approved) this.#saveCheckpoint();
    try {
      ctx.emit(event);
    } catch (error) {
      this.#log(`could not append a ${event.type} event: ${errorMessage(error)}`);
    }
  }

  #log(line: string): void {
    const text = `[acp ${this.label}] ${line}`;
    this.#ctx?.log(text);
    this.#options.log?.(text);
  }
}

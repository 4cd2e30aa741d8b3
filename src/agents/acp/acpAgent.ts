// An ACP agent (Claude's adapter, Gemini CLI, Codex's adapter, …) planning behind the Agent seam:
// spawned as a child process, switched to its plan mode, its updates translated into the session
// event log, its exit-plan request turned into an ExitPlanMode review, and kept read-only until
// the reviewer approves. This class owns the process and the connection and routes between the
// parts (the handshake, the turn queue, the planning guard, the plan texts, the agent's requests
// and the review decisions), which acpParts.ts builds, each with only what its host interface
// names; what differs by agent comes from its quirks (src/agents/quirks).
import { homedir } from 'node:os';
import * as path from 'node:path';
import type { ClientConnection, InitializeResponse, SessionNotification, StopReason } from '@agentclientprotocol/sdk' with {
  'resolution-mode': 'import',
};
import type { AnyEvent, PermissionDecision } from '../../core/protocol';
import type { Agent, AgentContext, AgentStartOptions, ResumeOutcome } from '../agent';
import { SavedSession, parseAcpCheckpoint } from './acpCheckpoint';
import { labelFromArgv } from '../catalogue/agentLabel';
import { knownAgentOfArgv } from '../catalogue/knownAgents';
import { environmentSeenBy } from './envCommand';
import { progressSignalEnv } from '../catalogue/progressSignals';
import { AgentFileAccess } from './agentFileAccess';
import type { AgentExit, AgentProcess } from './agentProcess';
import { connectAgent, describeExit, launchAgentProcess } from './agentLaunch';
import {
  DEFAULT_FIRST_EVENT_TIMEOUT_MS,
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_STOP_GRACE_MS,
  type AcpAgentOptions,
} from './acpAgentOptions';
import { buildAcpParts, type PartsOwner } from './acpParts';
import type { AgentRequests } from './agentRequests';
import { PLAIN_ACP, type AgentQuirks } from '../quirks/agentQuirks';
import type { AcpEventTranslator } from './eventTranslator';
import { enterCarryOut, handshake, type HandshakeHost, type SessionStart } from './handshake';
import type { PendingReviews } from './pendingReviews';
import { routeSessionUpdate, type SessionUpdatesHost } from './sessionUpdates';
import type { PlanningGuard } from './planningGuard';
import { agentDirs } from './readOnlyPolicy';
import { TurnEndPlans } from './turnEndPlan';
import { agentErrorMessage } from './requestErrors';
import type { ReviewDecisions } from './reviewDecisions';
import type { AcpSessionChannel } from './sessionChannel';
import type { TurnQueue } from './turnQueue';

export { CONTINUE_PLANNING_PROMPT } from './planningGuard';

/** How much stderr an error message quotes. */
const STDERR_IN_MESSAGE_CHARS = 2_000;
const STDERR_IN_MESSAGE_LINES = 12;

export class AcpAgent implements Agent {
  readonly label: string;
  readonly #options: AcpAgentOptions;
  readonly #workspace: string;
  readonly #translator: AcpEventTranslator;
  readonly #guard: PlanningGuard;
  readonly #turns: TurnQueue;
  readonly #reviews: PendingReviews;
  readonly #decisions: ReviewDecisions;
  readonly #requests: AgentRequests;
  readonly #handshakeHost: HandshakeHost;
  readonly #updatesHost: SessionUpdatesHost;

  #ctx: AgentContext | undefined;
  #proc: AgentProcess | undefined;
  #connection: ClientConnection | undefined;
  #session: AcpSessionChannel | undefined;
  #agentInfo: InitializeResponse['agentInfo'];
  /** What sets this agent apart, known once initialize answers. */
  #quirks: AgentQuirks = PLAIN_ACP;
  /** Where an agent with no exit request offers its plan (its quirks say so). */
  #turnEndPlans: TurnEndPlans | undefined;
  /** The agent's home folder, as its environment names it. */
  readonly #home: string;
  #finished = false;
  #replaying = false;
  readonly #saved = new SavedSession((state) => this.#ctx?.checkpoint?.(state));
  #stopping: Promise<void> | undefined;
  /** Its sandbox's workspace, when it has one: read-only until the plan is approved. */
  #sandboxMode: 'planning' | 'executing' | undefined;
  /** Set while the process is replaced (approved in a read-only sandbox): the old one's end is no failure. */
  #restarting = false;
  /** User messages that came while the process was replaced, in order. */
  readonly #heldMessages: string[] = [];

  constructor(options: AcpAgentOptions) {
    if (options.argv.length === 0 || !options.argv[0]) throw new Error('The ACP agent command is empty.');
    this.#options = options;
    this.label = options.label ?? labelFromArgv(options.argv);
    this.#workspace = path.resolve(options.cwd);
    // The agent's own folders follow the environment it runs with, not ours.
    const env = this.#agentEnv();
    const home = options.home ?? env.HOME ?? homedir();
    this.#home = home;
    const files = AgentFileAccess.forAgent(options, this.#workspace, agentDirs(home, env));
    const parts = buildAcpParts(this.#partsOwner(home, files));
    this.#translator = parts.translator;
    this.#guard = parts.guard;
    this.#turns = parts.turns;
    this.#reviews = parts.reviews;
    this.#decisions = parts.decisions;
    this.#requests = parts.requests;
    this.#handshakeHost = parts.handshake;
    this.#updatesHost = parts.updates;
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
    const connection = await this.#spawn(ctx, options?.carryOut === true);
    // A plan approved before this agent ran (a decision on a plan it did not propose): its progress is bound to that plan.
    if (options?.carryOut && options.approvedPlanHash) this.#translator.approved(options.approvedPlanHash, this.#workspace);
    if (connection) void this.#startSession(connection, { kind: 'new', carryOut: options?.carryOut === true }, prompt);
  }

  /** After a restart of the host: its own session back through session/load (not its open requests), or lost, with why. */
  async resume(ctx: AgentContext, checkpoint: unknown): Promise<ResumeOutcome> {
    const saved = parseAcpCheckpoint(checkpoint);
    if (!saved) return { lost: 'no ACP session of it was saved' };
    if (!saved.loadable) return { lost: `${this.label} is not resumed with session/load` };
    const connection = await this.#spawn(ctx, saved.approved);
    if (!connection) return { lost: `${this.label} could not be started` };
    const load: SessionStart = { kind: 'load', sessionId: saved.sessionId, carryOut: saved.approved };
    const outcome = await handshake(connection, this.#handshakeHost, load);
    if (!outcome.ok) {
      await this.stop();
      return { lost: 'message' in outcome ? outcome.message : `${outcome.context}: ${agentErrorMessage(outcome.error)}` };
    }
    this.#saveCheckpoint();
    ctx.setStatus('idle');
    return 'reloaded';
  }

  /** A reloaded session's plan was approved: leave plan mode as Approve would, then carry it out. */
  carryOut(prompt: string): void {
    const session = this.#session;
    if (!this.#live || !session) return;
    if (this.#sandboxMode === 'planning') {
      void this.#carryOutInWritableSandbox(prompt);
      return;
    }
    enterCarryOut(session, this.#quirks, this.#guard, this.#handshakeHost.afterApproval).then(
      () => this.#turns.message(prompt, false),
      (error: unknown) => this.#fail(`Could not switch ${this.label} out of plan mode to carry out the plan: ${agentErrorMessage(error)}`),
    );
  }

  /** The process and the connection, with every request of the agent routed; undefined when it could not start. */
  async #spawn(ctx: AgentContext, approved: boolean): Promise<ClientConnection | undefined> {
    if (this.#ctx) throw new Error('AcpAgent was started twice.');
    this.#ctx = ctx;
    ctx.signal.addEventListener('abort', () => void this.stop(), { once: true });
    ctx.setStatus('running');
    return this.#launch(ctx, approved);
  }

  /** The agent's process (in its sandbox, when it has one) and the connection to it. */
  async #launch(ctx: AgentContext, approved: boolean): Promise<ClientConnection | undefined> {
    let launched;
    try {
      launched = await launchAgentProcess(
        {
          argv: this.#options.argv,
          workspace: this.#workspace,
          env: this.#agentEnv('spawned') as NodeJS.ProcessEnv,
          sandbox: this.#options.sandbox,
          sessionId: ctx.sessionId,
          approved,
          onMalformedLine: (line) =>
            this.#fail(`${this.label} wrote a line that is not JSON-RPC on its protocol channel: "${line.slice(0, 200)}"`),
        },
        () => this.#stopping !== undefined,
      );
    } catch (error) {
      this.#fail(`Could not start ${this.label}${this.#options.sandbox ? ' in its sandbox' : ''}: ${agentErrorMessage(error)}`);
      return undefined;
    }
    if (!launched) return undefined;
    const { proc, cleanup, where } = launched;
    this.#proc = proc;
    if (this.#options.sandbox) this.#sandboxMode = approved ? 'executing' : 'planning';
    this.#log(`started ${this.#options.argv.join(' ')} (pid ${proc.pid ?? '?'}, ${where}) in ${this.#workspace}`);
    const { problem } = progressSignalEnv(knownAgentOfArgv(this.#options.argv)?.id, this.#agentEnv());
    if (problem) this.#log(problem);
    void proc.exited.then(async (exit) => {
      await cleanup().catch((error: unknown) => this.#log(`sandbox clean-up failed: ${agentErrorMessage(error)}`));
      if (proc === this.#proc && !this.#finished && !this.#stopping) this.#fail(this.#describeExit(exit));
    });
    this.#connection = connectAgent(proc, this.#requests, (params) => this.#onSessionUpdate(params));
    return this.#connection;
  }

  onUserMessage(text: string): void {
    // Sent while the process is replaced (an approval's notes): kept for the new one, with the plan it carries out.
    if (this.#restarting && !this.#finished && !this.#stopping) {
      this.#heldMessages.push(text);
      return;
    }
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

  /**
   * The agent's environment: the host's (unless inheritEnv is false), `env`, and what it needs to
   * report progress; as the agent program sees it (a leading `env` in its command changes it), or as spawned.
   */
  #agentEnv(as: 'seen' | 'spawned' = 'seen'): Record<string, string | undefined> {
    const env = { ...(this.#options.inheritEnv === false ? {} : process.env), ...this.#options.env };
    const spawned = { ...env, ...progressSignalEnv(knownAgentOfArgv(this.#options.argv)?.id, env).set };
    return as === 'seen' ? { ...environmentSeenBy(this.#options.argv, spawned) } : spawned;
  }

  get #live(): boolean {
    return !this.#finished && !this.#stopping && !this.#restarting;
  }

  /**
   * The plan was approved while the agent's sandbox shows the workspace read-only: the agent is
   * started again in a sandbox where it is writable, its conversation loaded (session/load) or,
   * for an agent that cannot load one, a fresh session, and `prompt` tells it to carry the plan out.
   */
  async #carryOutInWritableSandbox(prompt: string): Promise<void> {
    const ctx = this.#ctx;
    const old = this.#proc;
    const sessionId = this.#session?.sessionId;
    if (!ctx || !old || !sessionId || !this.#live) return;
    this.#restarting = true;
    this.#saveCheckpoint();
    this.#reviews.cancelAll();
    this.#requests.cancelQuestion();
    this.#turns.abandon();
    this.#translator.flush();
    this.#connection?.close();
    await old.stop(this.#options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS);
    this.#session = undefined;
    const connection = this.#stopping || this.#finished ? undefined : await this.#launch(ctx, true);
    // Only now: a late failure of the old process's connection must not end the session.
    this.#restarting = false;
    if (!connection) {
      this.#fail(`Could not start ${this.label} again, in a sandbox with a writable workspace, to carry out the plan.`);
      return;
    }
    // What came meanwhile (approval notes) is read with the plan, before the agent carries it out.
    const carryOut = [prompt, ...this.#heldMessages.splice(0)].join('\n\n');
    if (!this.#saved.loadable) {
      await this.#startSession(connection, { kind: 'new', carryOut: true }, carryOut);
      return;
    }
    if (!(await this.#handshakeOrFail(connection, { kind: 'load', sessionId, carryOut: true }))) return;
    this.#turns.message(carryOut, false);
  }

  /** The handshake; on failure the session ends with why. True when the agent is ready and live. */
  async #handshakeOrFail(connection: ClientConnection, start: SessionStart): Promise<boolean> {
    const outcome = await handshake(connection, this.#handshakeHost, start);
    if (!outcome.ok) {
      if ('message' in outcome) this.#fail(outcome.message, { stderr: !outcome.complete });
      else await this.#failFromError(outcome.context, outcome.error, outcome.loginHint);
      return false;
    }
    if (!this.#live) return false;
    this.#saveCheckpoint();
    return true;
  }

  /** What this agent gives its parts: its settings, its live state (read through getters) and its acts. */
  #partsOwner(home: string, files: AgentFileAccess): PartsOwner {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the getters below read the agent's live state
    const agent = this;
    const options = this.#options;
    return {
      label: this.label,
      workspace: this.#workspace,
      home,
      files,
      handshakeTimeoutMs: options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
      firstEventTimeoutMs: options.firstEventTimeoutMs ?? DEFAULT_FIRST_EVENT_TIMEOUT_MS,
      afterApproval: options.afterApproval ?? 'default',
      outsideAccess: options.outsideAccess ?? 'ask',
      get env() {
        return agent.#agentEnv();
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
      get plansReadOnly() {
        return agent.#sandboxMode === 'planning';
      },
      carryOutElsewhere: (plan) =>
        void this.#carryOutInWritableSandbox(
          `The reviewer approved the plan below. Carry it out now: the workspace is writable.\n\nThe approved plan:\n\n${plan}`,
        ),
      introduced: (agentInfo, quirks, loadable) => {
        this.#agentInfo = agentInfo;
        this.#quirks = quirks;
        this.#turnEndPlans = quirks.planAtTurnEnd && new TurnEndPlans(quirks.planAtTurnEnd);
        this.#saved.loadable = loadable;
      },
      sessionCreated: (session) => {
        this.#session = session;
      },
      replaying: (on) => {
        this.#replaying = on;
      },
      turnEnded: (stopReason) => this.#turnEnded(stopReason),
      promptFailed: (error) => void this.#failFromError(`${this.label} failed while planning`, error, this.#quirks.loginHint),
      setStatus: (status) => this.#ctx?.setStatus(status),
      emit: (event) => this.#emit(event),
      report: (subtype, message, extra) => this.#report(subtype, message, extra),
      log: (line) => this.#log(line),
      fail: (message) => this.#fail(message),
    };
  }

  async #startSession(connection: ClientConnection, start: SessionStart & { kind: 'new' }, prompt: string): Promise<void> {
    if (!(await this.#handshakeOrFail(connection, start))) return;
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
    routeSessionUpdate(notification.update, this.#updatesHost);
  }

  #turnEnded(stopReason: StopReason): void {
    this.#translator.flush();
    // The approved plan's turn goes on in the next prompt (Codex with another preset): no result yet.
    if (this.#turns.continueHandover()) return;
    if (stopReason === 'end_turn' && this.#offerTurnEndPlan()) return;
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

  /** A planning turn of an agent with no exit request ended: its plan, if it offers one, goes to review. */
  #offerTurnEndPlan(): boolean {
    const session = this.#session;
    if (!this.#turnEndPlans || !session || this.#guard.approved) return false;
    const lastText = this.#translator.lastAssistantText;
    const offer = this.#turnEndPlans.offer({ home: this.#home, env: this.#agentEnv(), sessionId: session.sessionId, lastText });
    if ('none' in offer) {
      this.#log(`no plan at the turn's end: ${offer.none}`);
      return false;
    }
    this.#log(`plan review requested at the turn's end (from ${offer.from})`);
    this.#reviews.cancelAll((requestId) => `turn ended with review ${requestId} open; cancelling it`);
    const toolUseId = this.#translator.exitPlanToolUse(`turn-${this.#turns.turns}`, offer.plan);
    this.#reviews.open({ kind: 'plan_turn_end', toolUseId, plan: offer.plan }, toolUseId, 'ExitPlanMode', { plan: offer.plan });
    return true;
  }

  // Failures and the end.

  #describeExit(exit: AgentExit): string {
    return describeExit(this.label, this.#options.argv[0], exit);
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
    const message = agentErrorMessage(error);
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
      this.#log(`could not append a ${event.type} event: ${agentErrorMessage(error)}`);
    }
  }

  #log(line: string): void {
    const text = `[acp ${this.label}] ${line}`;
    this.#ctx?.log(text);
    this.#options.log?.(text);
  }
}

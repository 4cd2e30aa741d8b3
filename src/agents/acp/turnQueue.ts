// An ACP agent's turns: one prompt at a time, the rest queued; a message joined into the running
// turn where the agent takes it there; the hand-over of an approved plan to a prompt of its own;
// and the bound on a prompt that brings nothing from the agent.
import type { StopReason } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { agentErrorMessage } from './requestErrors';
import type { AcpSessionChannel } from './sessionChannel';

export interface TurnQueueHost {
  readonly label: string;
  /** Neither ended nor stopping. */
  readonly live: boolean;
  /** undefined until session/new has answered. */
  readonly session: AcpSessionChannel | undefined;
  turnStarted(): void;
  /** The turn ended for good (not deferred for a joined message, not handed over). */
  turnEnded(stopReason: StopReason): void;
  promptFailed(error: unknown): void;
  /** Nothing but status lines came from the agent within the bound after a prompt. */
  silent(message: string): void;
  log(line: string): void;
}

export class TurnQueue {
  readonly #host: TurnQueueHost;
  readonly #firstEventTimeoutMs: number;
  #active = false;
  #turns = 0;
  readonly #queued: string[] = [];
  /** Messages sent into the running turn (see join) whose prompt has not answered yet. */
  #joined = 0;
  /** The turn's own prompt answered while a joined one still ran: the turn ends with the last of them. */
  #deferredEnd: StopReason | undefined;
  /** The turn ends only to go on with the next prompt (Codex's implementation with the chosen preset). */
  #handingOver = false;
  #firstEventTimer: NodeJS.Timeout | undefined;
  /** Status lines the agent sent during a turn without progress ("Reconnecting…"), for the timeout message. */
  #statusChatter: { last: string; count: number } | undefined;

  constructor(host: TurnQueueHost, firstEventTimeoutMs: number) {
    this.#host = host;
    this.#firstEventTimeoutMs = firstEventTimeoutMs;
  }

  /** A prompt is running. */
  get active(): boolean {
    return this.#active;
  }

  /** Prompts sent so far. */
  get turns(): number {
    return this.#turns;
  }

  get nothingQueued(): boolean {
    return this.#queued.length === 0;
  }

  /**
   * A person's message: into the running turn when `joinable` (and no hand-over is under way),
   * else after it, else at once.
   */
  message(text: string, joinable: boolean): void {
    if (this.#active && joinable && !this.#handingOver) this.#join(text);
    else if (this.#active || !this.#host.session) this.#queued.push(text);
    else this.send(text);
  }

  /** After the running turn, or at once when none runs. */
  queue(text: string): void {
    if (this.#active) this.#queued.push(text);
    else this.send(text);
  }

  /** After the running turn, whatever comes. */
  append(text: string): void {
    this.#queued.push(text);
  }

  /** The running turn ends to go on with `prompt`, before anything else queued. */
  handOver(prompt: string): void {
    this.#handingOver = true;
    this.#queued.unshift(prompt);
  }

  /** The handed-over prompt, sent at the turn's end; false when there is none. */
  continueHandover(): boolean {
    if (!this.#handingOver || this.#queued.length === 0) return false;
    this.#handingOver = false;
    this.send(this.#queued.shift() as string);
    return true;
  }

  /** The first prompt queued, sent; false when nothing is queued. */
  sendNext(): boolean {
    const next = this.#queued.shift();
    if (next === undefined) return false;
    this.send(next);
    return true;
  }

  /** What was queued before the session existed. */
  sendQueued(): void {
    while (!this.#active && this.#queued.length) this.send(this.#queued.shift() as string);
  }

  send(text: string): void {
    const session = this.#host.session;
    if (!session || !this.#host.live) return;
    this.#active = true;
    this.#turns += 1;
    this.#statusChatter = undefined;
    this.#host.turnStarted();
    this.#armFirstEventTimer();
    session.prompt(text).then(
      (response) => this.#ended(response.stopReason),
      (error: unknown) => this.#host.promptFailed(error),
    );
  }

  /** Anything from the agent during a turn counts as its first event. */
  sawEvent(): void {
    this.#disarmFirstEventTimer();
  }

  /** A status line the agent sent (quoted if the turn times out). */
  sawStatus(text: string): void {
    this.#statusChatter = { last: text, count: (this.#statusChatter?.count ?? 0) + 1 };
  }

  /** The agent's process is replaced mid-turn: that turn is over without an end of its own. */
  abandon(): void {
    this.#disarmFirstEventTimer();
    this.#active = false;
    this.#joined = 0;
    this.#deferredEnd = undefined;
  }

  /** The agent ends: nothing more is sent, nothing more is bound. */
  clear(): void {
    this.#disarmFirstEventTimer();
    this.#queued.length = 0;
  }

  #join(text: string): void {
    const session = this.#host.session;
    if (!session) {
      this.#queued.push(text);
      return;
    }
    this.#joined += 1;
    this.#host.log(`sent a message into the running turn (${text.length} chars)`);
    session.prompt(text).then(
      (response) => this.#joinedEnded(response.stopReason),
      (error: unknown) => {
        this.#host.log(`the message sent into the running turn failed: ${agentErrorMessage(error)}`);
        this.#joinedEnded(undefined);
      },
    );
  }

  #joinedEnded(stopReason: StopReason | undefined): void {
    this.#joined -= 1;
    const deferred = this.#deferredEnd;
    if (this.#joined > 0 || deferred === undefined) return;
    this.#deferredEnd = undefined;
    this.#ended(stopReason ?? deferred);
  }

  #ended(stopReason: StopReason): void {
    if (this.#joined > 0 && this.#host.live) {
      // Claude Code carries on with the joined message in the same piece of work: one result, at its end.
      this.#deferredEnd = stopReason;
      return;
    }
    this.#disarmFirstEventTimer();
    this.#active = false;
    if (this.#host.live) this.#host.turnEnded(stopReason);
  }

  #armFirstEventTimer(): void {
    this.#disarmFirstEventTimer();
    const bound = this.#firstEventTimeoutMs;
    this.#firstEventTimer = setTimeout(() => {
      this.#firstEventTimer = undefined;
      const chatter = this.#statusChatter;
      const what = chatter ? `only reported "${chatter.last}"${chatter.count > 1 ? ` (${chatter.count} times)` : ''}` : 'sent nothing';
      this.#host.silent(
        `${this.#host.label} ${what} for ${Math.round(bound / 1000)} s after the prompt. It may be retrying a model ` +
          `it cannot reach (network, login or API key). Ultraplan stopped it: check the agent's login and ` +
          `network, then start again.`,
      );
    }, bound);
  }

  #disarmFirstEventTimer(): void {
    if (this.#firstEventTimer) clearTimeout(this.#firstEventTimer);
    this.#firstEventTimer = undefined;
  }
}

// Holding an ACP agent in plan mode, read-only, until the reviewer approves a plan: the modes the
// agent reported, the switch back when it leaves plan mode on its own, the mode as the session's
// events show it, and the one nudge to go on planning after a refused change.
import type { SessionModeState } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import type { AnyEvent } from '../../core/protocol';
import { agentModeEvent } from '../../core/protocolMarkers';
import { planModeId, type PlanModeTarget } from './planMode';
import { agentErrorMessage } from './requestErrors';

/** How often an agent that leaves plan mode on its own is switched back before we stop trying. */
const MAX_PLAN_MODE_REASSERTIONS = 3;

/** Sent once when an agent ends its turn after a refused change without proposing a plan. */
export const CONTINUE_PLANNING_PROMPT =
  'Ultraplan refused your change: this session is in plan mode and read-only until the reviewer approves a plan. ' +
  'Continue planning without changing any file, and propose your plan when it is ready.';

export interface PlanningGuardHost {
  readonly label: string;
  emit(event: AnyEvent): void;
  report(subtype: string, message: string, extra: Record<string, unknown>): void;
  log(line: string): void;
  /** Switches the agent's session to plan mode (nothing before the session exists). */
  enterPlanMode(target: PlanModeTarget): Promise<void>;
}

export class PlanningGuard {
  readonly #host: PlanningGuardHost;
  #planTarget: PlanModeTarget | undefined;
  #currentMode: string | undefined;
  /** The session mode the agent last reported (for Codex, its permission preset). */
  sessionMode: string | undefined;
  #availableModeIds: string[] = [];
  /** The names the agent gave its modes (session/new), by id. */
  readonly #modeNames = new Map<string, string>();
  /** The last mode reported in the session's events (id and read-only), so each change is reported once. */
  #reportedMode: string | undefined;
  #inPlanMode = false;
  /** Carrying out an approved plan (enterCarryOut): its mode is reported, also by a process that never planned. */
  #carryingOut = false;
  #approved = false;
  #reassertions = 0;
  /** This turn: a change was refused, a plan review was opened; the nudge is sent once. */
  #refusedThisTurn = false;
  #planOfferedThisTurn = false;
  #nudged = false;

  constructor(host: PlanningGuardHost) {
    this.#host = host;
  }

  /** The mode the agent last reported. */
  get mode(): string | undefined {
    return this.#currentMode;
  }

  get planTarget(): PlanModeTarget | undefined {
    return this.#planTarget;
  }

  get availableModeIds(): readonly string[] {
    return this.#availableModeIds;
  }

  /** A plan was approved: the session is no longer held read-only. */
  get approved(): boolean {
    return this.#approved;
  }

  /** The modes session/new answered with. */
  sessionCreated(modes: SessionModeState | null | undefined): void {
    this.#currentMode = modes?.currentModeId;
    this.sessionMode = modes?.currentModeId;
    this.#availableModeIds = (modes?.availableModes ?? []).map((mode) => mode.id);
    for (const mode of modes?.availableModes ?? []) this.#modeNames.set(mode.id, mode.name);
  }

  planModeChosen(target: PlanModeTarget): void {
    this.#planTarget = target;
    this.#modeNames.set(planModeId(target), target.name);
  }

  /** The agent answered the switch to plan mode: from here on the guard holds it there. */
  enteredPlanMode(): void {
    if (!this.#planTarget) return;
    this.#inPlanMode = true;
    this.#currentMode = planModeId(this.#planTarget);
  }

  /** The agent's modes other than plan mode (a permission asking to switch to one leaves plan mode). */
  otherModeIds(): string[] {
    const target = this.#planTarget;
    return target?.via === 'mode' ? this.#availableModeIds.filter((id) => id !== planModeId(target)) : [];
  }

  /**
   * Puts the agent's current mode in the session's events when it changed since the last report:
   * what the person sees as the agent's mode is what the agent said, and whether we still hold it
   * read-only (until a plan is approved).
   */
  reportMode(): void {
    const id = this.#currentMode;
    if (!id || !(this.#inPlanMode || this.#carryingOut)) return;
    const readOnly = !this.#approved;
    const key = `${id}\n${readOnly}`;
    if (key === this.#reportedMode) return;
    this.#reportedMode = key;
    const name = this.#modeNames.get(id);
    this.#host.emit(agentModeEvent(name ? { id, name } : { id }, readOnly));
  }

  markApproved(): void {
    this.#approved = true;
    this.reportMode();
  }

  /**
   * Out of planning to carry out the approved plan: the agent answered the switch to `mode`, so
   * that is its mode now (OpenCode sends no update for an option it was asked to set); undefined
   * keeps the mode it last reported.
   */
  carryingOut(mode: string | undefined): void {
    this.#carryingOut = true;
    if (mode !== undefined) this.#currentMode = mode;
    this.markApproved();
  }

  /** The agent reported `mode`: a plan mode left without approval is not trusted, and switched back. */
  modeReported(mode: string): void {
    const previous = this.#currentMode;
    this.#currentMode = mode;
    this.reportMode();
    const target = this.#planTarget;
    if (!this.#inPlanMode || this.#approved || !target) return;
    const plan = planModeId(target);
    if (mode === plan || mode === previous) return;
    // The session stays read-only whatever mode the agent claims.
    const reassert = this.#reassertions < MAX_PLAN_MODE_REASSERTIONS;
    this.#host.report(
      'acp_plan_mode_left',
      `${this.#host.label} left plan mode on its own (now "${mode}") without your approval. Ultraplan keeps the ` +
        `session read-only${reassert ? ` and switched it back to "${plan}"` : ''}.`,
      { mode },
    );
    if (!reassert) return;
    this.#reassertions += 1;
    this.#host.enterPlanMode(target).then(
      () => {
        this.#currentMode = plan;
        this.reportMode();
        this.#host.log(`switched back to plan mode "${plan}"`);
      },
      (error: unknown) => this.#host.log(`could not switch back to plan mode: ${agentErrorMessage(error)}`),
    );
  }

  turnStarted(): void {
    this.#refusedThisTurn = false;
    this.#planOfferedThisTurn = false;
  }

  /** A change was refused while planning. */
  changeRefused(): void {
    if (!this.#approved) this.#refusedThisTurn = true;
  }

  planOffered(): void {
    this.#planOfferedThisTurn = true;
  }

  /**
   * The prompt to send when a turn ended after a refused change without a plan (Codex ends its
   * turn when an edit is refused): once per session, and only when nothing else waits to be sent.
   */
  continuePlanningPrompt(nothingQueued: boolean): string | undefined {
    if (!this.#refusedThisTurn || this.#planOfferedThisTurn || this.#approved || this.#nudged || !nothingQueued) return undefined;
    this.#nudged = true;
    this.#host.report(
      'acp_continue_planning',
      `${this.#host.label} ended its turn after Ultraplan refused a change, without proposing a plan. Ultraplan asked it once to continue planning read-only.`,
      {},
    );
    return CONTINUE_PLANNING_PROMPT;
  }
}

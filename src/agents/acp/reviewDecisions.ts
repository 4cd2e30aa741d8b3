// The reviewer's decisions, answered in the agent's terms: the option (or elicitation answer) an
// Approve, a Reject or a tool permission stands for on this agent, the mode switches Approve asks
// for, and what the model is told next (an edited plan, the reviewer's feedback).
import type { PermissionOption, ToolCallUpdate } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { planHash } from '../../core/decision';
import type { PermissionDecision } from '../../core/protocol';
import { APPROVED_PLAN_EDITED_MARKER, APPROVED_PLAN_MARKER, ULTRAPLAN_TELEPORT_SENTINEL } from '../../core/protocolMarkers';
import type { AgentQuirks, PresetHandover } from '../quirks/agentQuirks';
import type { AcpEventTranslator } from './eventTranslator';
import { CANCELLED, type PendingReview, type PendingReviews, type PlanReview } from './pendingReviews';
import type { PlanningGuard } from './planningGuard';
import { chooseApproveOption, chooseToolAllowOption, chooseToolRejectOption, type AfterApproval } from './planReview';
import { agentErrorMessage } from './requestErrors';
import type { AcpSessionChannel } from './sessionChannel';
import type { TurnQueue } from './turnQueue';

export interface ReviewDecisionsHost {
  readonly label: string;
  /** The agent's working folder: files it touches are reported relative to it. */
  readonly workspace: string;
  readonly afterApproval: AfterApproval;
  readonly quirks: AgentQuirks;
  readonly guard: Pick<PlanningGuard, 'availableModeIds' | 'markApproved' | 'modeReported' | 'planTarget' | 'sessionMode'>;
  readonly translator: Pick<AcpEventTranslator, 'approved' | 'toolResult'>;
  readonly turns: Pick<TurnQueue, 'active' | 'handOver' | 'message' | 'queue'>;
  readonly reviews: Pick<PendingReviews, 'settleStatus' | 'take'>;
  readonly session: AcpSessionChannel | undefined;
  /** The agent has ended (failed or finished). */
  readonly ended: boolean;
  /**
   * The agent plans in a sandbox whose workspace is read-only: an approval is carried out by the
   * agent started again in a writable one (`carryOutElsewhere`), not by this process.
   */
  readonly plansReadOnly: boolean;
  carryOutElsewhere(plan: string): void;
  log(line: string): void;
  report(subtype: string, message: string, extra: Record<string, unknown>): void;
  fail(message: string): void;
}

type PlanPermission = Extract<PendingReview, { kind: 'plan_permission' }>;

function approvedText(plan: string, edited: boolean): string {
  return `User approved the plan.\n\n${edited ? APPROVED_PLAN_EDITED_MARKER : APPROVED_PLAN_MARKER}${plan}`;
}

/** What an agent that offered its plan by ending the turn hears on approval, before the plan. */
export const TURN_END_APPROVAL = 'The reviewer approved your plan. Leave planning and carry it out now, step by step:';

function followEditedPlan(plan: string): string {
  return `The reviewer edited the plan before approving it. Follow this version:\n\n${plan}`;
}

export class ReviewDecisions {
  readonly #host: ReviewDecisionsHost;
  /** A mode to set once the approved exit tool call has run (the agent switches itself first). */
  #modeAfterExitTool: { toolCallId: string; modeId: string } | undefined;

  constructor(host: ReviewDecisionsHost) {
    this.#host = host;
  }

  decide(requestId: string, decision: PermissionDecision): void {
    const host = this.#host;
    const review = host.reviews.take(requestId);
    if (!review) {
      host.log(`ignored a decision for unknown or answered request ${requestId}`);
      return;
    }
    if (review.kind === 'tool_permission') {
      this.#decideToolPermission(review, decision);
      return;
    }
    if (review.kind === 'file_read') {
      review.answer(decision.behavior);
      host.reviews.settleStatus();
      return;
    }
    if (decision.behavior === 'allow') this.#approvePlan(review, decision);
    else this.#rejectPlan(review, decision.message);
    if (!host.ended) host.reviews.settleStatus();
  }

  /** Runs the mode switch that waited for the approved exit tool call to complete. */
  toolCallSeen(call: ToolCallUpdate): void {
    const pending = this.#modeAfterExitTool;
    if (pending && call.toolCallId === pending.toolCallId && (call.status === 'completed' || call.status === 'failed')) {
      this.#modeAfterExitTool = undefined;
      if (call.status === 'completed') this.#switchModeAfterApproval(pending.modeId);
    }
  }

  #approvePlan(review: PlanReview, decision: PermissionDecision & { behavior: 'allow' }): void {
    const host = this.#host;
    const edited = typeof decision.updatedInput.plan === 'string' ? decision.updatedInput.plan : review.plan;
    const wasEdited = edited !== review.plan;
    if (host.plansReadOnly) {
      // Unanswered on purpose: this process cannot write, and it is about to be stopped.
      host.guard.markApproved();
      host.translator.toolResult(review.toolUseId, approvedText(edited, wasEdited), false);
      host.log('approved the plan; the agent carries it out in a sandbox whose workspace is writable');
      host.carryOutElsewhere(edited);
      return;
    }
    if (review.kind === 'plan_turn_end') {
      this.#approveAtTurnEnd(review, edited, wasEdited);
      return;
    }
    if (review.kind === 'plan_permission') {
      const handover = host.quirks.presetHandover;
      const implement = handover?.implementOption(review.options);
      if (handover && implement) {
        this.#approveWithPresetHandover(review, handover, implement, edited, wasEdited);
        return;
      }
      const approval = host.quirks.approval(host.label, review.options, host.afterApproval);
      let { choice, thenMode } = approval;
      if (approval.modeAfterExitTool) this.#modeAfterExitTool = { toolCallId: review.agentToolCallId, modeId: approval.modeAfterExitTool };
      if (!choice.ok && host.afterApproval === 'acceptEdits' && host.guard.availableModeIds.includes('acceptEdits')) {
        // No auto-accept option on this request (Claude's adapter offers auto mode instead), but
        // the agent has the mode: approve with manual edits, then switch to it, as asked.
        const manual = chooseApproveOption(host.label, review.options, 'default');
        if (manual.ok) {
          choice = manual;
          thenMode = 'acceptEdits';
        }
      }
      if (!choice.ok) {
        review.answer(CANCELLED);
        host.fail(choice.message);
        return;
      }
      if (thenMode) this.#switchModeAfterApproval(thenMode);
      this.#markApproved(review, edited, wasEdited);
      review.answer({ outcome: { outcome: 'selected', optionId: choice.option.optionId } });
      host.log(`approved the plan with "${choice.option.name}" (${choice.option.optionId})`);
    } else {
      this.#markApproved(review, edited, wasEdited);
      review.answer({ action: 'accept', content: { [review.form.choiceKey]: review.form.approveValue } });
      host.log(`approved the plan with "${review.form.approveValue}"`);
    }
    if (wasEdited) this.#followEditedPlan(edited);
  }

  /**
   * The session is no longer held read-only, the log says the plan was approved (and which text),
   * and the agent's progress from here on is reported against that text.
   */
  #markApproved(review: PlanReview, plan: string, edited: boolean): void {
    const host = this.#host;
    host.guard.markApproved();
    host.translator.toolResult(review.toolUseId, approvedText(plan, edited), false);
    // Bound to the text as the log records it (an edit without its trailing blank lines), which
    // is what every reader of the log hashes (core/executionProgress.ts).
    host.translator.approved(planHash(edited ? plan.trimEnd() : review.plan), host.workspace);
  }

  /**
   * The reviewer's version of the plan, as a prompt: into the approved turn where the agent takes
   * a message there (the model reads it with the approval, before it carries anything out), else
   * as the next prompt.
   */
  #followEditedPlan(plan: string): void {
    const host = this.#host;
    host.turns.message(followEditedPlan(plan), host.quirks.joinsTurnAfterApproval);
  }

  /**
   * An agent that implements an approved plan at once, with the preset its prompt began with
   * (read-only, while planning). When the person chose that preset (ultraplan.afterApproval =
   * default: each edit asked), the implement option is the answer. Otherwise the preset is set,
   * plan mode left, the review closed with the reject option (which the model never sees) and the
   * agent's own next prompt sent, so the implementation runs with the chosen preset.
   */
  #approveWithPresetHandover(
    review: PlanPermission,
    handover: PresetHandover,
    implement: PermissionOption,
    edited: string,
    wasEdited: boolean,
  ): void {
    const host = this.#host;
    const preset = handover.preset(host.afterApproval, host.guard.availableModeIds);
    const session = host.session;
    this.#markApproved(review, edited, wasEdited);
    if (!preset || !session || preset === host.guard.sessionMode) {
      if (!preset)
        host.log(
          `${host.label} offers no preset for ultraplan.afterApproval = ${host.afterApproval}; it keeps "${host.guard.sessionMode}"`,
        );
      review.answer({ outcome: { outcome: 'selected', optionId: implement.optionId } });
      host.log(`approved the plan with "${implement.name}" (${implement.optionId}); the "${host.guard.sessionMode}" preset stays`);
      if (wasEdited) this.#followEditedPlan(edited);
      return;
    }
    const close = host.quirks.rejectOption(host.label, review.options);
    const leave = handover.leavePlanMode(host.guard.planTarget);
    void (async () => {
      try {
        await session.setMode(preset);
        host.guard.sessionMode = preset;
        if (leave) await session.setConfigOption(leave.configId, leave.value);
      } catch (error) {
        review.answer(CANCELLED);
        host.fail(
          `Could not switch ${host.label} to its "${preset}" preset after approval, so the plan was not approved: ${agentErrorMessage(error)}`,
        );
        return;
      }
      host.log(`set the "${preset}" preset after approval (ultraplan.afterApproval = ${host.afterApproval}) and left plan mode`);
      if (close.ok) host.turns.handOver(handover.implementPrompt(wasEdited ? edited : undefined));
      review.answer({ outcome: { outcome: 'selected', optionId: close.ok ? close.option.optionId : implement.optionId } });
    })();
  }

  /**
   * A plan its agent offered by ending the turn: plan mode is left (the mode ultraplan.afterApproval
   * asks for, or the config option back), then the plan as approved is the prompt that carries it out.
   */
  #approveAtTurnEnd(review: Extract<PlanReview, { kind: 'plan_turn_end' }>, plan: string, edited: boolean): void {
    const host = this.#host;
    const session = host.session;
    if (!session) return;
    this.#markApproved(review, plan, edited);
    const mode = host.quirks.carryOutMode(host.afterApproval, host.guard.availableModeIds);
    const leave = host.quirks.planAtTurnEnd?.leavePlanMode;
    void (async () => {
      try {
        if (mode !== undefined) {
          await session.setMode(mode);
          host.guard.sessionMode = mode;
        }
        if (leave) {
          await session.setConfigOption(leave.configId, leave.value);
          // Its answer is the switch (OpenCode sends no update of its own for it).
          host.guard.modeReported(leave.value);
        }
      } catch (error) {
        host.fail(
          `Could not switch ${host.label} out of plan mode after approval, so the plan was not carried out: ${agentErrorMessage(error)}`,
        );
        return;
      }
      host.log(`left plan mode after approval (${[mode, leave && `${leave.configId}=${leave.value}`].filter(Boolean).join(', ')})`);
      host.turns.queue(`${TURN_END_APPROVAL}\n\n${plan}`);
    })();
  }

  #switchModeAfterApproval(modeId: string): void {
    const host = this.#host;
    const session = host.session;
    if (!session) return;
    // After the permission answer, so the agent's own switch to manual mode does not undo it.
    setTimeout(() => {
      session.setMode(modeId).then(
        () => host.log(`switched to "${modeId}" after approval (ultraplan.afterApproval)`),
        (error: unknown) => {
          const message = agentErrorMessage(error);
          const hint = host.quirks.modeSwitchHint(message);
          host.report(
            'acp_decision_error',
            `Could not switch ${host.label} to "${modeId}" after approval: ${message.replace(/\.$/, '')}.${hint ? ` ${hint}` : ''}`,
            {},
          );
        },
      );
    }, 0);
  }

  #rejectPlan(review: PlanReview, message: string): void {
    const host = this.#host;
    const teleport = message.includes(ULTRAPLAN_TELEPORT_SENTINEL);
    let feedbackInAnswer = false;
    if (review.kind === 'plan_permission') {
      const choice = host.quirks.rejectOption(host.label, review.options);
      if (!choice.ok) {
        review.answer(CANCELLED);
        host.fail(choice.message);
        return;
      }
      host.translator.toolResult(review.toolUseId, message, true);
      review.answer({ outcome: { outcome: 'selected', optionId: choice.option.optionId } });
      host.log(`${teleport ? 'teleport: rejected' : 'rejected'} the plan with "${choice.option.name}" (${choice.option.optionId})`);
    } else if (review.kind === 'plan_turn_end') {
      host.translator.toolResult(review.toolUseId, message, true);
      host.log(`${teleport ? 'teleport: rejected' : 'rejected'} the plan its turn ended with`);
    } else {
      const content: Record<string, string> = { [review.form.choiceKey]: review.form.keepPlanningValue };
      if (!teleport && review.form.feedbackKey) {
        content[review.form.feedbackKey] = message;
        feedbackInAnswer = true;
      }
      host.translator.toolResult(review.toolUseId, message, true);
      review.answer({ action: 'accept', content });
      host.log(`${teleport ? 'teleport: kept planning' : 'kept planning'} with "${review.form.keepPlanningValue}"`);
    }
    if (teleport) {
      // The plan runs locally: this turn has nothing more to do.
      this.#cancelTurn();
    } else if (!feedbackInAnswer) {
      host.turns.queue(
        `The reviewer rejected the plan. Their feedback:\n\n${message}\n\nStay in plan mode, revise the plan, and ask again when it is ready.`,
      );
    }
  }

  #decideToolPermission(review: Extract<PendingReview, { kind: 'tool_permission' }>, decision: PermissionDecision): void {
    const host = this.#host;
    const choice =
      decision.behavior === 'allow'
        ? chooseToolAllowOption(host.label, review.options)
        : chooseToolRejectOption(host.label, review.options);
    if (!choice.ok) {
      review.answer(CANCELLED);
      host.report('acp_decision_error', choice.message, {});
      host.translator.toolResult(review.toolUseId, choice.message, true);
      return;
    }
    review.answer({ outcome: { outcome: 'selected', optionId: choice.option.optionId } });
    host.log(
      `${decision.behavior === 'allow' ? 'allowed' : 'denied'} ${review.toolUseId} with "${choice.option.name}" (${choice.option.optionId})`,
    );
    if (decision.behavior === 'deny') host.translator.toolResult(review.toolUseId, decision.message, true);
    host.reviews.settleStatus();
  }

  #cancelTurn(): void {
    const session = this.#host.session;
    if (!session || !this.#host.turns.active) return;
    session.cancel().catch((error: unknown) => this.#host.log(`session/cancel failed: ${agentErrorMessage(error)}`));
  }
}

// The panel's verification against the approved plan, as a model without a DOM: the host's last
// word on the session shown (a verification message), joined with the agent's own claims from the
// execution checklist, step by step. A verification of another plan than the one approved now is
// not shown; one that failed reads as failed, never as verified. Unit-tested in
// test/webview/verificationModel.test.ts.
import type { PanelVerdict, PanelVerification, SessionVerification, VerifiedStep } from '../core/execution/panelVerification';
import type { ExecutionStep, PanelExecution, PanelState } from '../core/panelMessages';
import type { VerificationMessage } from '../core/execution/verificationMessage';

export const VERDICT_LABELS: Record<PanelVerdict, string> = {
  done: 'Done',
  done_differently: 'Done differently',
  missing: 'Missing',
  unverified: 'Not verified',
};

export const REPORTED_LABELS: Record<ExecutionStep['status'], string> = {
  done: 'reported done',
  in_progress: 'reported in progress',
  pending: 'reported pending',
  not_reported: 'not reported',
};

/** One step as the conformance checklist shows it: what the agent claimed beside what was verified. */
export interface ConformanceRow extends VerifiedStep {
  reported: ExecutionStep['status'];
  /** Continue (ask the same session to carry out this step) is offered. */
  canContinue: boolean;
}

export interface VerificationView {
  running: boolean;
  /** The last verification of the plan approved now, if any. */
  last: PanelVerification | undefined;
  rows: ConformanceRow[];
  /** The button starts a verification: the plan's execution ended and none runs. */
  canVerify: boolean;
  /** The line under the heading: who did what, or why nothing was verified. */
  summary: string;
}

/** The hash of the plan the session approved last, which a verification must be about. */
export function approvedPlanHash(state: PanelState): string | undefined {
  const approved = state.revisions.filter((r) => r.status === 'approved' || r.status === 'approved_edited');
  return approved[approved.length - 1]?.planHash;
}

export class VerificationModel {
  #message: VerificationMessage | undefined;

  receive(message: VerificationMessage): void {
    this.#message = message;
  }

  /** The verification of the session `state` shows, when it has an approved plan. */
  #of(state: PanelState | undefined): SessionVerification | undefined {
    if (!state || this.#message?.sessionKey !== state.sessionKey) return undefined;
    return this.#message.verification;
  }

  /** Its last verification, when it is about the plan approved now. */
  last(state: PanelState | undefined): PanelVerification | undefined {
    const last = this.#of(state)?.last;
    return state && last && last.planHash === approvedPlanHash(state) ? last : undefined;
  }

  /** What the checklist shows; none before a plan is approved and its checklist shown. */
  view(state: PanelState | undefined, execution: PanelExecution | undefined): VerificationView | undefined {
    if (!state || !execution) return undefined;
    const running = this.#of(state)?.running ?? false;
    const last = this.last(state);
    const ended = execution.finished;
    const reported = new Map(execution.steps.map((s) => [s.id, s.status]));
    const rows = (last?.steps ?? []).map((step): ConformanceRow => ({
      ...step,
      reported: reported.get(step.id) ?? 'not_reported',
      canContinue: step.verdict === 'missing' && ended && !running,
    }));
    const summary = running
      ? 'Verifying the changes against the approved plan…'
      : last
        ? `${last.headline}. ${capital(last.detail)}.`
        : ended
          ? 'Not verified yet: the work has not been checked against the plan.'
          : 'The work is verified against the plan once the execution ends.';
    return { running, last, rows, canVerify: ended && !running, summary };
  }

  /**
   * The header's words for a completed session: "Completed, verified: 6 of 7 steps" (never plain
   * "Completed" once a gap was found), "Completed · verification failed" when it failed.
   */
  headerPhase(state: PanelState | undefined): string | undefined {
    if (state?.phase !== 'completed') return undefined;
    const last = this.last(state);
    if (!last || last.kind === 'cancelled') return undefined;
    return last.kind === 'verified' ? last.headline : 'Completed · verification failed';
  }
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

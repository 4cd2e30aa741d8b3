// What the session model keeps of a quorum's approvals (planApprovals.ts): the newest state per
// plan text of the agent's latest plan request, from the session's `plan_approval` events and from
// this host's own approval answered 202. The pending plan is shown with the count of its exact
// text; a new request (a new revision) drops the old counts. Pure.
import { planHash } from './decision';
import { approvalSummary, approvedBySummary, type ApprovalState } from './planApprovals';

/** The pending plan's approvals while its quorum is not reached. */
export interface PlanApprovalView {
  /** "1 of 2 approvals: alice; waiting for one more from platform-reviewers". */
  readonly summary: string;
  /** This host's approval of this text was counted (the server refuses a second one). */
  readonly mine: boolean;
}

export class ApprovalTally {
  #requestId: string | undefined;
  /** The newest state per plan hash, for #requestId. */
  #byHash = new Map<string, ApprovalState>();
  /** Plan hashes whose approval this host sent and the server counted. */
  #mine = new Set<string>();
  #hashed: { plan: string; hash: string } | undefined;
  #view: { key: string; view: PlanApprovalView | undefined } | undefined;
  /** "Approved by …" per plan request the quorum released; kept across requests (a decided revision keeps its approvers). */
  #released: ReadonlyMap<string, string> = new Map();

  /** Who approved each released plan request, by request id; a new map whenever one is added. */
  get released(): ReadonlyMap<string, string> {
    return this.#released;
  }

  /** One approval state, read from the log or from this host's 202 answer (`mine`). */
  note(state: ApprovalState, mine = false): void {
    if (state.released && !this.#released.has(state.request_id)) {
      this.#released = new Map([...this.#released, [state.request_id, approvedBySummary(state)]]);
    }
    if (state.request_id !== this.#requestId) {
      this.#requestId = state.request_id;
      this.#byHash = new Map();
      this.#mine = new Set();
    }
    const known = this.#byHash.get(state.plan_hash);
    // States of one text only grow; an older one read late (the log after our 202) changes nothing.
    if (!known || state.released || state.approvers.length >= known.approvers.length) this.#byHash.set(state.plan_hash, state);
    if (mine) this.#mine.add(state.plan_hash);
    this.#view = undefined;
  }

  /**
   * The approvals of `plan` answering `requestId` while its quorum is not reached; else this
   * host's own counted approval of that request (an edited text: its count is its own).
   */
  view(requestId: string, plan: string): PlanApprovalView | undefined {
    if (requestId !== this.#requestId) return undefined;
    const hash = this.#hashOf(plan);
    const key = `${requestId}\n${hash}`;
    if (this.#view?.key === key) return this.#view.view;
    const own = [...this.#mine].map((h) => this.#byHash.get(h)).filter((s): s is ApprovalState => s !== undefined);
    const state = this.#byHash.get(hash) ?? own[own.length - 1];
    let view: PlanApprovalView | undefined;
    if (state && !state.released && state.approvers.length < state.required) {
      const text = approvalSummary(state);
      view = { summary: state.plan_hash === hash ? text : `Your edited text: ${text}`, mine: this.#mine.has(state.plan_hash) };
    }
    this.#view = { key, view };
    return view;
  }

  #hashOf(plan: string): string {
    if (this.#hashed?.plan !== plan) this.#hashed = { plan, hash: planHash(plan) };
    return this.#hashed.hash;
  }
}

// What the session model keeps of an approved plan's execution: the progress facts the session's
// events carry (our host's `ultraplan_progress` events, bound to a plan hash; or, for Claude Code
// on the web, its own TodoWrite / Task / Edit calls after the approval), and the checklist of the
// latest approved revision, folded one fact at a time. Pure; the model feeds it each parsed batch.
import { planHash } from './decision';
import type { ParsedBatch } from './eventBatch';
import type { Checklist, ChecklistFold } from './execution/checklist';
import type { ProgressFact } from './execution/progress';
import { ToolUseProgressReader } from './execution/toolUseProgress';
import type { ScannedRevision } from './scanner';

/** Facts kept per plan: far more than any agent reports, so a runaway stream cannot grow without end. */
const MAX_FACTS_PER_PLAN = 20_000;

/** The execution of the approved plan as every surface reads it. */
export interface SessionExecution {
  /** The approved revision's ExitPlanMode call. */
  readonly toolUseId: string;
  readonly planHash: string;
  readonly checklist: Checklist;
  /** The agent's turn after approval ended (its result arrived) or following ended. */
  readonly finished: boolean;
  /** "Executing: 3 of 7 steps done" (checklistSummary). */
  readonly summary: string;
}

interface Folding {
  readonly toolUseId: string;
  readonly hash: string;
  readonly fold: ChecklistFold;
  /** How many of this plan's facts are folded. */
  folded: number;
}

/**
 * The approved revision's plan text: the proposed text, or the reviewer's edit as the approval
 * records it (its trailing blank lines dropped). The session host binds progress to its hash.
 */
export function approvedPlan(revision: ScannedRevision): string | null {
  const { outcome } = revision;
  if (outcome.kind !== 'approved') return null;
  return outcome.edited ? outcome.plan : (revision.plan ?? outcome.plan);
}

/**
 * Starts the checklist of an approved plan (core/execution/startChecklist.ts), handed in: it reads
 * the plan with markdown-it and matches todos to its steps, which the extension loads after its
 * first load (extension/sessions/planSteps.ts), not with it.
 */
export type PlanStepsReader = (plan: string) => ChecklistFold;

export class ExecutionProgress {
  readonly #facts = new Map<string, ProgressFact[]>();
  /** Claude Code's own tool calls, for a backend whose events our host does not write. */
  readonly #reader: ToolUseProgressReader | undefined;
  #folding: Folding | undefined;
  #view: SessionExecution | undefined;

  /** Reads a plan into steps; undefined until the reader is loaded, and no checklist until then. */
  readonly #planSteps: () => PlanStepsReader | undefined;

  constructor(options: { readsToolUses: boolean; planSteps: () => PlanStepsReader | undefined }) {
    this.#reader = options.readsToolUses ? new ToolUseProgressReader() : undefined;
    this.#planSteps = options.planSteps;
  }

  /** Takes one batch's facts (after the scanner read it: `revisions` include its approvals). */
  ingest(batch: ParsedBatch, revisions: readonly ScannedRevision[], at: number): void {
    for (const event of batch.progress ?? []) this.#keep(event.plan_hash, event.progress);
    const reader = this.#reader;
    if (!reader) return;
    if (batch.workingFolder !== undefined) reader.setWorkingFolder(batch.workingFolder);
    const iso = new Date(at).toISOString();
    for (const event of batch.events) {
      for (const { approvedToolUseId, fact } of reader.read(event, iso)) {
        const revision = revisions.find((r) => r.toolUseId === approvedToolUseId);
        const plan = revision ? approvedPlan(revision) : null;
        if (plan !== null) this.#keep(planHash(plan), fact);
      }
    }
  }

  /**
   * The execution of the latest approved revision in `revisions`; the same object while nothing
   * in it changed. Undefined while no revision is approved.
   */
  view(revisions: readonly ScannedRevision[], finished: boolean): SessionExecution | undefined {
    let approved: ScannedRevision | undefined;
    for (let i = revisions.length - 1; i >= 0 && !approved; i--) if (approvedPlan(revisions[i]!) !== null) approved = revisions[i];
    if (!approved) return (this.#view = undefined);
    let folding = this.#folding;
    if (!folding || folding.toolUseId !== approved.toolUseId) {
      const readPlanSteps = this.#planSteps();
      if (!readPlanSteps) return (this.#view = undefined);
      const plan = approvedPlan(approved)!;
      folding = this.#folding = {
        toolUseId: approved.toolUseId,
        hash: planHash(plan),
        fold: readPlanSteps(plan),
        folded: 0,
      };
    }
    const facts = this.#facts.get(folding.hash) ?? [];
    while (folding.folded < facts.length) folding.fold.add(facts[folding.folded++]!);
    const checklist = folding.fold.checklist;
    const previous = this.#view;
    if (previous && previous.checklist === checklist && previous.finished === finished && previous.toolUseId === folding.toolUseId) {
      return previous;
    }
    this.#view = Object.freeze({
      toolUseId: folding.toolUseId,
      planHash: folding.hash,
      checklist,
      finished,
      summary: folding.fold.summary(finished),
    });
    return this.#view;
  }

  #keep(hash: string, fact: ProgressFact): void {
    let list = this.#facts.get(hash);
    if (!list) this.#facts.set(hash, (list = []));
    if (list.length < MAX_FACTS_PER_PLAN) list.push(fact);
  }
}

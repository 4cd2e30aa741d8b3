// The checklist's start (core/execution/startChecklist.ts: markdown-it and the matcher) is a chunk of its own, loaded
// once the extension is up rather than with its first load; until it is here a session shows no
// checklist, and when it arrives every followed session is told (FollowedSessions).
import type { PlanStepsReader } from '../../core/executionProgress';

let reader: PlanStepsReader | undefined;
let loading: Promise<void> | undefined;

/** The reader, once loaded. */
export function planStepsReader(): PlanStepsReader | undefined {
  return reader;
}

/** Loads the reader (once); resolves when it is there. */
export function loadPlanSteps(): Promise<void> {
  loading ??= import('../../core/execution/startChecklist').then((module) => {
    reader = module.startChecklist;
  });
  return loading;
}

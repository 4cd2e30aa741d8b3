// An approved plan's checklist, started: its steps read (markdown-it) and a matcher for the agent's
// todos. The one entry the extension loads as a chunk of its own (extension/sessions/planSteps.ts).
import { ChecklistFold } from './checklist';
import { StepMatcher } from './matching';
import { readPlanSteps } from './steps';

export function startChecklist(plan: string): ChecklistFold {
  const outline = readPlanSteps(plan);
  return new ChecklistFold(outline, new StepMatcher(outline));
}

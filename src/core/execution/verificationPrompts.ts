// What the verification fleet's agents are asked. The approved plan is the specification; the
// reply shapes are spelled out exactly as verification.ts parses them.
import { VERDICT_REPLY } from '../review/prompts';
import { STEP_VERDICTS, type OutOfPlan, type StepVerdict } from './verification';
import type { PlanOutline } from './steps';

/** A fence longer than any run of backticks in `text`, so the plan or diff cannot close it. */
function fenceFor(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(longest + 1);
}

function fenced(text: string, info = ''): string[] {
  const fence = fenceFor(text);
  return [`${fence}${info}`, text, fence];
}

export function stepFinderPrompt(plan: string, outline: PlanOutline, diff: string): string {
  return [
    'A person approved the plan below, and an agent then executed it. Check the change made since approval against the plan:',
    'the approved plan is the specification. You are a read-only reviewer: read any file of the workspace you need, change nothing,',
    'and do not propose a plan.',
    '',
    'For every step listed, decide from the change and the code as it is now:',
    '- "done": the change does what the step asks;',
    '- "done_differently": the step is addressed, but not as the plan said (say how in "difference");',
    '- "missing": the change does not do it.',
    'Give evidence: the files (and lines of their new version) that show it. Then list each change that no step asked for',
    '("outOfPlan"), with its file, lines and why no step covers it. Do not trust what the agent said it did; read the change.',
    '',
    'Reply with exactly one JSON block, nothing else required, in this shape:',
    '```json',
    `{"steps": [{"stepId": "an id below", "verdict": "${STEP_VERDICTS.join('" | "')}", "explanation": "why",`,
    '  "difference": "only for done_differently", "evidence": [{"file": "path/from/repo/root", "startLine": 1, "endLine": 1}]}],',
    ' "outOfPlan": [{"file": "path/from/repo/root", "startLine": 1, "endLine": 1, "explanation": "what it does and why no step asks for it"}]}',
    '```',
    '',
    'The steps (id, lines of the plan, text):',
    ...outline.steps.map((s) => `- ${s.id} (lines ${s.startLine}-${s.endLine}): ${s.title}`),
    '',
    'The approved plan:',
    ...fenced(plan, 'markdown'),
    '',
    'The change since approval:',
    ...fenced(diff, 'diff'),
  ].join('\n');
}

/** A verifier checks one gap a finder claimed. */
export function stepGapVerifierPrompt(step: { title: string; startLine: number; endLine: number }, claim: StepVerdict): string {
  return [
    'Another reviewer checked an executed plan and reported that one of its steps was not done as planned. Check that claim',
    'against the code as it is now: confirm it only when the gap is real; refute it when the step is in fact done as the plan says.',
    'Change nothing and do not propose a plan.',
    '',
    `The step (plan lines ${step.startLine}-${step.endLine}): ${step.title}`,
    `The claim: ${claim.verdict.replace('_', ' ')}. ${claim.explanation}`,
    ...(claim.difference ? [`How it differs: ${claim.difference}`] : []),
    ...(claim.evidence.length
      ? [
          `Evidence: ${claim.evidence.map((e) => (e.startLine ? `${e.file}:${e.startLine}${e.endLine ? `-${e.endLine}` : ''}` : e.file)).join(', ')}`,
        ]
      : []),
    '',
    ...VERDICT_REPLY,
  ].join('\n');
}

/** A verifier checks one change a finder said no step asked for. */
export function outOfPlanVerifierPrompt(plan: string, change: OutOfPlan): string {
  return [
    'Another reviewer reported that this change was made although no step of the approved plan below asks for it. Confirm it',
    'only when no step covers the change; refute it when a step does ask for it (or the change is not there). Change nothing.',
    '',
    `File: ${change.file}, lines ${change.startLine}-${change.endLine}`,
    `Why: ${change.explanation}`,
    '',
    'The approved plan:',
    ...fenced(plan, 'markdown'),
    '',
    ...VERDICT_REPLY,
  ].join('\n');
}

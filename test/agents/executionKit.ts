// A real agent carrying out an approved 4-step plan, then verified against it: the plan, the
// session's progress facts folded into the checklist as the session model does, a git record of
// the workspace at approval, finders that judge the real diff since then (scripted agents, so no
// model is asked), and a follow-up turn in the same session (what Continue sends).
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { collectChange } from '../../src/client/review/gitChange';
import { verifyAgainstPlan } from '../../src/client/review/verifyAgainstPlan';
import { continueStepMessage, missingSteps } from '../../src/core/execution/verifySession';
import { verificationExitCode, verificationHeadline, type VerificationOutcome } from '../../src/core/execution/verificationOutcome';
import { parseEventBatch } from '../../src/core/eventBatch';
import { PROGRESS_SUBTYPE, progressFacts, readPlanSteps, type Checklist, type ProgressFact } from '../../src/core/execution';
import { ToolPermissionTracker, permissionResponseEvent } from '../../src/core/permissionRequests';
import { userMessageEvent } from '../../src/core/protocol';
import { CONFIRMED, ScriptedSource, jsonText } from '../support/review/planRepo';
import type { RealAgentRun } from './realAgentKit';
import { modelOfLog } from './fakeAgentKit';

/** The approved plan: four steps, each naming the one file it changes. */
export const PLAN_4 = [
  '# Plan: greetings',
  '',
  '1. Create `src/greet.ts` exporting `greet(name)`, which returns "Hello, NAME".',
  '2. Export `greet` from `src/index.ts`.',
  '3. Add a test for `greet` in `test/greet.test.ts`.',
  '4. Document `greet` in `README.md`.',
  '',
].join('\n');

/** What each step writes (what a faithful execution leaves in the workspace). */
export const STEP_FILES = {
  1: { path: 'src/greet.ts', text: 'export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n' },
  2: { path: 'src/index.ts', text: "export { greet } from './greet';\n" },
  3: {
    path: 'test/greet.test.ts',
    text: "import { greet } from '../src/greet';\nif (greet('Ada') !== 'Hello, Ada') throw new Error('greet');\n",
  },
  4: { path: 'README.md', text: '# Demo project\n\n`greet(name)` says hello.\n' },
} as const;
/** The change no step names. */
export const OUT_OF_PLAN = { path: 'src/app.ts', text: 'export const original = false; // tidied while passing\n' };

/** The agent's todo texts for the steps: its own words, not the plan's (Claude's activeForm alongside). */
export const TODOS = [
  { content: 'Create src/greet.ts with greet(name)', activeForm: 'Creating src/greet.ts with greet(name)' },
  { content: 'Export greet from src/index.ts', activeForm: 'Exporting greet from src/index.ts' },
  { content: 'Add a greet test in test/greet.test.ts', activeForm: 'Adding a greet test in test/greet.test.ts' },
  { content: 'Document greet in README.md', activeForm: 'Documenting greet in README.md' },
] as const;

export type TodoState = 'pending' | 'in_progress' | 'completed';

/** A todo list with each step's state. */
export function todoList(states: readonly TodoState[]) {
  return TODOS.map((todo, i) => ({ ...todo, status: states[i]! }));
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd, encoding: 'utf8' });

/** The workspace as a git repository, committed: the record the diff since approval is taken against. */
export function recordWorkspace(workspace: string): void {
  git(workspace, 'init', '-q', '-b', 'main');
  git(workspace, 'add', '-A');
  git(workspace, 'commit', '-qm', 'before the plan');
}

/**
 * The session's progress facts and the checklist the editor shows for them: the log read as the
 * extension reads it (parsed once, the scanner, SessionModel with the plan-steps reader), so the
 * facts must be bound to the plan the log says was approved.
 */
export function sessionChecklist(run: RealAgentRun, sessionId: string): { facts: ProgressFact[]; checklist: Checklist; summary: string } {
  const events = run.events(sessionId);
  const model = modelOfLog(events);
  const execution = model.state.execution;
  assert.ok(execution, 'the session model follows an execution');
  const hashes = new Set(run.systemEvents(sessionId, PROGRESS_SUBTYPE).map((e) => String(e.plan_hash)));
  assert.equal(hashes.size, 1, `progress bound to one plan: ${[...hashes].join(', ')}`);
  return { facts: progressFacts(events, [...hashes][0]!), checklist: execution.checklist, summary: execution.summary };
}

/** Each step's status and files, in plan order. */
export function stepRows(checklist: Checklist): Array<[string, string, string[]]> {
  return checklist.steps.map((step) => [step.id, step.status, step.files]);
}

/**
 * A finder that judges the change as a careful reviewer would for this plan: a step is done when
 * the file it names is in the diff, missing otherwise; a changed file no step names is out of plan.
 */
export function finderReplyFor(files: ReadonlyArray<{ path: string }>, plan: string) {
  const changed = new Set(files.map((f) => f.path));
  const outline = readPlanSteps(plan);
  const named = new Map(outline.steps.map((step) => [step.id, /((?:src|test)\/[\w./]+\.ts|README\.md)/.exec(step.text)?.[1] ?? '']));
  return {
    steps: outline.steps.map((step) => {
      const file = named.get(step.id)!;
      return changed.has(file)
        ? { stepId: step.id, verdict: 'done', explanation: `${file} is in the change.`, evidence: [{ file, startLine: 1, endLine: 1 }] }
        : { stepId: step.id, verdict: 'missing', explanation: `There is no ${file} in the change.`, evidence: [] };
    }),
    outOfPlan: [...changed]
      .filter((file) => ![...named.values()].includes(file))
      .map((file) => ({ file, startLine: 1, endLine: 1, explanation: `No step names ${file}.` })),
  };
}

/** Verifies the workspace's change since the record against `plan`, with a finder and a verifier of their own. */
export async function verifyWorkspace(workspace: string, plan: string, reported?: { done: number; total: number }) {
  return verifyChange(await collectChange(workspace, { kind: 'since', rev: 'HEAD', includeUntracked: true }), plan, reported);
}

/** Verifies a parsed change (a workspace's, a branch's) against `plan`, with the same scripted finder and verifier. */
export async function verifyChange(
  change: Parameters<typeof verifyAgainstPlan>[0]['change'],
  plan: string,
  reported?: { done: number; total: number },
) {
  const finder = new ScriptedSource('Diff finder', jsonText(finderReplyFor(change.files, plan)));
  const verifier = new ScriptedSource('Checking verifier', jsonText(CONFIRMED));
  try {
    const result = await verifyAgainstPlan({
      plan,
      change,
      sources: [finder.source],
      verifiers: [verifier.source],
      finders: 1,
      ...(reported ? { reported } : {}),
      signal: new AbortController().signal,
    });
    return { ...result, files: change.files.map((f) => f.path).sort() };
  } finally {
    await finder.dispose();
    await verifier.dispose();
  }
}

/**
 * Follows the session until `done` holds for its result events, allowing each permission the agent
 * asks (as executeAllowing does); returns the last result and how many permissions were asked.
 */
export async function followTurns(
  run: RealAgentRun,
  sessionId: string,
  done: (results: ReadonlyArray<{ result?: string; is_error?: boolean }>) => boolean,
  timeoutMs: number,
) {
  const tracker = new ToolPermissionTracker();
  let seen = 0;
  const deadline = Date.now() + timeoutMs;
  let asked = 0;
  for (;;) {
    const events = run.events(sessionId);
    for (const request of tracker.ingestParsed(parseEventBatch(events.slice(seen))).opened) {
      asked++;
      await run.backend.sendEvents(sessionId, [permissionResponseEvent(request, 'allow')]);
      tracker.markAnswered(request.requestId);
    }
    seen = events.length;
    const results = events.filter((e) => e.type === 'result') as Array<{ result?: string; is_error?: boolean }>;
    if (done(results)) return { result: results.at(-1)!, asked };
    if (Date.now() > deadline) throw new Error(`no such result within ${timeoutMs} ms: ${JSON.stringify(results.map((r) => r.result))}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Sends `text` to the session as a person's message (what Continue does), then follows the turn it
 * starts to its result, allowing each permission asked (one answered before is closed in the log, so not asked again).
 */
export async function continueSession(run: RealAgentRun, sessionId: string, text: string, timeoutMs: number) {
  const before = run.events(sessionId);
  const resultsBefore = before.filter((e) => e.type === 'result').length;
  await run.backend.sendEvents(sessionId, [userMessageEvent(text)]);
  return followTurns(run, sessionId, (results) => results.length > resultsBefore, timeoutMs);
}

/**
 * Verification of the execution that skipped step 3 and edited src/app.ts: step 3 missing, the
 * others done, src/app.ts confirmed out of plan; returns the message Continue sends for step 3.
 */
export function assertStep3MissingAndAppOutOfPlan(verified: Awaited<ReturnType<typeof verifyWorkspace>>): string {
  assert.deepEqual(verified.files, ['README.md', 'src/app.ts', 'src/greet.ts', 'src/index.ts']);
  const outcome: VerificationOutcome = verified.outcome;
  assert.equal(outcome.kind, 'verified', verificationHeadline(outcome));
  if (outcome.kind !== 'verified') return '';
  assert.deepEqual(
    outcome.steps.map((s) => [s.id, s.verdict]),
    [
      ['1', 'done'],
      ['2', 'done'],
      ['3', 'missing'],
      ['4', 'done'],
    ],
  );
  assert.deepEqual(
    outcome.outOfPlan.map((c) => [c.file, c.status]),
    [['src/app.ts', 'confirmed']],
  );
  assert.equal(verificationHeadline(outcome), 'Completed, verified: 3 of 4 steps');
  assert.equal(verificationExitCode(outcome), 1);
  const [missing] = missingSteps(verified.outline.steps, outcome);
  assert.equal(missing?.id, '3');
  return continueStepMessage(missing, outcome.steps.find((s) => s.id === '3')?.explanation);
}

/** The re-verification after Continue: every step done (the stray file is still named). */
export function assertAllStepsDone(verified: Awaited<ReturnType<typeof verifyWorkspace>>): void {
  const { outcome } = verified;
  assert.equal(outcome.kind, 'verified', verificationHeadline(outcome));
  if (outcome.kind !== 'verified') return;
  assert.ok(
    outcome.steps.every((s) => s.verdict === 'done'),
    JSON.stringify(outcome.steps.map((s) => [s.id, s.verdict])),
  );
  assert.equal(verificationHeadline(outcome), 'Completed, verified: 4 of 4 steps');
  assert.equal(verificationExitCode(outcome), 0);
  assert.deepEqual(
    outcome.outOfPlan.map((c) => c.file),
    ['src/app.ts'],
  );
}

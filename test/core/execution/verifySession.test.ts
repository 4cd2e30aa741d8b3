import assert from 'node:assert/strict';
import {
  decideVerification,
  mergeOutOfPlan,
  mergeStepVerdicts,
  readPlanSteps,
  stepReports,
  verificationReportText,
  type StepClaim,
  type VerificationOutcome,
} from '../../../src/core/execution';
import {
  approvedPlanText,
  chooseApprovedSession,
  continueStepMessage,
  missingSteps,
  noRecordReason,
  reportedProgress,
} from '../../../src/core/execution/verifySession';
import type { PlanRevision } from '../../../src/core/panelMessages';
import type { Phase } from '../../../src/core/phase';
import type { ReviewerReport } from '../../../src/core/review/outcome';

const plan = [
  '# Plan: greet',
  '',
  '1. Create src/greet.ts exporting greet(name).',
  '2. Use greet in src/cli.ts.',
  '3. Add a test for greet in test/greet.test.ts',
  '   covering an empty name.',
  '',
].join('\n');
const outline = readPlanSteps(plan);
const reviewers: ReviewerReport[] = [
  { label: 'Claude (ACP) #1', role: 'finder', ok: true },
  { label: 'Gemini CLI (ACP) verifier', role: 'verifier', ok: true },
];
const claim = (stepId: string, verdict: StepClaim['verdict'], extra: Partial<StepClaim> = {}): StepClaim => ({
  stepId,
  verdict,
  explanation: `${stepId} is ${verdict}`,
  evidence: [{ file: 'src/greet.ts', startLine: 1, endLine: 3 }],
  foundBy: 'Claude (ACP) #1',
  ...extra,
});
const confirmed = { by: 'Gemini CLI (ACP) verifier', verdict: 'confirmed' as const, reason: 'no test file in the change' };
const [one, two, three] = outline.steps.map((s) => s.id) as [string, string, string];

/** Step 3 missing (confirmed) and one change no step asked for (confirmed). */
function gapOutcome(): VerificationOutcome {
  const steps = mergeStepVerdicts(outline.steps, [
    claim(one, 'done'),
    claim(two, 'done'),
    claim(three, 'missing', { explanation: 'There is no test/greet.test.ts in the change.', evidence: [], check: confirmed }),
  ]);
  const outOfPlan = mergeOutOfPlan([
    {
      id: 'o1',
      file: 'src/config.ts',
      startLine: 1,
      endLine: 1,
      explanation: 'Raises the timeout from 10 to 60 seconds; no step asks for it.',
      foundBy: 'Claude (ACP) #1',
      check: confirmed,
    },
  ]);
  return decideVerification(steps, outOfPlan, { done: 3, total: 3 }, reviewers);
}

const revision = (n: number, status: PlanRevision['status'], text: string): PlanRevision => ({
  revision: n,
  toolUseId: `toolu_${n}`,
  plan: text,
  planHash: 'a'.repeat(64),
  status,
  comments: [],
});

describe('execution/verifySession: what Verify Against Plan takes from a session and sends back', () => {
  it('chooses the named session with an approved plan, else the only one, else asks for a pick, else none', () => {
    const s = (key: string, phase: Phase) => ({ key, phase });
    const planning = s('a', 'planning');
    const completed = s('b', 'completed');
    const executing = s('c', 'executing');
    assert.deepEqual(chooseApprovedSession([planning, completed, executing], 'c'), { kind: 'chosen', session: executing });
    // The panel's session has no approved plan: the others are offered.
    assert.deepEqual(chooseApprovedSession([planning, completed, executing], 'a'), { kind: 'pick', sessions: [completed, executing] });
    assert.deepEqual(chooseApprovedSession([planning, completed], undefined), { kind: 'chosen', session: completed });
    assert.deepEqual(chooseApprovedSession([planning, s('d', 'plan_ready')], 'a'), { kind: 'none' });
  });

  it("takes the last approved revision's text (an edited approval's edit), none before an approval", () => {
    assert.equal(approvedPlanText([revision(1, 'rejected', 'first'), revision(2, 'pending', 'second')]), undefined);
    assert.equal(
      approvedPlanText([
        revision(1, 'approved', 'first'),
        revision(2, 'approved_edited', 'second, edited'),
        revision(3, 'superseded', 'x'),
      ]),
      'second, edited',
    );
  });

  it("reports the agent's own progress only when it reported on some step", () => {
    assert.equal(reportedProgress(undefined), undefined);
    assert.equal(reportedProgress({ counts: { total: 3, pending: 0, in_progress: 0, done: 0, not_reported: 3 } }), undefined);
    assert.deepEqual(reportedProgress({ counts: { total: 7, pending: 1, in_progress: 1, done: 4, not_reported: 1 } }), {
      done: 4,
      total: 7,
    });
  });

  it('lists the confirmed missing steps in plan order, none for a failed verification', () => {
    const outcome = gapOutcome();
    assert.deepEqual(
      missingSteps(outline.steps, outcome).map((s) => s.id),
      [three],
    );
    assert.deepEqual(missingSteps(outline.steps, { kind: 'failed', reason: 'all 3 finders failed', reviewers: [] }), []);
  });

  it("Continue's message quotes the step's id, lines and whole text, and asks for that step only", () => {
    const step = outline.steps[2]!;
    const message = continueStepMessage(step, 'There is no test/greet.test.ts in the change.');
    assert.equal(
      message,
      [
        `Verification against the approved plan found step ${three} missing (plan lines 5-6):`,
        '',
        `> ${step.text.split('\n').join('\n> ')}`,
        '',
        "The verifier's reason: There is no test/greet.test.ts in the change.",
        '',
        `Carry out step ${three} now, as the approved plan describes it. Leave the other steps as they are.`,
      ].join('\n'),
    );
    assert.match(step.text, /covering an empty name/);
    assert.match(
      continueStepMessage(outline.steps[0]!),
      /\(plan line 3\):\n\n> Create src\/greet\.ts exporting greet\(name\)\.\n\nCarry out/,
    );
  });

  it("reads the server's reason out of a 409, and keeps any other message whole", () => {
    assert.equal(
      noRecordReason(
        'Session cse_1 refused the change as conflicting (HTTP 409: not a git repository: no record of changes); an archived session accepts no more changes.',
      ),
      'not a git repository: no record of changes',
    );
    assert.equal(noRecordReason('something else'), 'something else');
  });
});

describe('execution/verificationReport: the report a person reads', () => {
  it('gives the headline with both claims, each step with verdict, evidence and who verified, and the changes not in the plan', () => {
    const outcome = gapOutcome();
    const text = verificationReportText(outcome, stepReports(outline, outcome), 'the changes since the plan was approved');
    const lines = text.split('\n');
    assert.equal(lines[0], 'Completed, verified: 2 of 3 steps');
    assert.equal(lines[1], 'the agent reported 3 of 3 done; verified: 2 done, 0 done differently, 1 missing; 1 change not in the plan');
    assert.equal(lines[2], 'Checked: the changes since the plan was approved');
    assert.ok(lines.includes(`${one}  [done]  Create src/greet.ts exporting greet(name).  (plan lines 3-3)`), text);
    assert.ok(lines.includes('    evidence: src/greet.ts:1-3'), text);
    assert.ok(lines.includes('    by Claude (ACP) #1'), text);
    const missingAt = lines.findIndex((l) => l.startsWith(`${three}  [MISSING]`));
    assert.deepEqual(lines.slice(missingAt + 1, missingAt + 3), [
      '    There is no test/greet.test.ts in the change.',
      '    by Gemini CLI (ACP) verifier',
    ]);
    assert.deepEqual(lines.slice(lines.indexOf('Not in the plan:') + 1, lines.indexOf('Not in the plan:') + 3), [
      '  src/config.ts:1-1  Raises the timeout from 10 to 60 seconds; no step asks for it.',
      '    confirmed by Gemini CLI (ACP) verifier · found by Claude (ACP) #1',
    ]);
  });

  it('a failed verification says so, lists who failed, and never says "verified"', () => {
    const outcome: VerificationOutcome = {
      kind: 'failed',
      reason: 'Claude (ACP) #1 failed: the agent exited',
      reported: { done: 7, total: 7 },
      reviewers: [{ label: 'Claude (ACP) #1', role: 'finder', ok: false, error: 'the agent exited' }],
    };
    const text = verificationReportText(outcome, stepReports(outline, outcome), undefined);
    assert.equal(
      text,
      [
        'Verification failed: Claude (ACP) #1 failed: the agent exited',
        'the agent reported 7 of 7 done; no step was checked',
        '',
        'Claude (ACP) #1 failed: the agent exited',
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(text, /verified/i);
    assert.deepEqual(
      stepReports(outline, outcome).map((s) => s.verdict),
      ['unverified', 'unverified', 'unverified'],
    );
  });
});

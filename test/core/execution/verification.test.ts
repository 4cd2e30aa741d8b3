import assert from 'node:assert/strict';
import {
  decideVerification,
  mergeOutOfPlan,
  mergeStepVerdicts,
  parseStepFinderReply,
  parseVerdictReply,
  readPlanSteps,
  stepFinderPrompt,
  stepGapVerifierPrompt,
  verificationDetail,
  verificationExitCode,
  verificationHeadline,
  type StepClaim,
  type VerificationOutcome,
} from '../../../src/core/execution';
import type { ReviewerReport } from '../../../src/core/review/outcome';

const plan = ['# Plan: cache', '', '1. Add the cache module', '2. Wire the cache into the loader', '3. Document the cache', ''].join('\n');
const outline = readPlanSteps(plan);
const ids = outline.steps.map((s) => s.id);
const finders: ReviewerReport[] = [
  { label: 'Claude (ACP) #1', role: 'finder', ok: true },
  { label: 'Gemini CLI (ACP) #2', role: 'finder', ok: true },
];
const claim = (stepId: string, verdict: StepClaim['verdict'], extra: Partial<StepClaim> = {}): StepClaim => ({
  stepId,
  verdict,
  explanation: `${verdict} because`,
  evidence: [],
  foundBy: 'Claude (ACP) #1',
  ...(verdict === 'done_differently' ? { difference: 'it caches in memory, not on disk' } : {}),
  ...extra,
});

describe('execution/verification: the executed plan checked step by step', () => {
  it('parses a finder reply in a json fence and refuses unknown or repeated steps and unexplained differences', () => {
    const reply = (steps: unknown[], outOfPlan: unknown[] = []) =>
      `Here it is:\n\`\`\`json\n${JSON.stringify({ steps, outOfPlan })}\n\`\`\``;
    const ok = parseStepFinderReply(
      reply([{ stepId: '1', verdict: 'done', explanation: 'added', evidence: [{ file: 'src/cache.ts', startLine: 1, endLine: 40 }] }]),
      ids,
    );
    assert.ok(ok.ok && ok.value.steps[0]!.evidence[0]!.file === 'src/cache.ts');
    const unknown = parseStepFinderReply(reply([{ stepId: '9', verdict: 'done', explanation: 'x', evidence: [] }]), ids);
    assert.deepEqual(unknown, { ok: false, error: 'it gave a verdict on "9", which is not a step of the plan' });
    const twice = parseStepFinderReply(reply([1, 1].map(() => ({ stepId: '1', verdict: 'done', explanation: 'x', evidence: [] }))), ids);
    assert.equal(twice.ok, false);
    const unexplained = parseStepFinderReply(reply([{ stepId: '2', verdict: 'done_differently', explanation: 'x', evidence: [] }]), ids);
    assert.match(unexplained.ok ? '' : unexplained.error, /without saying how/);
    const wrongShape = parseStepFinderReply('```json\n{"steps": [{"stepId": "1", "verdict": "maybe"}], "outOfPlan": []}\n```', ids);
    assert.match(wrongShape.ok ? '' : wrongShape.error, /does not fit the step verdicts shape \(steps\.0\.verdict/);
    assert.equal(parseStepFinderReply('All steps look done to me.', ids).ok, false);
  });

  it('keeps a confirmed gap, drops a refuted one, and never calls a step with an unchecked gap done', () => {
    const merged = mergeStepVerdicts(outline.steps, [
      claim('1', 'done'),
      claim('1', 'missing', {
        foundBy: 'Gemini CLI (ACP) #2',
        check: { by: 'verifier A', verdict: 'refuted', reason: 'src/cache.ts has it' },
      }),
      claim('2', 'done'),
      claim('2', 'done_differently', { check: { by: 'verifier B', verdict: 'confirmed', reason: 'memory only' } }),
      claim('3', 'missing', { check: { by: 'verifier C', verdict: 'failed', reason: 'timed out' } }),
    ]);
    assert.deepEqual(
      merged.map((s) => [s.id, s.verdict]),
      [
        ['1', 'done'],
        ['2', 'done_differently'],
        ['3', 'unverified'],
      ],
    );
    assert.deepEqual(merged[0]!.refutedBy, ['verifier A']);
    assert.equal(merged[1]!.difference, 'it caches in memory, not on disk');
    assert.match(merged[2]!.explanation, /no verifier could check that \(timed out\)/);
    assert.equal(mergeStepVerdicts(outline.steps, [])[0]!.verdict, 'unverified');
  });

  it('merges duplicate out-of-plan changes and drops refuted ones, as review findings merge', () => {
    const changes = mergeOutOfPlan([
      {
        id: 'o1',
        foundBy: 'A',
        file: 'src/log.ts',
        startLine: 10,
        endLine: 20,
        explanation: 'Adds request logging. No step asks for it.',
        check: { by: 'v1', verdict: 'confirmed', reason: 'yes' },
      },
      {
        id: 'o2',
        foundBy: 'B',
        file: 'src/log.ts',
        startLine: 11,
        endLine: 19,
        explanation: 'Adds request logging to the loader.',
        check: { by: 'v2', verdict: 'confirmed', reason: 'yes' },
      },
      {
        id: 'o3',
        foundBy: 'B',
        file: 'src/cache.ts',
        startLine: 1,
        endLine: 2,
        explanation: 'Renames a helper.',
        check: { by: 'v3', verdict: 'refuted', reason: 'step 1' },
      },
    ]);
    assert.deepEqual(
      changes.map((c) => [c.file, c.startLine, c.endLine, c.foundBy, c.status]),
      [['src/log.ts', 10, 20, ['A', 'B'], 'confirmed']],
    );
  });

  it('tells the outcome: verified counts with the agent’s own report, a failed verification never as verified', () => {
    const steps = mergeStepVerdicts(outline.steps, [
      claim('1', 'done'),
      claim('2', 'missing', { check: { by: 'v', verdict: 'confirmed', reason: 'no call site' } }),
      claim('3', 'done'),
    ]);
    const outcome = decideVerification(steps, [], { done: 3, total: 3 }, finders);
    assert.equal(verificationHeadline(outcome), 'Completed, verified: 2 of 3 steps');
    assert.equal(verificationDetail(outcome), 'the agent reported 3 of 3 done; verified: 2 done, 0 done differently, 1 missing');
    assert.equal(verificationExitCode(outcome), 1);

    const failed = decideVerification(steps, [], { done: 3, total: 3 }, [
      { ...finders[0]!, ok: false, error: 'the agent exited' },
      { ...finders[1]!, ok: false, error: 'rate limited' },
    ]);
    assert.equal(failed.kind, 'failed');
    assert.equal(verificationHeadline(failed), 'Verification failed: all 2 finders failed');
    assert.doesNotMatch(verificationHeadline(failed) + verificationDetail(failed), /verified:/);
    assert.equal(verificationExitCode(failed), 2);
  });

  it('exits 0 when every step held, 1 on out-of-plan changes only when asked to', () => {
    const steps = mergeStepVerdicts(
      outline.steps,
      ids.map((id) => claim(id, 'done')),
    );
    const outOfPlan = [
      { file: 'a.ts', startLine: 1, endLine: 1, explanation: 'x', foundBy: ['A'], confirmedBy: ['v'], status: 'confirmed' as const },
    ];
    const outcome: VerificationOutcome = decideVerification(steps, outOfPlan, { done: 3, total: 3 }, finders);
    assert.equal(verificationHeadline(outcome), 'Completed, verified: 3 of 3 steps');
    assert.match(verificationDetail(outcome), /; 1 change not in the plan$/);
    assert.equal(verificationExitCode(outcome), 0);
    assert.equal(verificationExitCode(outcome, { failOnOutOfPlan: true }), 1);
  });

  it('asks finders with the plan as the specification, fenced so the plan cannot close the fence', () => {
    const fenced = `${plan}\n\`\`\`\`ts\nconst x = 1;\n\`\`\`\`\n`;
    const prompt = stepFinderPrompt(fenced, readPlanSteps(fenced), 'diff --git a/x b/x');
    assert.match(prompt, /- 2 \(lines 4-4\): Wire the cache into the loader/);
    assert.ok(prompt.includes(`\`\`\`\`\`markdown\n${fenced}\n\`\`\`\`\``));
    const verifier = stepGapVerifierPrompt(
      outline.steps[1]!,
      claim('2', 'done_differently', { evidence: [{ file: 'src/load.ts', startLine: 3 }] }),
    );
    assert.match(verifier, /How it differs: it caches in memory/);
    assert.match(verifier, /Evidence: src\/load\.ts:3/);
    assert.deepEqual(parseVerdictReply('```json\n{"verdict": "confirmed", "reason": "no call"}\n```'), {
      ok: true,
      value: { verdict: 'confirmed', reason: 'no call' },
    });
  });
});

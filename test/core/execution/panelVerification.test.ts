import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { PanelVerificationSchema, SessionVerificationSchema } from '../../../src/core/execution/panelVerification';
import { completedWithVerification, gapSteps } from '../../../src/core/execution/verificationWords';
import { toPanelVerification } from '../../../src/core/execution/toPanelVerification';
import { mergeStepVerdicts, type StepClaim } from '../../../src/core/execution/verification';
import { decideVerification } from '../../../src/core/execution/verificationOutcome';
import { readPlanSteps } from '../../../src/core/execution/steps';
import { parseWebviewToHostMessage } from '../../../src/core/panelMessages';
import { parseHostToPanelMessage } from '../../../src/core/execution/verificationMessage';
import type { ReviewerReport } from '../../../src/core/review/outcome';

const plan = ['# Plan', '', '1. Add the cache module', '2. Wire the cache into the loader', '3. Document the cache', ''].join('\n');
const planHash = createHash('sha256').update(plan).digest('hex');
const outline = readPlanSteps(plan);
const finder: ReviewerReport = { label: 'Claude (ACP) #1', role: 'finder', ok: true };
const verifier: ReviewerReport = { label: 'Gemini CLI (ACP) verifier', role: 'verifier', ok: true };
const confirmed = { verdict: 'confirmed' as const, reason: 'seen in the diff', by: 'Gemini CLI (ACP) verifier' };
const claim = (stepId: string, verdict: StepClaim['verdict'], extra: Partial<StepClaim> = {}): StepClaim => ({
  stepId,
  verdict,
  explanation: `${verdict}: as the diff shows`,
  evidence: [{ file: 'src/cache.ts', startLine: 3, endLine: 9 }],
  foundBy: 'Claude (ACP) #1',
  ...extra,
});
const binding = {
  planHash,
  changes: 'record 0123456789ab · diff 00ff',
  scope: 'the changes since approval',
  at: '2026-12-03T23:50:00.000Z',
};

function verifiedWithGaps() {
  const steps = mergeStepVerdicts(outline.steps, [
    claim('1', 'done'),
    claim('2', 'done_differently', { difference: 'in memory, not on disk', check: confirmed }),
    claim('3', 'missing', { check: confirmed, evidence: [] }),
  ]);
  const outOfPlan = [
    {
      file: 'src/extra.ts',
      startLine: 1,
      endLine: 4,
      explanation: 'A logger no step asked for.',
      foundBy: ['Claude (ACP) #1'],
      confirmedBy: ['Gemini CLI (ACP) verifier'],
      status: 'confirmed' as const,
    },
  ];
  return decideVerification(steps, outOfPlan, { done: 3, total: 3 }, [finder, verifier]);
}

describe('execution/panelVerification: what the panel shows and the window keeps', () => {
  it('carries each verdict with its evidence and who verified it, beside what the agent reported', () => {
    const v = toPanelVerification(verifiedWithGaps(), binding);
    assert.equal(v.kind, 'verified');
    assert.equal(v.headline, 'Completed, verified: 1 of 3 steps');
    assert.equal(v.detail, 'the agent reported 3 of 3 done; verified: 1 done, 1 done differently, 1 missing; 1 change not in the plan');
    assert.deepEqual(
      v.steps.map((s) => [s.id, s.verdict, s.verifiedBy]),
      [
        ['1', 'done', ['Claude (ACP) #1']],
        ['2', 'done_differently', ['Gemini CLI (ACP) verifier']],
        ['3', 'missing', ['Gemini CLI (ACP) verifier']],
      ],
    );
    assert.equal(v.steps[1]!.difference, 'in memory, not on disk');
    assert.deepEqual(v.steps[0]!.evidence, [{ file: 'src/cache.ts', startLine: 3, endLine: 9 }]);
    assert.deepEqual(v.outOfPlan[0]!.confirmedBy, ['Gemini CLI (ACP) verifier']);
    assert.deepEqual(
      gapSteps(v).map((s) => s.id),
      ['2', '3'],
    );
    assert.ok(PanelVerificationSchema.safeParse(v).success, 'what is kept parses back');
  });

  it('a failed verification says so, carries no verdicts and never reads "verified"', () => {
    const failed = decideVerification([], [], { done: 3, total: 3 }, [{ ...finder, ok: false, error: 'agent not found' }]);
    const v = toPanelVerification(failed, binding);
    assert.equal(v.kind, 'failed');
    assert.deepEqual(v.steps, []);
    assert.deepEqual(v.failures, [{ label: 'Claude (ACP) #1', error: 'agent not found' }]);
    assert.doesNotMatch(`${v.headline} ${v.detail}`, /verified/);
    assert.match(v.headline, /^Verification failed: Claude \(ACP\) #1 failed: agent not found$/);
    assert.equal(completedWithVerification(v, planHash), v.headline);
  });

  it('"Completed" names the gaps, and only for the plan it verified', () => {
    const v = toPanelVerification(verifiedWithGaps(), binding);
    assert.equal(completedWithVerification(v, planHash), 'Completed, verified: 1 of 3 steps; step 2 done differently, step 3 missing');
    assert.equal(completedWithVerification(v, 'f'.repeat(64)), undefined, 'another plan approved since: not this verification');
    assert.equal(completedWithVerification(undefined, planHash), undefined);
  });

  it('cuts long words to its bounds and refuses what is not its shape', () => {
    const outcome = verifiedWithGaps();
    if (outcome.kind === 'verified') outcome.steps[0]!.explanation = 'x'.repeat(30_000);
    const v = toPanelVerification(outcome, binding);
    assert.equal(v.steps[0]!.explanation.length, 20_000);
    assert.ok(PanelVerificationSchema.safeParse(v).success);
    assert.equal(PanelVerificationSchema.safeParse({ ...v, planHash: 'abc' }).success, false, 'a plan hash is sha256 hex');
    assert.equal(PanelVerificationSchema.safeParse({ ...v, at: 'yesterday' }).success, false);
    assert.equal(PanelVerificationSchema.safeParse({ ...v, extra: 1 }).success, false, 'no unknown keys');
    const badVerdict = { ...v, steps: [{ ...v.steps[0]!, verdict: 'probably' }] };
    assert.equal(PanelVerificationSchema.safeParse(badVerdict).success, false);
    assert.equal(SessionVerificationSchema.safeParse({ running: 'yes' }).success, false);
  });

  it('travels the panel channel both ways, checked by the shared schemas', () => {
    const v = toPanelVerification(verifiedWithGaps(), binding);
    const message = { type: 'verification', sessionKey: 'embedded:sess_1', verification: { last: v, running: false } };
    assert.ok(parseHostToPanelMessage(message).ok);
    assert.equal(parseHostToPanelMessage({ ...message, verification: { last: { ...v, kind: 'passed' }, running: false } }).ok, false);
    assert.equal(parseHostToPanelMessage({ ...message, sessionKey: '' }).ok, false);
    assert.ok(parseHostToPanelMessage({ type: 'invoke', action: 'approve' }).ok, 'the shared messages parse as before');
    assert.equal(parseHostToPanelMessage({ type: 'invoke', action: 'verify' }).ok, false);
    assert.ok(parseWebviewToHostMessage({ type: 'verify', sessionKey: 'embedded:sess_1' }).ok);
    assert.ok(parseWebviewToHostMessage({ type: 'continueStep', sessionKey: 'embedded:sess_1', stepId: '3' }).ok);
    assert.equal(parseWebviewToHostMessage({ type: 'continueStep', sessionKey: 'embedded:sess_1', stepId: '' }).ok, false);
    assert.equal(parseWebviewToHostMessage({ type: 'verify' }).ok, false);
  });
});

import assert from 'node:assert/strict';
import type { PanelVerification } from '../../../src/core/execution/panelVerification';
import { outOfPlanMessage, redoStepMessage, verificationFindings } from '../../../src/core/execution/verificationThreads';
import { PersistedThreadSchema } from '../../../src/core/review/persisted';

function verification(extra: Partial<PanelVerification> = {}): PanelVerification {
  const step = (
    id: string,
    verdict: PanelVerification['steps'][number]['verdict'],
    evidence: PanelVerification['steps'][number]['evidence'],
  ) => ({
    id,
    title: `step ${id}`,
    startLine: Number(id),
    endLine: Number(id),
    verdict,
    explanation: `${verdict} as the diff shows`,
    ...(verdict === 'done_differently' ? { difference: 'in memory, not on disk' } : {}),
    evidence,
    verifiedBy: ['Gemini CLI (ACP) verifier'],
  });
  return {
    planHash: 'a'.repeat(64),
    changes: 'record 0123456789ab · diff 00ff',
    scope: 'the changes since approval',
    at: '2026-12-03T23:50:00.000Z',
    kind: 'verified',
    headline: 'Completed, verified: 1 of 4 steps',
    detail: 'verified: 1 done, 2 done differently, 1 missing',
    steps: [
      step('1', 'done', [{ file: 'src/a.ts', startLine: 1, endLine: 3 }]),
      step('2', 'done_differently', [{ file: 'src/cache.ts', startLine: 10, endLine: 20 }]),
      step('3', 'done_differently', []),
      step('4', 'missing', []),
    ],
    outOfPlan: [
      {
        file: 'src/logger.ts',
        startLine: 1,
        endLine: 12,
        explanation: 'A logger no step asked for. It writes to stdout.',
        status: 'confirmed',
        foundBy: ['Claude (ACP) #1'],
        confirmedBy: ['Gemini CLI (ACP) verifier'],
      },
    ],
    failures: [],
    ...extra,
  };
}

describe("execution/verificationThreads: a verification's claims on their lines", () => {
  it('one thread per step done differently (on its first evidence) and per change not in the plan, each naming its session', () => {
    const findings = verificationFindings(verification(), 'embedded:a');
    assert.deepEqual(
      findings.map((f) => [f.id, f.file, f.startLine, f.endLine, f.title, f.plan]),
      [
        [
          'plan-step-2',
          'src/cache.ts',
          10,
          20,
          'Step 2 done differently: step 2',
          { sessionKey: 'embedded:a', kind: 'done_differently', stepId: '2' },
        ],
        [
          'plan-extra-1',
          'src/logger.ts',
          1,
          12,
          'Not in the plan: A logger no step asked for.',
          { sessionKey: 'embedded:a', kind: 'out_of_plan' },
        ],
      ],
    );
    assert.match(findings[0]!.explanation, /How it differs from the plan: in memory, not on disk/);
    assert.equal(findings[0]!.status, 'confirmed');
    const persisted = { ...findings[0]!, anchor: ['x'], state: 'unresolved', outdated: false };
    assert.ok(PersistedThreadSchema.safeParse(persisted).success, 'kept across a reload with its session');
    assert.equal(PersistedThreadSchema.safeParse({ ...persisted, plan: { sessionKey: '', kind: 'done_differently' } }).success, false);
  });

  it('a failed verification raises no thread', () => {
    assert.deepEqual(verificationFindings(verification({ kind: 'failed', steps: [] }), 'embedded:a'), []);
  });

  it("Fix's messages to the same session: do the step as planned; undo the change unless a step needs it", () => {
    const redo = redoStepMessage(
      { id: '2', text: 'Cache on disk', startLine: 4, endLine: 5 },
      { file: 'src/cache.ts', explanation: 'kept in memory' },
    );
    assert.match(redo, /step 2 done differently from the plan \(plan lines 4-5\)/);
    assert.match(redo, /^> Cache on disk$/m);
    assert.match(redo, /What the verifier saw \(in src\/cache\.ts\): kept in memory/);
    const undo = outOfPlanMessage({ file: 'src/logger.ts', startLine: 1, endLine: 12, explanation: 'A logger.' });
    assert.match(undo, /in src\/logger\.ts lines 1-12/);
    assert.match(undo, /Undo that change unless a step of the approved plan needs it/);
  });
});

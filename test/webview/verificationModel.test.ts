// The panel's verification model without a browser: the verdicts beside what the agent reported,
// shown only for the session shown and the plan approved now; a failure reads as failed; the
// header never says plain "Completed" once a verification of the plan is known.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { PanelVerification } from '../../src/core/execution/panelVerification';
import type { PanelExecution, PanelState, PlanRevision } from '../../src/core/panelMessages';
import { VerificationModel, approvedPlanHash } from '../../src/webview/verificationModel';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const PLAN = '1. Add the toggle\n2. Store the setting\n3. Document it\n';
const approved: PlanRevision = {
  revision: 1,
  toolUseId: 'toolu_1',
  plan: PLAN,
  planHash: sha256(PLAN),
  status: 'approved',
  comments: [],
};

function state(extra: Partial<PanelState> = {}): PanelState {
  return {
    sessionKey: 'embedded:sess_1',
    sessionId: 'sess_1',
    title: 'Dark mode',
    backendLabel: 'Embedded',
    phase: 'completed',
    revisions: [approved],
    canDecide: false,
    ...extra,
  };
}

function execution(finished: boolean): PanelExecution {
  const step = (n: number, status: PanelExecution['steps'][number]['status']) => ({
    id: String(n),
    title: `step ${n}`,
    status,
    startLine: n,
    endLine: n,
    todos: [],
    files: [],
  });
  return {
    toolUseId: 'toolu_1',
    summary: 'Completed: 3 of 3 steps reported done',
    finished,
    steps: [step(1, 'done'), step(2, 'done'), step(3, 'done')],
    notInPlan: [],
    unattributedFiles: [],
  };
}

function verification(extra: Partial<PanelVerification> = {}): PanelVerification {
  const step = (n: number, verdict: PanelVerification['steps'][number]['verdict']) => ({
    id: String(n),
    title: `step ${n}`,
    startLine: n,
    endLine: n,
    verdict,
    explanation: `${verdict} as seen`,
    evidence: [],
    verifiedBy: ['Gemini CLI (ACP) verifier'],
  });
  return {
    planHash: sha256(PLAN),
    changes: 'record 0123456789ab · diff 00ff',
    scope: 'the changes since approval',
    at: '2026-12-03T23:50:00.000Z',
    kind: 'verified',
    headline: 'Completed, verified: 1 of 3 steps',
    detail: 'the agent reported 3 of 3 done; verified: 1 done, 1 done differently, 1 missing',
    reported: { done: 3, total: 3 },
    steps: [step(1, 'done'), step(2, 'done_differently'), step(3, 'missing')],
    outOfPlan: [],
    failures: [],
    ...extra,
  };
}

const message = (last: PanelVerification | undefined, running = false, sessionKey = 'embedded:sess_1') => ({
  type: 'verification' as const,
  sessionKey,
  verification: { ...(last ? { last } : {}), running },
});

describe('webview/verificationModel: the conformance checklist', () => {
  it('puts each verdict beside what the agent reported, and offers Continue on a missing step once the execution ended', () => {
    const model = new VerificationModel();
    model.receive(message(verification()));
    const view = model.view(state(), execution(true))!;
    assert.deepEqual(
      view.rows.map((r) => [r.id, r.reported, r.verdict, r.canContinue]),
      [
        ['1', 'done', 'done', false],
        ['2', 'done', 'done_differently', false],
        ['3', 'done', 'missing', true],
      ],
    );
    assert.equal(
      view.summary,
      'Completed, verified: 1 of 3 steps. The agent reported 3 of 3 done; verified: 1 done, 1 done differently, 1 missing.',
    );
    assert.equal(view.canVerify, true);
    assert.equal(model.headerPhase(state()), 'Completed, verified: 1 of 3 steps');
  });

  it('while one runs: no second start and no Continue', () => {
    const model = new VerificationModel();
    model.receive(message(verification(), true));
    const view = model.view(state(), execution(true))!;
    assert.equal(view.canVerify, false);
    assert.equal(view.running, true);
    assert.equal(view.summary, 'Verifying the changes against the approved plan…');
    assert.ok(view.rows.every((r) => !r.canContinue));
  });

  it('before the execution ends: nothing to verify yet', () => {
    const model = new VerificationModel();
    model.receive(message(undefined));
    const view = model.view(state({ phase: 'executing' }), execution(false))!;
    assert.equal(view.canVerify, false);
    assert.equal(view.last, undefined);
    assert.equal(model.headerPhase(state({ phase: 'executing' })), undefined);
  });

  it('shows nothing of another session, nor of a plan approved before the one approved now', () => {
    const model = new VerificationModel();
    model.receive(message(verification(), false, 'embedded:other'));
    assert.equal(model.view(state(), execution(true))!.last, undefined);
    assert.equal(model.headerPhase(state()), undefined);
    model.receive(message(verification({ planHash: sha256('an older plan') })));
    assert.equal(model.last(state()), undefined);
    assert.equal(model.view(state(), execution(true))!.summary, 'Not verified yet: the work has not been checked against the plan.');
    assert.equal(model.view(state(), undefined), undefined, 'no checklist, no verification part');
  });

  it('a failed verification reads as failed in the header, never "verified"', () => {
    const model = new VerificationModel();
    model.receive(
      message(
        verification({
          kind: 'failed',
          headline: 'Verification failed: all 3 finders failed',
          detail: 'the agent reported 3 of 3 done; no step was checked',
          steps: [],
        }),
      ),
    );
    const header = model.headerPhase(state());
    assert.equal(header, 'Completed · verification failed');
    assert.doesNotMatch(header!, /verified/);
    assert.deepEqual(model.view(state(), execution(true))!.rows, []);
  });

  it('reads the approved plan hash from the last approved revision', () => {
    const second = { ...approved, revision: 2, toolUseId: 'toolu_2', plan: 'x', planHash: sha256('x'), status: 'approved_edited' as const };
    assert.equal(approvedPlanHash(state({ revisions: [approved, second] })), sha256('x'));
    assert.equal(approvedPlanHash(state({ revisions: [{ ...approved, status: 'pending' }] })), undefined);
  });
});

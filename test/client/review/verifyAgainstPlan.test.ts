// Verification against the approved plan through the review fleet's machinery, on a real git
// repository, with the scripted agent (src/agents/scripted) behind real embedded session hosts:
// the finders' per-step verdicts, each gap and out-of-plan change checked by a verifier of another
// run, a refuted gap leaving its step done, every finder failing never read as verified, a cancel.
import { strict as assert } from 'node:assert';
import { collectChange } from '../../../src/client/review/gitChange';
import { verifyAgainstPlan, type VerifyRequest } from '../../../src/client/review/verifyAgainstPlan';
import type { ReviewProgress } from '../../../src/core/review/progress';
import { verificationDetail, verificationExitCode, verificationHeadline } from '../../../src/core/execution/verificationOutcome';
import { CONFIRMED, FINDER_REPLY, PLAN, PlanRepo, REFUTED, ScriptedSource, jsonText } from '../../support/review/planRepo';

describe('verification against the plan: the fleet with scripted agents on a real repository', function () {
  this.timeout(60_000);
  const repo = new PlanRepo();
  let opened: ScriptedSource[] = [];
  before(() => repo.open());
  after(() => repo.close());
  afterEach(async () => {
    for (const source of opened) await source.dispose();
    opened = [];
  });

  function agent(label: string, text: string): ScriptedSource {
    const source = new ScriptedSource(label, text);
    opened.push(source);
    return source;
  }

  async function verify(request: Omit<VerifyRequest, 'plan' | 'change' | 'signal'> & { signal?: AbortSignal }) {
    // Since approval: the commit before the plan's work, with the uncommitted work on top.
    const change = await collectChange(repo.root, { kind: 'since', rev: 'HEAD~1', includeUntracked: false });
    return verifyAgainstPlan({ plan: PLAN, change, signal: new AbortController().signal, ...request });
  }

  function promptOf(source: ScriptedSource): string {
    const [session] = source.host.listSessions();
    const events = source.host.readEvents(session!.id, null, 1000).data;
    const user = events.find((e) => e.type === 'user') as { message?: { content?: unknown } } | undefined;
    const content = user?.message?.content;
    return typeof content === 'string' ? content : JSON.stringify(content);
  }

  it('steps 1, 2, 4 done, step 3 missing and src/config.ts out of plan, each claim confirmed by the other agent; the secret never sent', async () => {
    const finder = agent('Scripted finder', jsonText(FINDER_REPLY));
    const verifier = agent('Scripted verifier', jsonText(CONFIRMED));
    const stages: string[] = [];
    const { outcome, outline } = await verify({
      sources: [finder.source],
      verifiers: [verifier.source],
      finders: 1,
      onProgress: (p: ReviewProgress) => {
        if (stages.at(-1) !== p.stage) stages.push(p.stage);
      },
    });
    assert.deepEqual(stages, ['finding', 'verifying', 'merging']);
    assert.equal(outline.steps.length, 4);
    assert.equal(outcome.kind, 'verified', verificationHeadline(outcome));
    if (outcome.kind !== 'verified') return;
    assert.deepEqual(
      outcome.steps.map((s) => [s.id, s.startLine, s.verdict, s.verifiedBy]),
      [
        ['1', 3, 'done', ['Scripted finder #1']],
        ['2', 4, 'done', ['Scripted finder #1']],
        ['3', 5, 'missing', ['Scripted verifier verifier']],
        ['4', 6, 'done', ['Scripted finder #1']],
      ],
    );
    assert.deepEqual(
      outcome.outOfPlan.map((c) => [c.file, c.status, c.confirmedBy]),
      [['src/config.ts', 'confirmed', ['Scripted verifier verifier']]],
    );
    assert.equal(verificationHeadline(outcome), 'Completed, verified: 3 of 4 steps');
    assert.equal(verificationDetail(outcome), 'verified: 3 done, 0 done differently, 1 missing; 1 change not in the plan');
    assert.equal(verificationExitCode(outcome), 1);
    // The finder read the plan and the change since approval, without the secret; every session was archived.
    const prompt = promptOf(finder);
    assert.match(prompt, /- 3 \(lines 5-5\): Add a test for greet in test\/greet\.test\.ts\./);
    assert.match(prompt, /TIMEOUT_SECONDS = 60/);
    assert.match(prompt, /return `Hello, \$\{name\}`/);
    assert.doesNotMatch(prompt, /never-sent|\.env/);
    assert.deepEqual(
      verifier
        .sessions()
        .map((s) => s.title)
        .sort(),
      ['Ultraplan verification: verify 1', 'Ultraplan verification: verify 2'],
    );
    assert.ok([...finder.sessions(), ...verifier.sessions()].every((s) => s.status === 'archived'));
  });

  it('with two agent kinds, each claim is verified by the kind that did not find it', async () => {
    const [findA, findB] = [agent('Kind A', jsonText(FINDER_REPLY)), agent('Kind B', jsonText(FINDER_REPLY))];
    const [checkA, checkB] = [agent('Kind A', jsonText(CONFIRMED)), agent('Kind B', jsonText(CONFIRMED))];
    const { outcome } = await verify({ sources: [findA.source, findB.source], verifiers: [checkA.source, checkB.source], finders: 2 });
    assert.equal(outcome.kind, 'verified');
    if (outcome.kind !== 'verified') return;
    const step3 = outcome.steps.find((s) => s.id === '3')!;
    assert.deepEqual(step3.foundBy, ['Kind A #1', 'Kind B #2']);
    assert.deepEqual(step3.confirmedBy, ['Kind A verifier', 'Kind B verifier']);
    // Each finder made two claims (step 3, src/config.ts): two verifications on each other kind.
    assert.equal(checkA.sessions().length, 2);
    assert.equal(checkB.sessions().length, 2);
    assert.deepEqual(outcome.outOfPlan[0]!.foundBy, ['Kind A #1', 'Kind B #2']);
  });

  it("a verifier refuting the finder's gap keeps the step done, and a refuted out-of-plan change drops", async () => {
    const { outcome } = await verify({
      sources: [agent('Scripted finder', jsonText(FINDER_REPLY)).source],
      verifiers: [agent('Scripted verifier', jsonText(REFUTED)).source],
      finders: 1,
    });
    assert.equal(outcome.kind, 'verified');
    if (outcome.kind !== 'verified') return;
    const step3 = outcome.steps.find((s) => s.id === '3')!;
    assert.equal(step3.verdict, 'done');
    assert.deepEqual(step3.refutedBy, ['Scripted verifier verifier']);
    assert.deepEqual(step3.verifiedBy, ['Scripted verifier verifier']);
    assert.deepEqual(outcome.outOfPlan, []);
    assert.equal(verificationHeadline(outcome), 'Completed, verified: 4 of 4 steps');
    assert.equal(verificationExitCode(outcome, { failOnOutOfPlan: true }), 0);
  });

  it('every finder failing is a failed verification that never says verified, and no claim reaches a verifier', async () => {
    const verifier = agent('Scripted verifier', jsonText(CONFIRMED));
    const { outcome } = await verify({
      sources: [agent('Scripted finder', 'LGTM, all steps done.').source],
      verifiers: [verifier.source],
      finders: 2,
    });
    assert.equal(outcome.kind, 'failed');
    const text = `${verificationHeadline(outcome)}\n${verificationDetail(outcome)}`;
    assert.equal(verificationHeadline(outcome), 'Verification failed: all 2 finders failed');
    assert.doesNotMatch(text, /\bverified\b/);
    assert.deepEqual(
      outcome.reviewers.map((r) => [r.label, r.error]),
      [
        ['Scripted finder #1', 'its reply is not JSON (it began "LGTM, all steps done.")'],
        ['Scripted finder #2', 'its reply is not JSON (it began "LGTM, all steps done.")'],
      ],
    );
    assert.equal(verificationExitCode(outcome), 2);
    assert.equal(verifier.sessions().length, 0);
  });

  it('a finder naming a step the plan does not have fails that finder, named; the other finder still verifies', async () => {
    const wrong = { ...FINDER_REPLY, steps: [...FINDER_REPLY.steps, { ...FINDER_REPLY.steps[0]!, stepId: '9' }] };
    const { outcome } = await verify({
      sources: [agent('Good', jsonText(FINDER_REPLY)).source, agent('Wrong', jsonText(wrong)).source],
      verifiers: [agent('Checker', jsonText(CONFIRMED)).source],
      finders: 2,
    });
    assert.equal(outcome.kind, 'verified');
    assert.deepEqual(
      outcome.reviewers.map((r) => [r.label, r.ok, r.error]),
      [
        ['Good #1', true, undefined],
        ['Wrong #2', false, 'it gave a verdict on "9", which is not a step of the plan'],
      ],
    );
  });

  it('a cancel ends the running finders and archives their sessions: cancelled, not verified', async () => {
    const slow = new ScriptedSource('Slow', jsonText(FINDER_REPLY), 60_000);
    opened.push(slow);
    const abort = new AbortController();
    const started = Date.now();
    // Cancelled once both finders run (a fixed delay raced their start on a loaded machine).
    const cancelWhenRunning = setInterval(() => {
      if (slow.sessions().length === 2) abort.abort();
    }, 20);
    const { outcome } = await verify({ sources: [slow.source], finders: 2, signal: abort.signal }).finally(() =>
      clearInterval(cancelWhenRunning),
    );
    assert.equal(outcome.kind, 'cancelled');
    assert.equal(verificationHeadline(outcome), 'Verification was cancelled');
    assert.ok(Date.now() - started < 10_000);
    assert.ok(slow.sessions().length === 2 && slow.sessions().every((s) => s.status === 'archived'), JSON.stringify(slow.sessions()));
  });

  it('a plan with no steps, or no agent, fails with the reason before any agent runs', async () => {
    const finder = agent('Scripted finder', jsonText(FINDER_REPLY));
    const change = await collectChange(repo.root, { kind: 'since', rev: 'HEAD~1', includeUntracked: false });
    const signal = new AbortController().signal;
    const empty = await verifyAgainstPlan({ plan: '# Title only\n\nSome prose.\n', change, sources: [finder.source], finders: 1, signal });
    assert.equal(verificationHeadline(empty.outcome), 'Verification failed: the plan has no steps to verify');
    const none = await verifyAgainstPlan({ plan: PLAN, change, sources: [], finders: 1, signal });
    assert.equal(verificationHeadline(none.outcome), 'Verification failed: no agent to verify with');
    assert.equal(finder.sessions().length, 0);
  });
});

// The review fleet with the real agents (Claude's ACP adapter, Gemini CLI, Codex's ACP adapter),
// only their models scripted: finders return findings in the strict shape, verifiers confirm the
// true ones and refute the false one, duplicates merge, finders of one kind are verified by
// another kind, a failing finder is named, a cancel stops every agent.
import { strict as assert } from 'node:assert';
import { collectChange } from '../../../src/client/review/gitChange';
import { reviewOutcome, runReviewFleet } from '../../../src/client/review/fleet';
import { outcomeDetails, outcomeHeadline } from '../../../src/core/review/outcome';
import type { ReviewProgress } from '../../../src/core/review/progress';
import { assertAgentGroupsGone } from '../../support/processes';
import { ReviewRepo } from '../../support/review/gitRepo';
import { DIVISION, OFF_BY_ONE, TOKEN, verdictFor } from '../../support/review/findings';
import {
  FINDER_MARK,
  VERIFIER_MARK,
  ReviewAgentSource,
  json,
  type ReviewAgentKind,
  type ReviewModelScript,
} from '../../support/review/reviewAgents';

const OFF_BY_ONE_AGAIN = { ...OFF_BY_ONE, title: 'Off-by-one: loop reads past the end', explanation: 'The bound must be <, not <=.' };

describe('the review fleet with real agents, models scripted', function () {
  this.timeout(240_000);
  const repo = new ReviewRepo();
  let sources: ReviewAgentSource[] = [];
  before(() => repo.open());
  after(() => repo.close());
  afterEach(async () => {
    for (const source of sources) await source.close();
    sources = [];
  });

  async function open(kinds: ReviewAgentKind[], script: ReviewModelScript) {
    const opened = [];
    for (const kind of kinds) {
      const source = new ReviewAgentSource();
      sources.push(source);
      opened.push(await source.open(kind, repo.root, script));
    }
    return opened;
  }

  it('three finders over Claude and Gemini: true findings verified and merged, the false one refuted, the secret never sent', async () => {
    const reviewSources = await open(['claude', 'gemini'], {
      finder: (view) =>
        view.model.includes('gemini') ? json({ findings: [OFF_BY_ONE_AGAIN, TOKEN] }) : json({ findings: [OFF_BY_ONE, DIVISION] }),
      verifier: verdictFor,
    });
    const change = await collectChange(repo.root, { kind: 'branch', includeUntracked: false });
    const stages: string[] = [];
    const { raw, reviewers } = await runReviewFleet({
      change,
      sources: reviewSources,
      finders: 3,
      signal: new AbortController().signal,
      onProgress: (p: ReviewProgress) => {
        if (stages.at(-1) !== p.stage) stages.push(p.stage);
      },
    });
    assert.deepEqual(stages, ['finding', 'verifying', 'merging']);
    const outcome = reviewOutcome(raw, reviewers);
    assert.equal(raw.length, 6);
    assert.equal(outcome.kind, 'findings', outcomeDetails(outcome).join('\n'));
    if (outcome.kind !== 'findings') return;
    assert.equal(outcomeHeadline(outcome), '2 issues found by 3 reviewers');
    assert.deepEqual(outcome.counts, { found: 6, verified: 4, refuted: 2, unverified: 0 });
    const [token, loop] = outcome.findings;
    assert.equal(token!.title, TOKEN.title);
    assert.deepEqual(token!.foundBy, ['Gemini CLI (ACP) #2']);
    assert.deepEqual(token!.confirmedBy, ['Claude (ACP) verifier']);
    assert.equal(loop!.file, 'src/app.ts');
    assert.deepEqual([loop!.startLine, loop!.endLine], [3, 3]);
    assert.deepEqual(loop!.foundBy.sort(), ['Claude (ACP) #1', 'Claude (ACP) #3', 'Gemini CLI (ACP) #2']);
    assert.equal(loop!.confirmations, 3);
    // Each finding went to the other agent kind; the finders saw the diff, no model saw the secret.
    const finderPrompts = sources.flatMap((source) => source.promptsSeen()).filter((text) => text.includes(FINDER_MARK));
    assert.equal(finderPrompts.length, 3);
    assert.ok(finderPrompts.every((text) => text.includes('i <= items.length')));
    for (const source of sources) assert.ok(!source.sentText().includes('do-not-send'));
  });

  /** Runs a fleet of `finderKind` finders whose findings only `verifierKind` verifies. */
  async function mixedFleet(finderKind: ReviewAgentKind, verifierKind: ReviewAgentKind, findings: unknown[]) {
    const [finder] = await open([finderKind], { finder: () => json({ findings }), verifier: verdictFor });
    const [verifier] = await open([verifierKind], { finder: () => json({ findings: [] }), verifier: verdictFor });
    const change = await collectChange(repo.root, { kind: 'branch', includeUntracked: false });
    const fleet = await runReviewFleet({
      change,
      sources: [finder!],
      verifiers: [verifier!],
      finders: 1,
      signal: new AbortController().signal,
    });
    const [finderModel, verifierModel] = sources.slice(-2).map((source) => source.promptsSeen());
    // Each model saw only its role's prompts: the finder's kind found, the other kind verified.
    assert.equal(finderModel!.filter((text) => text.includes(FINDER_MARK)).length, 1);
    assert.equal(finderModel!.filter((text) => text.includes(VERIFIER_MARK)).length, 0);
    assert.equal(verifierModel!.filter((text) => text.includes(FINDER_MARK)).length, 0);
    assert.equal(verifierModel!.filter((text) => text.includes(VERIFIER_MARK)).length, findings.length);
    return reviewOutcome(fleet.raw, fleet.reviewers);
  }

  it("Codex's adapter finds, Claude's adapter verifies: the false finding is refuted, the true ones confirmed by the other kind", async () => {
    const outcome = await mixedFleet('codex', 'claude', [OFF_BY_ONE, DIVISION, TOKEN]);
    assert.equal(outcome.kind, 'findings', outcomeDetails(outcome).join('\n'));
    if (outcome.kind !== 'findings') return;
    assert.equal(outcomeHeadline(outcome), '2 issues found by 1 reviewer');
    assert.deepEqual(outcome.counts, { found: 3, verified: 2, refuted: 1, unverified: 0 });
    assert.deepEqual(
      outcome.findings.map((f) => [f.title, f.foundBy, f.confirmedBy]),
      [
        [TOKEN.title, ['Codex (ACP) #1'], ['Claude (ACP) verifier']],
        [OFF_BY_ONE.title, ['Codex (ACP) #1'], ['Claude (ACP) verifier']],
      ],
    );
  });

  it("Gemini CLI finds, Codex's adapter verifies: Codex refutes the false finding", async () => {
    const outcome = await mixedFleet('gemini', 'codex', [OFF_BY_ONE, DIVISION]);
    assert.equal(outcome.kind, 'findings', outcomeDetails(outcome).join('\n'));
    if (outcome.kind !== 'findings') return;
    assert.deepEqual(outcome.counts, { found: 2, verified: 1, refuted: 1, unverified: 0 });
    assert.deepEqual(
      outcome.findings.map((f) => [f.title, f.foundBy, f.confirmedBy]),
      [[OFF_BY_ONE.title, ['Gemini CLI (ACP) #1'], ['Codex (ACP) verifier']]],
    );
  });

  it('a finder whose reply does not fit the shape is named, and the others still report', async () => {
    let finders = 0;
    const reviewSources = await open(['claude'], {
      finder: () => (++finders === 2 ? { text: 'The change looks fine to me overall.' } : json({ findings: [] })),
      verifier: verdictFor,
    });
    const change = await collectChange(repo.root, { kind: 'staged' });
    const fleet = await runReviewFleet({ change, sources: reviewSources, finders: 3, signal: new AbortController().signal });
    const outcome = reviewOutcome(fleet.raw, fleet.reviewers);
    assert.equal(outcome.kind, 'clean');
    assert.equal(outcomeHeadline(outcome), 'No issues found by 2 reviewers');
    const details = outcomeDetails(outcome);
    assert.equal(details.length, 2);
    assert.match(details[0]!, /^Claude \(ACP\) #\d failed: its reply is not JSON \(it began "The change looks fine to me overall\."\)$/);
    assert.equal(details[1], 'The other 2 reviewers reported.');
  });

  it('a cancelled review stops its agents and says cancelled, not clean', async () => {
    const reviewSources = await open(['claude'], { finder: () => ({ hang: true }), verifier: verdictFor });
    const change = await collectChange(repo.root, { kind: 'staged' });
    const abort = new AbortController();
    const running = runReviewFleet({ change, sources: reviewSources, finders: 2, signal: abort.signal });
    await sources[0]!.model!.waitForRound(2, 120_000);
    abort.abort();
    const fleet = await running;
    const outcome = reviewOutcome(fleet.raw, fleet.reviewers, fleet.cancelled);
    assert.equal(outcome.kind, 'cancelled');
    assert.equal(outcomeHeadline(outcome), 'The review was cancelled');
    // The cancel itself stopped them, before anything is disposed: both finders' agents and every
    // process they started are gone.
    const pids = sources[0]!.agents.map((agent) => agent.pid).filter((pid): pid is number => pid !== undefined);
    assert.equal(pids.length, 2);
    await assertAgentGroupsGone(pids);
  });
});

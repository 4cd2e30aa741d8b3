// The built command line (dist/review.mjs) verifying a change against an approved plan, as CI runs
// it: a real child process in a real git repository, the scripted agent (--agent scripted:FILE) as
// finder and verifier. Exit codes: 0 every step done, 1 a step missing or done differently (or an
// out-of-plan change with --fail-on out-of-plan), 2 the verification failed.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { git } from '../support/review/gitRepo';
import { CONFIRMED, FINDER_REPLY, PlanRepo, REFUTED, jsonText, sayScenario } from '../support/review/planRepo';
import { REPO_ROOT, ensureBundleBuilt } from '../support/serverProcess';

const REVIEW_JS = path.join(REPO_ROOT, 'dist', 'review.mjs');

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], cwd: string): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [REVIEW_JS, ...args], { cwd, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface JsonReport {
  outcome: string;
  headline: string;
  details: string;
  since: { rev: string; why: string } | null;
  withheld: string[];
  steps: Array<{
    id: string;
    text: string;
    lines: { start: number; end: number };
    verdict: string;
    evidence: unknown[];
    verifiedBy: string[];
  }>;
  outOfPlan: Array<{ file: string; status: string }>;
  exitCode: number;
}

describe('ultraplan-review --against-plan (dist/review.mjs) with scripted agents', function () {
  this.timeout(120_000);
  const repo = new PlanRepo();
  const agents: Record<string, string> = {};
  before(async () => {
    ensureBundleBuilt('review');
    await repo.open();
    const scenario = async (name: string, text: string) =>
      `scripted:${await repo.file(`${name}.json`, JSON.stringify(sayScenario(name, text)))}`;
    agents.finder = await scenario('finder', jsonText(FINDER_REPLY));
    agents.confirms = await scenario('confirms', jsonText(CONFIRMED));
    agents.refutes = await scenario('refutes', jsonText(REFUTED));
    agents.lgtm = await scenario('lgtm', 'LGTM: all four steps are done.');
  });
  after(() => repo.close());

  const verify = (...args: string[]) =>
    runCli(['--against-plan', repo.planFile, '--since', 'HEAD~1', '--finders', '1', ...args], repo.root);

  it('step 3 missing and src/config.ts out of plan: exit 1, each step with its lines, evidence and who verified it', async () => {
    const run = await verify('--agent', agents.finder!, '--verifier', agents.confirms!);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /^Completed, verified: 3 of 4 steps$/m);
    assert.match(run.stdout, /^3 {2}\[MISSING\] {2}Add a test for greet in test\/greet\.test\.ts\. {2}\(plan lines 5-5\)$/m);
    assert.match(run.stdout, /^ {4}by Scripted "confirms" \(confirms\.json\) verifier$/m);
    assert.match(run.stdout, /^1 {2}\[done\] .*\n.*\n {4}evidence: src\/greet\.ts:1-3\n {4}by Scripted "finder" \(finder\.json\) #1$/m);
    assert.match(run.stdout, /Not in the plan:\n {2}src\/config\.ts:1-1 {2}Raises the timeout/);
    assert.match(run.stderr, /verifying the changes since HEAD~1 \(named with --since\)/);
    assert.match(run.stderr, /Left out as secrets \(never sent\): \.env/);
  });

  it('--json: each step with id, text, lines, verdict, evidence and verifiedBy; --fail-on out-of-plan', async () => {
    const run = await verify('--agent', agents.finder!, '--verifier', agents.confirms!, '--json');
    assert.equal(run.code, 1, run.stderr);
    const report = JSON.parse(run.stdout) as JsonReport;
    assert.equal(report.outcome, 'verified');
    assert.equal(report.exitCode, 1);
    assert.deepEqual(report.since, { rev: 'HEAD~1', why: 'named with --since' });
    assert.deepEqual(report.withheld, ['.env']);
    assert.deepEqual(
      report.steps.map((s) => [s.id, s.lines, s.verdict, s.verifiedBy]),
      [
        ['1', { start: 3, end: 3 }, 'done', ['Scripted "finder" (finder.json) #1']],
        ['2', { start: 4, end: 4 }, 'done', ['Scripted "finder" (finder.json) #1']],
        ['3', { start: 5, end: 5 }, 'missing', ['Scripted "confirms" (confirms.json) verifier']],
        ['4', { start: 6, end: 6 }, 'done', ['Scripted "finder" (finder.json) #1']],
      ],
    );
    assert.equal(report.steps[0]!.text, 'Create src/greet.ts exporting greet(name), which returns "Hello, NAME".');
    assert.deepEqual(report.steps[0]!.evidence, [{ file: 'src/greet.ts', startLine: 1, endLine: 3 }]);
    assert.deepEqual(
      report.outOfPlan.map((c) => [c.file, c.status]),
      [['src/config.ts', 'confirmed']],
    );
    // The verifier refutes: every step done. Out-of-plan changes fail the run only when asked.
    const refuted = await verify('--agent', agents.finder!, '--verifier', agents.refutes!, '--fail-on', 'out-of-plan', '--json');
    assert.equal(refuted.code, 0, refuted.stderr);
    const clean = JSON.parse(refuted.stdout) as JsonReport;
    assert.equal(clean.headline, 'Completed, verified: 4 of 4 steps');
    assert.equal(clean.steps[2]!.verdict, 'done');
    assert.deepEqual(clean.steps[2]!.verifiedBy, ['Scripted "refutes" (refutes.json) verifier']);
  });

  it('--fail-on out-of-plan exits 1 on a confirmed change no step asked for, even with every step done', async () => {
    const allDone = { ...FINDER_REPLY, steps: FINDER_REPLY.steps.map((s) => ({ ...s, verdict: 'done' })) };
    const agent = `scripted:${await repo.file('all-done.json', JSON.stringify(sayScenario('all done', jsonText(allDone))))}`;
    const plain = await verify('--agent', agent, '--verifier', agents.confirms!);
    assert.equal(plain.code, 0, plain.stderr);
    const strict = await verify('--agent', agent, '--verifier', agents.confirms!, '--fail-on', 'out-of-plan');
    assert.equal(strict.code, 1, strict.stderr);
  });

  it('every finder failing is exit 2 and the text never says verified', async () => {
    const run = await verify('--agent', agents.lgtm!, '--verifier', agents.confirms!, '--finders', '2');
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stdout, /^Verification failed: all 2 finders failed$/m);
    assert.match(run.stdout, /#1 failed: its reply is not JSON \(it began "LGTM/);
    assert.doesNotMatch(run.stdout, /verified/i);
    const json = JSON.parse((await verify('--agent', agents.lgtm!, '--json')).stdout) as JsonReport;
    assert.equal(json.outcome, 'failed');
    assert.equal(json.exitCode, 2);
    assert.deepEqual(
      json.steps.map((s) => s.verdict),
      ['unverified', 'unverified', 'unverified', 'unverified'],
    );
  });

  it('default --since: HEAD without an upstream, the merge-base with it when there is one; wrong use is exit 2', async () => {
    // Against HEAD only the uncommitted work is seen: greet.ts (committed) is not in the change.
    const headOnly = await runCli(
      ['--against-plan', repo.planFile, '--agent', agents.finder!, '--verifier', agents.confirms!, '--json'],
      repo.root,
    );
    assert.equal(headOnly.code, 1, headOnly.stderr);
    assert.deepEqual((JSON.parse(headOnly.stdout) as JsonReport).since, { rev: 'HEAD', why: 'HEAD (the branch has no upstream)' });
    git(repo.root, 'branch', '-q', 'base', 'HEAD~1');
    git(repo.root, 'branch', '-q', '--set-upstream-to=base');
    try {
      const upstream = await runCli(['--against-plan', repo.planFile, '--agent', agents.finder!, '--json'], repo.root);
      const since = (JSON.parse(upstream.stdout) as JsonReport).since!;
      assert.equal(since.rev, git(repo.root, 'rev-parse', 'HEAD~1').trim());
      assert.equal(since.why, "HEAD's merge-base with base");
    } finally {
      git(repo.root, 'branch', '-q', '--unset-upstream');
    }
    const noAgent = await runCli(['--against-plan', repo.planFile], repo.root);
    assert.equal(noAgent.code, 2);
    assert.match(noAgent.stderr, /name the agents that verify/);
    const mixed = await runCli(['--against-plan', repo.planFile, '--staged', '--agent', agents.finder!], repo.root);
    assert.equal(mixed.code, 2);
    assert.match(mixed.stderr, /does not take --staged/);
    const badRev = await verify('--agent', agents.finder!, '--since', '--upload-pack=x');
    assert.equal(badRev.code, 2);
    const missingPlan = await runCli(['--against-plan', 'nope.md', '--agent', agents.finder!], repo.root);
    assert.equal(missingPlan.code, 2);
    assert.match(missingPlan.stderr, /cannot read the plan .*nope\.md/);
    const help = await runCli(['--help'], repo.root);
    assert.match(help.stdout, /--since REV .*HEAD's merge-base\n.*upstream, or HEAD when the branch has no upstream\)/);
  });
});

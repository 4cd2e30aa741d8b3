// The built command line (dist/review.mjs) as CI runs it: a real child process in a real git
// repository, the real Claude adapter as its agent (run by the CLI, or by a real ultraplan-server
// with --server) with only the model scripted, and Claude Code's review through its stand-in. Exit codes: 0 nothing at or above --fail-on, 1 such findings, 2 failed.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { anthropicApi } from '../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer, type ModelReply, type ModelRequestView } from '../support/modelApi/scenario';
import { findOnPath } from '../../src/agents/catalogue';
import { CLAUDE_ADAPTER, claudeEnv } from '../support/realAgents';
import { GitHubApiStandIn } from '../support/review/githubApiStandIn';
import { ReviewRepo, git } from '../support/review/gitRepo';
import { OFF_BY_ONE } from '../support/review/findings';
import { FINDER_MARK, VERIFIER_MARK, json } from '../support/review/reviewAgents';
import { REPO_ROOT, ensureBundleBuilt, startServer } from '../support/serverProcess';

const REVIEW_JS = path.join(REPO_ROOT, 'dist', 'review.mjs');
const STAND_IN = path.resolve(__dirname, '..', 'support', 'review', 'claudeUltrareviewStandIn.mjs');

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [REVIEW_JS, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('ultraplan-review (dist/review.mjs): exit codes and --json', function () {
  this.timeout(180_000);
  const repo = new ReviewRepo();
  let home = '';
  let model: ScriptedModelServer | undefined;
  before(async () => {
    ensureBundleBuilt('review');
    await repo.open();
    home = await mkdtemp(path.join(tmpdir(), 'ultraplan-review-cli-home-'));
  });
  after(async () => {
    await repo.close();
    await rm(home, { recursive: true, force: true });
  });
  afterEach(async () => {
    await model?.close();
    model = undefined;
  });

  async function agentEnv(finder: (view: ModelRequestView) => ModelReply): Promise<NodeJS.ProcessEnv> {
    const route = (view: ModelRequestView): ModelReply =>
      view.lastUser.text.includes(VERIFIER_MARK)
        ? json({ verdict: 'confirmed', reason: 'It does.' })
        : view.lastUser.text.includes(FINDER_MARK)
          ? finder(view)
          : { text: 'ok' };
    model = new ScriptedModelServer(anthropicApi, new Scenario(Array.from({ length: 50 }, () => route)));
    const url = await model.start();
    return { ...process.env, ...claudeEnv(home, url) };
  }

  it('a major finding: exit 1 with --fail-on major, exit 0 with --fail-on critical; --json carries the verified finding', async () => {
    const env = await agentEnv(() => json({ findings: [OFF_BY_ONE] }));
    const args = ['--agent', `acp:${CLAUDE_ADAPTER}`, '--finders', '1', '--json'];
    const failing = await runCli([...args, '--fail-on', 'major'], repo.root, env);
    assert.equal(failing.code, 1, failing.stderr);
    const report = JSON.parse(failing.stdout) as {
      outcome: string;
      headline: string;
      findings: Array<Record<string, unknown>>;
      withheld: string[];
      exitCode: number;
    };
    assert.equal(report.outcome, 'findings');
    assert.equal(report.headline, '1 issue found by 1 reviewer');
    assert.deepEqual(report.withheld, ['.env']);
    assert.equal(report.exitCode, 1);
    assert.deepEqual(
      report.findings.map((f) => [f.file, f.startLine, f.severity, f.confirmations, f.verdicts]),
      [['src/app.ts', 3, 'major', 1, 1]],
    );
    assert.match(failing.stderr, /verifying — 1 found/);
    const passing = await runCli([...args, '--fail-on', 'critical'], repo.root, env);
    assert.equal(passing.code, 0, passing.stderr);
  });

  it("--server: the reviewers are a real ultraplan-server's agent; exit 1 on its verified finding, and its sessions end archived", async () => {
    const env = await agentEnv(() => json({ findings: [OFF_BY_ONE] }));
    const server = await startServer({
      agent: `acp:${JSON.stringify(CLAUDE_ADAPTER)}`,
      extraArgs: ['--workspace', repo.root],
      env: claudeEnv(home, model!.url),
    });
    try {
      const run = await runCli(['--server', server.url, '--finders', '2', '--json'], repo.root, {
        ...env,
        ULTRAPLAN_SERVER_TOKEN: server.token!,
      });
      assert.equal(run.code, 1, run.stderr);
      const report = JSON.parse(run.stdout) as { headline: string; findings: Array<{ foundBy: string[]; confirmedBy: string[] }> };
      assert.equal(report.headline, '1 issue found by 2 reviewers');
      assert.equal(report.findings[0]!.foundBy.length, 2);
      assert.ok(
        report.findings[0]!.foundBy.every((label) => label.includes(server.url)),
        report.findings[0]!.foundBy.join(),
      );
      // The finders and the verifier ran on the server (its model saw every prompt), and each
      // of their sessions was archived when its turn ended, which stops its agent.
      assert.equal(model!.rounds.filter((r) => r.view?.lastUser.text.includes(FINDER_MARK)).length, 2);
      const listed = (await (await fetch(`${server.url}/v1/code/sessions`, { headers: server.headers() })).json()) as {
        data: Array<{ session_status?: string; status?: string }>;
      };
      assert.equal(listed.data.length, 4); // two finders, and a verifier for each one's finding
      assert.ok(
        listed.data.every((session) => (session.session_status ?? session.status) === 'archived'),
        JSON.stringify(listed.data),
      );
      // A wrong token is the server's refusal, named, and exit 2: never a clean pass.
      const refused = await runCli(['--server', server.url, '--finders', '1'], repo.root, { ...env, ULTRAPLAN_SERVER_TOKEN: 'wrong' });
      assert.equal(refused.code, 2, refused.stdout);
      assert.match(refused.stdout, /^The review failed: .*(401|token|unauthori)/im);
    } finally {
      await server.stop();
    }
  });

  it("--pr N through the real gh: the pull request's diff from the GitHub API is what is reviewed; a refused login is exit 2 with gh's reason", async () => {
    assert.ok(findOnPath('gh'), 'the GitHub CLI (gh) is not installed: node scripts/ensure-system-deps.mjs installs it');
    // The pull request is the branch's commits; the uncommitted login.ts is not part of it.
    const github = await new GitHubApiStandIn('ghe-scripted-token', { 'acme/shop#7': git(repo.root, 'diff', 'main', 'feature') }).start();
    try {
      const env = await agentEnv(() => json({ findings: [OFF_BY_ONE] }));
      const args = ['--pr', '7', '--agent', `acp:${CLAUDE_ADAPTER}`, '--finders', '1', '--json'];
      const run = await runCli(args, repo.root, { ...env, ...github.ghEnv('acme/shop') });
      assert.equal(run.code, 1, run.stderr);
      const report = JSON.parse(run.stdout) as { scope: string; findings: Array<{ title: string }> };
      assert.equal(report.scope, 'pull request #7');
      assert.deepEqual(
        report.findings.map((f) => f.title),
        [OFF_BY_ONE.title],
      );
      const finderPrompt = model!.rounds.find((r) => r.view?.lastUser.text.includes(FINDER_MARK))!.view!.lastUser.text;
      // The diff sent is the pull request's (Claude's own context lists the working tree's status too).
      const sentDiff = finderPrompt.slice(finderPrompt.indexOf('```diff'));
      assert.match(sentDiff, /i <= items\.length/);
      assert.doesNotMatch(sentDiff, /login\.ts/);
      assert.deepEqual(github.refused, []);
      assert.deepEqual(
        github.requests.map((r) => [r.method, r.url, r.headers.authorization]),
        [['GET', '/api/v3/repos/acme/shop/pulls/7', 'token ghe-scripted-token']],
      );

      const refused = await runCli(args, repo.root, { ...env, ...github.ghEnv('acme/shop', 'expired-token') });
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(JSON.parse(refused.stdout).headline as string, /^The review failed: gh pr diff 7 failed: .*HTTP 401: Bad credentials/);
      const missing = await runCli(['--pr', '8', ...args.slice(2)], repo.root, { ...env, ...github.ghEnv('acme/shop') });
      assert.equal(missing.code, 2, missing.stderr);
      assert.match(JSON.parse(missing.stdout).headline as string, /gh pr diff 8 failed: .*HTTP 404/);
    } finally {
      await github.close();
    }
  });

  it('--verifier: another agent verifies what the --agent finders found, and its refutation is the outcome', async () => {
    const env = await agentEnv(() => json({ findings: [OFF_BY_ONE] }));
    const verifierModel = new ScriptedModelServer(
      anthropicApi,
      new Scenario(Array.from({ length: 10 }, () => () => json({ verdict: 'refuted', reason: 'The bound is checked by the caller.' }))),
    );
    const verifierUrl = await verifierModel.start();
    try {
      // The verifier is Claude's adapter on a model of its own, named as a command (so labelled after env).
      const verifier = ['/usr/bin/env', `ANTHROPIC_BASE_URL=${verifierUrl}`, CLAUDE_ADAPTER].map((arg) => JSON.stringify(arg)).join(' ');
      const run = await runCli(
        ['--agent', `acp:${CLAUDE_ADAPTER}`, '--verifier', `acp:${verifier}`, '--finders', '1', '--json'],
        repo.root,
        env,
      );
      assert.equal(run.code, 0, run.stderr);
      const report = JSON.parse(run.stdout) as { outcome: string; headline: string; counts: Record<string, number> };
      assert.equal(report.outcome, 'clean');
      assert.equal(report.headline, 'No issues found by 1 reviewer');
      assert.deepEqual(report.counts, { found: 1, verified: 0, refuted: 1, unverified: 0 });
      const prompts = (server: ScriptedModelServer) => server.rounds.map((r) => r.view?.lastUser.text ?? '');
      assert.equal(prompts(model!).filter((text) => text.includes(VERIFIER_MARK)).length, 0);
      assert.equal(prompts(verifierModel).filter((text) => text.includes(VERIFIER_MARK)).length, 1);
      assert.equal(prompts(verifierModel).filter((text) => text.includes(FINDER_MARK)).length, 0);
      const usage = await runCli(['--verifier', `acp:${CLAUDE_ADAPTER}`, '--claude'], repo.root, env);
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /--verifier checks what finders found: name them with --agent or --server/);
    } finally {
      await verifierModel.close();
    }
  });

  it('no findings: exit 0 and "No issues found"', async () => {
    const env = await agentEnv(() => json({ findings: [] }));
    const run = await runCli(['--agent', `acp:${CLAUDE_ADAPTER}`, '--finders', '2', '--staged'], repo.root, env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^No issues found by 2 reviewers$/m);
  });

  it('every finder failing is exit 2 with the reason, never a clean pass', async () => {
    const env = await agentEnv(() => ({ text: 'LGTM' }));
    const run = await runCli(['--agent', `acp:${CLAUDE_ADAPTER}`, '--finders', '1', '--staged', '--fail-on', 'nit'], repo.root, env);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stdout, /^The review failed: Claude \(ACP\) #1 failed: its reply is not JSON \(it began "LGTM"\)$/m);
  });

  it("Claude Code's review: billed notice first; its {error} payload is exit 2; its findings count against --fail-on", async () => {
    const env = {
      ...process.env,
      STANDIN_ULTRAREVIEW: JSON.stringify({ kind: 'error', error: 'cloud session was archived before producing output' }),
    };
    const failed = await runCli(['--claude', '--claude-command', STAND_IN, '--trust-workspace', '--base', 'main'], repo.root, env);
    assert.equal(failed.code, 2);
    assert.match(failed.stderr.split('\n')[0]!, /billed|bills/);
    assert.match(failed.stdout, /Claude Code ultrareview failed: cloud session was archived/);
    const findings = [{ file_path: 'src/login.ts', start_line: 2, end_line: 2, severity: 'nit', pr_comment: 'Token in the log' }];
    const found = await runCli(['--claude', '--claude-command', STAND_IN, '--trust-workspace', '--fail-on', 'minor'], repo.root, {
      ...process.env,
      STANDIN_ULTRAREVIEW: JSON.stringify({ kind: 'findings', findings }),
    });
    assert.equal(found.code, 0, found.stderr);
    assert.match(found.stdout, /\[nit\] src\/login\.ts:2-2 {2}Token in the log/);
  });

  it('wrong use and an empty scope are exit 2 with what to do', async () => {
    const usage = await runCli(['--agent', 'acp:claude', '--fail-on', 'blocker'], repo.root, process.env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--fail-on takes one of critical, major, minor, nit/);
    const unknown = await runCli(['--frobnicate'], repo.root, process.env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--help/);
    const outside = await runCli(['--claude', '--claude-command', STAND_IN, '--range', 'main..main'], repo.root, process.env);
    assert.equal(outside.code, 2);
    assert.match(outside.stdout, /nothing to review in commits main\.\.main/);
  });
});

// Claude Code's review through a stand-in built strictly from the 2.1.332 client's output code
// (test/support/review/claudeUltrareviewStandIn.mjs): the real child process, its stdout, stderr
// and exit code mapped into outcomes.
import { strict as assert } from 'node:assert';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runClaudeReview as runClaude } from '../../../src/client/review/claudeReviewRun';
import { reviewOutcome } from '../../../src/client/review/fleet';
import { outcomeHeadline } from '../../../src/core/review/outcome';

const STAND_IN = path.resolve(__dirname, '..', '..', 'support', 'review', 'claudeUltrareviewStandIn.mjs');

describe("Claude Code's review (claude ultrareview --json), through its stand-in", function () {
  this.timeout(30_000);
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ultraplan-claude-review-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function run(scenario: unknown, extra: Partial<Parameters<typeof runClaude>[0]> = {}) {
    const result = await runClaude({
      command: [process.execPath, STAND_IN],
      cwd: dir,
      scope: { kind: 'branch', base: 'main', includeUntracked: false },
      trusted: true,
      signal: new AbortController().signal,
      env: { ...process.env, STANDIN_ULTRAREVIEW: JSON.stringify(scenario), STANDIN_CALLS: path.join(dir, 'calls.jsonl') },
      ...extra,
    });
    return reviewOutcome(result.findings, [result.reviewer], result.cancelled);
  }

  async function calls(): Promise<string[][]> {
    return (await readFile(path.join(dir, 'calls.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { argv: string[] }).argv);
  }

  it('maps its findings and passes the base, --json, --no-post and --trust-workspace (with nothing after it)', async () => {
    const outcome = await run({
      kind: 'findings',
      findings: [
        {
          file_path: 'src/app.ts',
          start_line: 3,
          end_line: 3,
          severity: 'normal',
          pr_comment: 'Loop reads past the end\n\nUse < instead of <=.',
          reasoning: 'items[items.length] is undefined',
        },
      ],
    });
    assert.equal(outcome.kind, 'findings');
    assert.equal(outcomeHeadline(outcome), '1 issue found by 1 reviewer');
    assert.deepEqual(await calls(), [['ultrareview', 'main', '--json', '--no-post', '--trust-workspace']]);
  });

  it('an empty list is "No issues found", distinct from an {error} payload, which names the reason', async () => {
    const clean = await run({ kind: 'empty' });
    assert.equal(outcomeHeadline(clean), 'No issues found by 1 reviewer');
    const failed = await run({ kind: 'error', error: 'cloud session was archived before producing output' });
    assert.equal(failed.kind, 'failed');
    assert.equal(
      outcomeHeadline(failed),
      'The review failed: Claude Code ultrareview failed: cloud session was archived before producing output',
    );
  });

  it("a launch failure and an untrusted folder are failures with Claude's own words", async () => {
    const launch = await run({ kind: 'launch_failed', message: 'You are not logged in. Run claude auth login.' });
    assert.match(outcomeHeadline(launch), /exited with 1: Ultrareview could not launch: You are not logged in/);
    const untrusted = await run({ kind: 'empty' }, { trusted: false });
    assert.match(outcomeHeadline(untrusted), /this folder is not trusted/);
  });

  it("staged changes are not something Claude's review takes; a missing claude says it is not installed", async () => {
    const staged = await run({ kind: 'empty' }, { scope: { kind: 'staged' } });
    assert.match(outcomeHeadline(staged), /looks at a branch or a pull request, not staged changes/);
    const missing = await run({ kind: 'empty' }, { command: [path.join(dir, 'no-such-claude')] });
    assert.match(outcomeHeadline(missing), /Claude Code is not installed/);
  });

  it('a cancel ends the process and the outcome is cancelled', async () => {
    const abort = new AbortController();
    const running = run({ kind: 'empty', delayMs: 60_000 }, { signal: abort.signal });
    setTimeout(() => abort.abort(), 500);
    const outcome = await running;
    assert.equal(outcome.kind, 'cancelled');
  });
});

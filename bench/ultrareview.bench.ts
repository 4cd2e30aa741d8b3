// The review pipeline's own cost, without model time, for a 2,000-line change: the change read from
// a real git repository (branch commits plus uncommitted work), the fleet dispatched (3 finders and
// one verifier run per finding, through the real SessionHost and InProcessBackend, with an
// in-process agent that answers at once), the findings merged, and each painted as a thread's
// content (the code it anchors to, its re-anchoring, its markdown; VS Code's own comment widgets
// are not in this number). Baseline: `git diff` alone on the same change, the floor any review
// pays. Goal: the pipeline <= 1 s; memory retained after the run.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { anchorLines, reanchor } from '../src/core/review/anchor';
import { threadMarkdown } from '../src/core/review/threadText';
import type { Agent, AgentContext } from '../src/agents/agent';
import { InProcessBackend } from '../src/service/inProcessBackend';
import { SessionHost } from '../src/service/host/sessionHost';
import { reviewOutcome, runReviewFleet } from '../src/client/review/fleet';
import { collectChange } from '../src/client/review/gitChange';
import { collectGarbage, repeat, result, timeMs, type BenchResult } from './measure';

export const title = 'Ultrareview pipeline, 2,000-line change, 3 finders, 60 findings (no model time)';

export const FILES = 20;
export const LINES_PER_FILE = 100;
const FINDINGS_PER_FINDER = 20;
const RUNS = 5;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@e', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@e' },
  });
}

/** main with 20 small files; a branch adding 50 lines to each (committed) and 50 more uncommitted. */
export function makeRepo(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'ultraplan-bench-review-'));
  git(root, 'init', '-q', '-b', 'main');
  const lines = (file: number, from: number, count: number) =>
    Array.from({ length: count }, (_, i) => `export const v${file}_${from + i} = ${from + i} * 2; // line ${from + i}`);
  mkdirSync(path.join(root, 'src'));
  for (let f = 0; f < FILES; f++) writeFileSync(path.join(root, 'src', `m${f}.ts`), `// module ${f}\n`);
  git(root, 'add', '.');
  git(root, 'commit', '-qm', 'base');
  git(root, 'checkout', '-qb', 'feature');
  for (let f = 0; f < FILES; f++)
    writeFileSync(path.join(root, 'src', `m${f}.ts`), [`// module ${f}`, ...lines(f, 0, LINES_PER_FILE / 2), ''].join('\n'));
  git(root, 'commit', '-qam', 'half');
  for (let f = 0; f < FILES; f++)
    writeFileSync(path.join(root, 'src', `m${f}.ts`), [`// module ${f}`, ...lines(f, 0, LINES_PER_FILE), ''].join('\n'));
  return root;
}

/** Answers a finder with its findings and a verifier with a verdict, at once: no model. */
class InstantReviewer implements Agent {
  readonly label = 'Instant reviewer';
  constructor(private readonly finder: number) {}
  async start(ctx: AgentContext, prompt: string): Promise<void> {
    const verifying = prompt.includes('Another reviewer reported');
    const findings = Array.from({ length: FINDINGS_PER_FINDER }, (_, i) => ({
      file: `src/m${i % FILES}.ts`,
      startLine: 2 + ((i * 7 + this.finder * 13) % LINES_PER_FILE),
      endLine: 2 + ((i * 7 + this.finder * 13) % LINES_PER_FILE),
      severity: i % 3 === 0 ? 'major' : 'minor',
      title: `Finding ${i} of finder ${this.finder}: doubled value overflows`,
      explanation: 'The product can exceed the safe integer range for large inputs.',
    }));
    const text = verifying
      ? '```json\n{"verdict": "confirmed", "reason": "It does."}\n```'
      : `\`\`\`json\n${JSON.stringify({ findings })}\n\`\`\``;
    ctx.emit({ type: 'result', subtype: 'success', is_error: false, num_turns: 1, result: text });
    ctx.setStatus('idle');
  }
  onUserMessage(): void {}
  onDecision(): void {}
  async stop(): Promise<void> {}
}

async function pipeline(root: string): Promise<number> {
  let started = 0;
  const host = new SessionHost({ agentFactory: () => new InstantReviewer(started++) });
  const backend = new InProcessBackend({ host, label: 'bench' });
  try {
    const change = await collectChange(root, { kind: 'branch', includeUntracked: false });
    const fleet = await runReviewFleet({
      change,
      sources: [{ label: 'Instant', backend }],
      finders: 3,
      signal: new AbortController().signal,
    });
    const outcome = reviewOutcome(fleet.raw, fleet.reviewers);
    if (outcome.kind !== 'findings' || change.size.changedLines !== FILES * LINES_PER_FILE)
      throw new Error(`unexpected: ${outcome.kind}, ${change.size.changedLines} lines`);
    let painted = 0;
    const files = new Map<string, string[]>();
    for (const finding of outcome.findings) {
      let lines = files.get(finding.file);
      if (!lines) files.set(finding.file, (lines = readFileSync(path.join(change.root, finding.file), 'utf8').split('\n')));
      const anchor = anchorLines(lines, finding.startLine, finding.endLine);
      if (reanchor(anchor, finding.startLine, lines).kind === 'at' && threadMarkdown(finding, (t) => t).length > 0) painted++;
    }
    if (painted !== outcome.findings.length) throw new Error(`painted ${painted} of ${outcome.findings.length}`);
    return outcome.findings.length;
  } finally {
    await backend.dispose();
  }
}

export async function run(): Promise<BenchResult[]> {
  const root = makeRepo();
  try {
    const gitDiff = await repeat(RUNS, () => timeMs(() => git(root, 'diff', '--no-renames', 'main')), 1);
    const whole = await repeat(RUNS, () => timeMs(() => pipeline(root)), 1);
    const retained = await repeat(3, async () => {
      collectGarbage();
      const before = process.memoryUsage().heapUsed;
      await pipeline(root);
      collectGarbage();
      return (process.memoryUsage().heapUsed - before) / 1024 / 1024;
    });
    const peak = await repeat(3, async () => {
      collectGarbage();
      const before = process.memoryUsage().heapUsed;
      let high = before;
      const timer = setInterval(() => (high = Math.max(high, process.memoryUsage().heapUsed)), 1);
      await pipeline(root);
      clearInterval(timer);
      return (Math.max(high, process.memoryUsage().heapUsed) - before) / 1024 / 1024;
    });
    return [
      result('git diff alone (baseline)', 'ms', 'lower', gitDiff, { note: `${FILES * LINES_PER_FILE} changed lines in ${FILES} files` }),
      result('diff → fleet dispatch → findings painted', 'ms', 'lower', whole, {
        baseline: 'git diff alone (baseline)',
        note: `git calls, 3 finder + 60 verifier sessions on the real host, merge, anchors; goal <= 1000 ms`,
      }),
      result('heap retained after a review', 'MB', 'lower', retained),
      result('heap peak during a review', 'MB', 'lower', peak, { note: 'sampled every 1 ms' }),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

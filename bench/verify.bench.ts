// Verification against the plan, its own cost without model time (issue 29: <= 1 s for a 2,000-line
// diff and a 30-step plan): the change since a revision read from a real git repository, the
// plan's steps read, 3 finder runs and one verifier run per claimed gap and out-of-plan change
// dispatched through the real SessionHost and InProcessBackend to an in-process agent that answers
// at once, the verdicts merged and the outcome decided. Baseline: `git diff` alone on the same change.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { Agent, AgentContext } from '../src/agents/agent';
import { InProcessBackend } from '../src/service/inProcessBackend';
import { SessionHost } from '../src/service/host/sessionHost';
import { collectChange } from '../src/client/review/gitChange';
import { verifyAgainstPlan } from '../src/client/review/verifyAgainstPlan';
import { verificationExitCode } from '../src/core/execution/verificationOutcome';
import { repeat, result, timeMs, type BenchResult } from './measure';
import { FILES, LINES_PER_FILE, makeRepo } from './ultrareview.bench';

export const title = 'Verify against the plan: 2,000-line change, 30-step plan, 3 finders (no model time)';

const PHASES = 3;
const STEPS_PER_PHASE = 10;
const RUNS = 5;

/** Three phases of ten steps, each naming one of the changed modules, with a sub-item. */
function plan(): string {
  const lines = ['# Plan: double every value', '', '## Context', '- the modules under src/', ''];
  for (let p = 0; p < PHASES; p++) {
    lines.push(`## Phase ${p + 1}`, '');
    for (let i = 0; i < STEPS_PER_PHASE; i++)
      lines.push(`${i + 1}. Add the doubled values to src/m${(p * STEPS_PER_PHASE + i) % FILES}.ts`, '    - one export a line');
    lines.push('');
  }
  return lines.join('\n');
}

const STEP_IDS = Array.from({ length: PHASES * STEPS_PER_PHASE }, (_, n) => `phase-${Math.floor(n / STEPS_PER_PHASE) + 1}/${(n % 10) + 1}`);

/** Every finder: 30 verdicts (3 missing, 2 done differently) and 5 out-of-plan changes; every verifier confirms. */
class InstantVerifier implements Agent {
  readonly label = 'Instant verifier';
  async start(ctx: AgentContext, prompt: string): Promise<void> {
    const reply = prompt.startsWith('A person approved the plan below')
      ? {
          steps: STEP_IDS.map((stepId, n) => ({
            stepId,
            verdict: n % 10 === 3 ? 'missing' : n % 15 === 7 ? 'done_differently' : 'done',
            explanation: `Step ${stepId} judged from src/m${n % FILES}.ts.`,
            ...(n % 15 === 7 && n % 10 !== 3 ? { difference: 'It triples instead.' } : {}),
            evidence: [{ file: `src/m${n % FILES}.ts`, startLine: 2, endLine: 51 }],
          })),
          outOfPlan: Array.from({ length: 5 }, (_, i) => ({
            file: `src/m${i}.ts`,
            startLine: 60 + i,
            endLine: 70 + i,
            explanation: `Adds logging ${i}; no step asks for it.`,
          })),
        }
      : { verdict: 'confirmed', reason: 'It holds.' };
    ctx.emit({ type: 'result', subtype: 'success', is_error: false, num_turns: 1, result: `\`\`\`json\n${JSON.stringify(reply)}\n\`\`\`` });
    ctx.setStatus('idle');
  }
  onUserMessage(): void {}
  onDecision(): void {}
  async stop(): Promise<void> {}
}

async function pipeline(root: string, text: string): Promise<void> {
  const backend = new InProcessBackend({ host: new SessionHost({ agentFactory: () => new InstantVerifier() }), label: 'bench' });
  try {
    const change = await collectChange(root, { kind: 'since', rev: 'main', includeUntracked: false });
    const { outcome } = await verifyAgainstPlan({
      plan: text,
      change,
      sources: [{ label: 'Instant', backend }],
      finders: 3,
      signal: new AbortController().signal,
    });
    if (outcome.kind !== 'verified' || outcome.steps.length !== STEP_IDS.length || verificationExitCode(outcome) !== 1)
      throw new Error(`unexpected: ${outcome.kind}`);
    if (change.size.changedLines !== FILES * LINES_PER_FILE) throw new Error(`${change.size.changedLines} lines`);
  } finally {
    await backend.dispose();
  }
}

export async function run(): Promise<BenchResult[]> {
  const root = makeRepo();
  const text = plan();
  try {
    const gitDiff = await repeat(RUNS, () => timeMs(() => execFileSync('git', ['diff', '--no-renames', 'main'], { cwd: root })), 1);
    const whole = await repeat(RUNS, () => timeMs(() => pipeline(root, text)), 1);
    return [
      result('git diff alone (baseline)', 'ms', 'lower', gitDiff, { note: `${FILES * LINES_PER_FILE} changed lines in ${FILES} files` }),
      result('diff → plan steps → finders → verifiers → outcome', 'ms', 'lower', whole, {
        baseline: 'git diff alone (baseline)',
        note: '30 steps; 3 finder + 30 verifier sessions (5 gaps and 5 out-of-plan changes from each finder) on the real host; goal <= 1000 ms',
      }),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

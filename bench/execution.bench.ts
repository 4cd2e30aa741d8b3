// The execution checklist's cost (docs/execution.md): reading a 400-step approved plan into steps
// and folding 2,000 todo updates onto it, against markdown-it's parse of the same text alone.
import MarkdownIt from 'markdown-it';
import { buildChecklist, ChecklistFold, readPlanSteps, StepMatcher, type ProgressFact } from '../src/core/execution';
import { repeat, result, timeMs, type BenchResult } from './measure';

export const title = 'Plan steps + todo matching: 400 steps, 2,000 todo updates';

const PHASES = 40;
const ITEMS = 10;
const UPDATES = 2_000;
const RUNS = 7;
/** Runs before the measured ones: this size of fold takes about four before V8's optimising tier settles (cold: 120 ms, then 30-45 ms). */
const WARMUP = 5;

const VERBS = ['Add', 'Wire', 'Remove', 'Document', 'Test', 'Rename', 'Split', 'Cache', 'Validate', 'Migrate'];
const NOUNS = [
  'loader',
  'session store',
  'webview panel',
  'todo matcher',
  'plan parser',
  'status bar',
  'journal',
  'token cache',
  'review fleet',
  'inbox',
];

/** A deterministic plan: 40 phases of 10 steps, each with two sub-items and a code block. */
export function bigPlan(): { text: string; stepTexts: string[] } {
  const lines = ['# Plan: a long refactor', '', '## Context', '- background that is not a step', ''];
  const stepTexts: string[] = [];
  for (let p = 0; p < PHASES; p++) {
    lines.push(`## Phase ${p + 1}: ${NOUNS[p % NOUNS.length]} work ${p}`, '');
    for (let i = 0; i < ITEMS; i++) {
      const text = `${VERBS[(p + i) % VERBS.length]} the ${NOUNS[i]} for area${p}x${i} in module${p}`;
      stepTexts.push(text);
      lines.push(`${i + 1}. ${text}`, `    - update src/area${p}/file${i}.ts`, `    - cover it in test/area${p}/file${i}.test.ts`);
    }
    lines.push('', '```ts', `export const phase${p} = ${p};`, '- not a step', '```', '');
  }
  return { text: lines.join('\n'), stepTexts };
}

/** 2,000 updates: a 12-entry todo list sliding along the plan, one status change per update. */
export function updates(stepTexts: string[]): ProgressFact[] {
  const facts: ProgressFact[] = [];
  for (let u = 0; u < UPDATES; u++) {
    const head = Math.floor((u / UPDATES) * (stepTexts.length - 12));
    const entries = Array.from({ length: 12 }, (_, k) => ({
      // Paraphrased: the agent's words, not the plan's.
      content: `${stepTexts[head + k]!.replace(/^(\w+) the /, '$1 ')} (${k % 3 === 0 ? 'and tests' : 'now'})`,
      status: k < 4 ? ('completed' as const) : k === 4 ? ('in_progress' as const) : ('pending' as const),
    }));
    facts.push({ kind: 'todos', seq: 2 * u, at: '2026-12-03T10:00:00.000Z', source: 'todo_write', entries });
    facts.push({ kind: 'file_touched', seq: 2 * u + 1, at: '2026-12-03T10:00:00.000Z', path: `src/f${u % 50}.ts`, tool: 'Edit' });
  }
  return facts;
}

export async function run(): Promise<BenchResult[]> {
  const { text, stepTexts } = bigPlan();
  const facts = updates(stepTexts);
  const md = new MarkdownIt({ html: false });
  let steps = 0;
  const parseOnly = await repeat(RUNS, () => timeMs(() => md.parse(text, {})), WARMUP);
  const readOnly = await repeat(RUNS, () => timeMs(() => (steps = readPlanSteps(text).steps.length)), WARMUP);
  const all = await repeat(
    RUNS,
    () =>
      timeMs(() => {
        const outline = readPlanSteps(text);
        const checklist = buildChecklist(outline, new StepMatcher(outline), facts);
        if (checklist.counts.done === 0) throw new Error('nothing matched');
      }),
    WARMUP,
  );
  // What the issue bounds (20 ms): matching and the checklist for an outline already read, as the
  // session model does it: one fact at a time, a checklist after each (each snapshot reads one).
  const outline = readPlanSteps(text);
  const folded = await repeat(
    RUNS,
    () =>
      timeMs(() => {
        const fold = new ChecklistFold(outline, new StepMatcher(outline));
        for (const fact of facts) {
          fold.add(fact);
          if (fold.checklist.counts.total !== steps) throw new Error('lost steps');
        }
        if (fold.checklist.counts.done === 0) throw new Error('nothing matched');
      }),
    WARMUP,
  );
  // The same work in this process's CPU time: on a shared machine the wall clock also counts the
  // time other processes held the cores, which the CPU time leaves out.
  const foldedCpu = await repeat(
    RUNS,
    () => {
      const start = process.cpuUsage();
      const fold = new ChecklistFold(outline, new StepMatcher(outline));
      for (const fact of facts) {
        fold.add(fact);
        if (fold.checklist.counts.total !== steps) throw new Error('lost steps');
      }
      const used = process.cpuUsage(start);
      return (used.user + used.system) / 1000;
    },
    WARMUP,
  );
  if (steps !== PHASES * ITEMS) throw new Error(`read ${steps} steps, expected ${PHASES * ITEMS}`);
  const note = `${text.split('\n').length} lines, ${steps} steps, ${UPDATES} todo snapshots of 12 entries + ${UPDATES} file touches`;
  return [
    result('markdown-it parse alone', 'ms', 'lower', parseOnly, { note }),
    result('read steps', 'ms', 'lower', readOnly, { baseline: 'markdown-it parse alone' }),
    result('read steps + match + checklist', 'ms', 'lower', all, { baseline: 'markdown-it parse alone' }),
    result('match + checklist after each fact (outline read)', 'ms', 'lower', folded, { note: 'the issue bounds this at 20 ms' }),
    result('the same, CPU time of this process', 'ms', 'lower', foldedCpu, {
      note: "user + system CPU: what the machine's load does not add",
    }),
  ];
}

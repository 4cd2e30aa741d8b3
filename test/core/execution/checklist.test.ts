import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SystemEventSchema } from '../../../src/core/protocol';
import { planHash } from '../../../src/core/decision';
import {
  buildChecklist,
  ChecklistFold,
  checklistSummary,
  progressEvent,
  progressFacts,
  readPlanSteps,
  StepMatcher,
  type ProgressFact,
  type TodoEntry,
} from '../../../src/core/execution';

const plan = readFileSync(path.resolve(__dirname, '../../fixtures/plans/gemini-conductor-lxc.md'), 'utf8');
const outline = readPlanSteps(plan);
const at = '2026-12-03T10:00:00.000Z';
let seq = 0;
const todos = (...entries: Array<[string, TodoEntry['status']]>): ProgressFact => ({
  kind: 'todos',
  seq: seq++,
  at,
  source: 'acp_plan',
  entries: entries.map(([content, status]) => ({ content, status })),
});
const touch = (file: string, todo?: string): ProgressFact => ({
  kind: 'file_touched',
  seq: seq++,
  at,
  path: file,
  tool: 'Edit',
  ...(todo ? { todo } : {}),
});

const RESEARCH = 'Research Proxmox API for node listing and architecture detection';
const SCRIPT = 'Create scripts/lxc_create.sh from the workflow template';
const TASK = 'Add lxc:create task to Taskfile';
const README = 'Update the README';

describe('execution/checklist: progress mapped onto the approved plan', () => {
  it('folds todo snapshots into step statuses, keeps a finished todo after it leaves the list, and lists todos not in the plan', () => {
    const facts = [
      todos([RESEARCH, 'in_progress'], [SCRIPT, 'pending']),
      todos([RESEARCH, 'completed'], [SCRIPT, 'in_progress'], [README, 'pending']),
      // The agent replaced its list for the next phase: the research todo is gone, still done.
      todos([SCRIPT, 'completed'], [TASK, 'in_progress'], [README, 'completed']),
    ];
    const checklist = buildChecklist(outline, new StepMatcher(outline), facts);
    const status = new Map(checklist.steps.map((s) => [s.id, s.status]));
    assert.equal(status.get('phase-1-research-scaffolding/1'), 'done');
    assert.equal(status.get('phase-1-research-scaffolding/2'), 'done');
    assert.equal(status.get('phase-1-research-scaffolding/3'), 'in_progress');
    assert.equal(status.get('phase-2-implementation-tdd/1'), 'not_reported');
    assert.deepEqual(checklist.notInPlan, [{ content: README, status: 'completed' }]);
    assert.equal(checklist.counts.done, 2);
    assert.equal(checklist.counts.total, outline.steps.length);
    assert.equal(checklistSummary(checklist, false), `Executing: 2 of ${outline.steps.length} steps done, 1 not in the plan`);
    assert.equal(checklistSummary(checklist, true), `Completed: 2 of ${outline.steps.length} steps reported done, 1 not in the plan`);
  });

  it('attributes a touched file to the step whose todo was in progress, else leaves it unattributed', () => {
    const facts = [
      todos([SCRIPT, 'in_progress'], [TASK, 'pending']),
      touch('scripts/lxc_create.sh'),
      touch('Taskfile.yml', TASK),
      todos([SCRIPT, 'in_progress'], [TASK, 'in_progress']),
      touch('docs/notes.md'),
      todos([README, 'in_progress']),
      touch('README.md'),
    ];
    const checklist = buildChecklist(outline, new StepMatcher(outline), facts);
    const files = new Map(checklist.steps.map((s) => [s.id, s.files]));
    assert.deepEqual(files.get('phase-1-research-scaffolding/2'), ['scripts/lxc_create.sh']);
    assert.deepEqual(files.get('phase-1-research-scaffolding/3'), ['Taskfile.yml']);
    assert.deepEqual(checklist.unattributedFiles, ['docs/notes.md', 'README.md']);
  });

  it('places a file no todo places under the step whose text names its path (an agent without a todo list), else leaves it unattributed', () => {
    const named = readPlanSteps(
      [
        '1. Create `src/greet.ts` exporting `greet(name)`.',
        '2. Export `greet` from `src/index.ts`.',
        '3. Add tests in test/greet.test.ts',
        '   - cover an empty name in `greet.test.ts`',
        '4. Mention it in README.md and in src/index.ts docs.',
        '5. Build the docs, and check `package.json`, also `package.json` scripts.',
      ].join('\n'),
    );
    const checklist = buildChecklist(named, new StepMatcher(named), [
      touch('src/greet.ts'),
      touch('src/index.ts'),
      touch('test/greet.test.ts'),
      touch('README.md'),
      touch('src/greet.tsx'),
      touch('lib/README.md'),
      touch('src/app.ts'),
      touch('src/greet.ts'),
    ]);
    assert.deepEqual(
      checklist.steps.map((step) => [step.id, step.status, step.files, step.namedFiles]),
      [
        ['1', 'not_reported', [], ['src/greet.ts']],
        ['2', 'not_reported', [], ['src/index.ts']],
        ['3', 'not_reported', [], ['test/greet.test.ts']],
        // Named by its path in step 4 and by its bare name nowhere else; lib/README.md by its name only.
        ['4', 'not_reported', [], ['src/index.ts', 'README.md', 'lib/README.md']],
        ['5', 'not_reported', [], []],
      ],
    );
    // src/greet.tsx is not src/greet.ts; nothing names src/app.ts.
    assert.deepEqual(checklist.unattributedFiles, ['src/greet.tsx', 'src/app.ts']);
    assert.equal(checklistSummary(checklist, true), 'Completed: 0 of 5 steps reported done', 'a named file is not a report of the step');
  });

  it("keeps a file a todo placed under that todo's step only, even when another step names it", () => {
    const named = readPlanSteps(['1. Create `src/greet.ts` with the greeting.', '2. Document `src/greet.ts` in the README.'].join('\n'));
    const checklist = buildChecklist(named, new StepMatcher(named), [
      todos(['Create src/greet.ts with the greeting', 'in_progress']),
      touch('src/greet.ts'),
    ]);
    assert.deepEqual(
      checklist.steps.map((step) => [step.files, step.namedFiles]),
      [
        [['src/greet.ts'], []],
        [[], []],
      ],
    );
  });

  it("takes an entry reported in progress by its activeForm and done by its content as one todo (Claude's adapter)", () => {
    const checklist = buildChecklist(outline, new StepMatcher(outline), [
      todos(['Creating scripts/lxc_create.sh from the workflow template', 'in_progress']),
      todos([SCRIPT, 'completed']),
    ]);
    const step = checklist.steps.find((s) => s.id === 'phase-1-research-scaffolding/2')!;
    assert.equal(step.status, 'done');
    assert.deepEqual(step.todos, ['Creating scripts/lxc_create.sh from the workflow template']);
  });

  it('folds one fact at a time: the same checklist while nothing changed, and the steps a fact did not touch keep their objects', () => {
    const fold = new ChecklistFold(outline, new StepMatcher(outline));
    fold.add(todos([RESEARCH, 'in_progress'], [SCRIPT, 'pending']));
    const first = fold.checklist;
    assert.equal(fold.checklist, first, 'no fact, the same object');
    fold.add(todos([RESEARCH, 'in_progress'], [SCRIPT, 'pending']));
    assert.equal(fold.checklist, first, 'a fact that changes nothing, the same object');
    fold.add(todos([RESEARCH, 'completed'], [SCRIPT, 'in_progress']));
    const second = fold.checklist;
    assert.notEqual(second, first);
    second.steps.forEach((step, i) => {
      const moved = step.id === 'phase-1-research-scaffolding/1' || step.id === 'phase-1-research-scaffolding/2';
      assert.equal(step === first.steps[i], !moved, step.id);
    });
    assert.equal(second.counts.done, 1);
    assert.equal(second.counts.in_progress, 1);
    assert.equal(second.counts.not_reported, outline.steps.length - 2);
    assert.deepEqual(
      second,
      buildChecklist(outline, new StepMatcher(outline), [
        todos([RESEARCH, 'in_progress'], [SCRIPT, 'pending']),
        todos([RESEARCH, 'completed'], [SCRIPT, 'in_progress']),
      ]),
    );
  });

  it('orders facts by seq, not by arrival', () => {
    const early = todos([SCRIPT, 'in_progress']);
    const late = todos([SCRIPT, 'completed']);
    const checklist = buildChecklist(outline, new StepMatcher(outline), [late, early]);
    assert.equal(checklist.steps.find((s) => s.id === 'phase-1-research-scaffolding/2')!.status, 'done');
  });

  it('wraps a fact as an ultraplan_progress system event bound to the plan hash, and reads back only that plan', () => {
    const fact = todos([SCRIPT, 'pending']);
    const event = progressEvent(planHash(plan), fact);
    assert.ok(SystemEventSchema.safeParse(event).success, 'a system event on the wire');
    const other = progressEvent(planHash('another plan'), fact);
    assert.deepEqual(progressFacts([{ type: 'assistant' }, other, event], planHash(plan)), [fact]);
    assert.throws(() => progressEvent(planHash(plan), { ...fact, entries: [{ content: '', status: 'pending' }] } as ProgressFact));
  });
});

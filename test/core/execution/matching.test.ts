import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MATCH_THRESHOLD, readPlanSteps, StepMatcher, dice, stem, wordSet } from '../../../src/core/execution';

const outlineOf = (name: string) => readPlanSteps(readFileSync(path.resolve(__dirname, '../../fixtures/plans', name), 'utf8'));

describe('execution/matching: todo entries matched to plan steps', () => {
  const lxc = outlineOf('gemini-conductor-lxc.md');

  it("matches a Gemini CLI agent's paraphrased todos to the Conductor plan's tasks", () => {
    const matcher = new StepMatcher(lxc);
    const expected: Array<[string, string | null]> = [
      ['Research Proxmox API for node listing and architecture detection', 'phase-1-research-scaffolding/1'],
      ['Create scripts/lxc_create.sh from the workflow template', 'phase-1-research-scaffolding/2'],
      ['Add lxc:create task to Taskfile', 'phase-1-research-scaffolding/3'],
      ['Write failing test for node selection', 'phase-2-implementation-tdd/1'],
      ['Implement node selection logic', 'phase-2-implementation-tdd/2'],
      ['Update the README', null],
      ['Run shellcheck on the script', null],
    ];
    for (const [todo, step] of expected) assert.equal(matcher.match(todo).nodeId, step, todo);
  });

  it('gives the same answers whatever order the todos come in, and for a new matcher', () => {
    const todos = ['Implement node selection logic', 'Write failing test for node selection', 'Add lxc:create task to Taskfile'];
    const first = todos.map((t) => new StepMatcher(lxc).match(t));
    const reordered = new StepMatcher(lxc);
    const second = [...todos]
      .reverse()
      .map((t) => reordered.match(t))
      .reverse();
    assert.deepEqual(second, first);
  });

  it('lets one todo cover merged steps, and a todo naming a whole phase cover all its tasks', () => {
    const matcher = new StepMatcher(lxc);
    assert.deepEqual(matcher.match('Implement node selection and architecture detection').stepIds, [
      'phase-2-implementation-tdd/2',
      'phase-2-implementation-tdd/4',
    ]);
    const phase = matcher.match('Implement post-creation setup');
    assert.equal(phase.nodeId, 'phase-3-implementation-post-creation-setup-tdd');
    assert.equal(phase.stepIds.length, 9);
  });

  it("matches Claude Code's TodoWrite entries to a plan-mode plan's batches", () => {
    const matcher = new StepMatcher(outlineOf('claude-plan-mode-perception.md'));
    assert.equal(matcher.match('Remove solana-agent from .mcp.json').nodeId, 'batch-4a-burn-solana-agent');
    assert.equal(
      matcher.match('Wire PerceptionRouter into the UnifiedOrchestrator').nodeId,
      'batch-4b-wire-perceptionrouter-to-unifiedorchestrator',
    );
    assert.deepEqual(matcher.match('Add recordOutcome feedback tracking to PerceptionRouter').stepIds, [
      'batch-4c-add-missing-mcp-routes-to-perceptionrouter/add-feedback-tracking',
    ]);
    assert.equal(
      matcher.match('Add smart conditional infrastructure scan to awaken.js').nodeId,
      'batch-4d-smart-conditional-infra-scan-at-sessionstart',
    );
    assert.equal(matcher.match('Fix flaky test in judge module').nodeId, null);
  });

  it("matches a Codex agent's plan entries to an ExecPlan's Progress milestones", () => {
    const matcher = new StepMatcher(outlineOf('codex-execplan-undo-redo.md'));
    assert.equal(matcher.match('Add undo/redo keyboard shortcuts and toolbar buttons').nodeId, 'progress/4');
    // An ExecPlan names each milestone twice (Progress and Plan of Work); the closer wording wins.
    const convert = matcher.match('Convert place/delete/duplicate actions to commands');
    assert.equal(convert.nodeId, 'plan-of-work/milestone-2-commands-for-place-delete-duplicate');
    assert.ok(convert.stepIds.length > 0);
  });

  it('normalises words: case, camelCase, plurals and -ing/-ed agree; filler words do not count', () => {
    assert.equal(stem('creating'), stem('created'));
    assert.equal(stem('files'), stem('file'));
    assert.equal(stem('entries'), stem('entry'));
    assert.deepEqual([...wordSet('Add the PerceptionRouter to step 2')].sort(), ['add', 'perception', 'router']);
    assert.equal(dice(wordSet('write tests'), wordSet('Writing the test')), 1);
    assert.equal(dice(new Set(), new Set(['a'])), 0);
  });

  it('cuts off words most nodes share without changing any match: a long plan scored against every node by Dice', () => {
    // 60 sections of 5 items, each with two sub-items: "test", "src" and "ts" are on most nodes.
    const lines: string[] = ['# Plan', ''];
    const verbs = ['Add', 'Wire', 'Remove', 'Document', 'Test'];
    for (let p = 0; p < 60; p++) {
      lines.push(`## Part ${p}: module${p} work`, '');
      for (let i = 0; i < 5; i++)
        lines.push(`${i + 1}. ${verbs[i]} the widget${i} for module${p}`, `    - update src/m${p}/w${i}.ts`, '    - cover it in test');
      lines.push('');
    }
    const outline = readPlanSteps(lines.join('\n'));
    const matcher = new StepMatcher(outline);
    const words = new Map(outline.nodes.map((n) => [n.id, wordSet(n.text)]));
    // Long todos with one common word are scored with the cut-off; short ones count every node.
    const todos = [
      'Add the widget0 handler for module3 with retries and a test',
      'Remove obsolete widget2 code paths in module12 tests',
      'Document widget3 options for module40 and its test',
      'Add widget0 for module3 and test it',
      'Test widget4 module59',
      'update src test ts',
      'Wire widget1 module7 src test',
      'Test everything',
    ];
    for (const todo of todos) {
      const t = wordSet(todo);
      let best: { id: string; score: number } | null = null;
      for (const node of outline.nodes) {
        const withChildren = new Set(words.get(node.id));
        for (const child of outline.nodes) if (child.parentId === node.id) for (const w of words.get(child.id)!) withChildren.add(w);
        const score = Math.max(dice(t, words.get(node.id)!), dice(t, withChildren));
        if (!best || score > best.score) best = { id: node.id, score };
      }
      const expected = best && best.score >= MATCH_THRESHOLD ? best.id : null;
      assert.equal(matcher.match(todo).nodeId, expected, todo);
    }
  });

  it('reads ASCII text (the fast path) into the same words as the Unicode rule, on every line of the real plans', () => {
    // The rule of docs/execution.md spelled out with Unicode classes only.
    const unicodeRule = (text: string): string[] => {
      const split = text.replace(/([\p{Ll}\p{Nd}])(\p{Lu})/gu, '$1 $2').replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2');
      const words = split
        .normalize('NFKD')
        .replace(/[\u0300-\u036f]/g, '')
        .toLowerCase()
        .split(/[^\p{L}\p{Nd}]+/u);
      // A single lower-case word is dropped by wordSet exactly when it is a filler word.
      return [...new Set(words.filter((w) => w.length >= 2 && wordSet(w).size > 0).map(stem))].sort();
    };
    const dir = path.resolve(__dirname, '../../fixtures/plans');
    const lines = readdirSync(dir).flatMap((name) => readFileSync(path.join(dir, name), 'utf8').split('\n'));
    lines.push('HTTPServer parseJSONBody XMLHttpRequest v2Api snake_case_name', 'Crème brûlée für Ärzte: naïveCafé', 'ÉTAPE Überprüfen');
    let ascii = 0;
    for (const line of lines) {
      if (/^[\x20-\x7e]*$/.test(line)) ascii++;
      assert.deepEqual([...wordSet(line)].sort(), unicodeRule(line), line);
    }
    assert.ok(ascii > 1_000, `${ascii} ASCII lines`);
  });

  it('answers the same for a todo read into its words (matchWords) as for its text', () => {
    const matcher = new StepMatcher(lxc);
    for (const todo of ['Implement node selection logic', 'Implement post-creation setup', 'Update the README', 'the to of']) {
      const fresh = new StepMatcher(lxc);
      assert.deepEqual(fresh.matchWords(wordSet(todo)), matcher.match(todo), todo);
    }
  });

  it("does not count a neighbour that only shares the todo's file names and identifiers as merged, but does a todo naming both", () => {
    const plan = [
      '# Plan',
      '',
      '1. Create `src/greet.ts` exporting `greet(name)`, which returns "Hello, NAME".',
      '2. Export `greet` from `src/index.ts`.',
      '3. Add a test for `greet` in `test/greet.test.ts`.',
      '4. Document `greet` in `README.md`.',
    ].join('\n');
    const matcher = new StepMatcher(readPlanSteps(plan));
    // Claude's adapter reports the in-progress entry by its activeForm: both forms are about step 1 only.
    assert.deepEqual(matcher.match('Creating src/greet.ts with greet(name)').stepIds, ['1']);
    assert.deepEqual(matcher.match('Create src/greet.ts with greet(name)').stepIds, ['1']);
    assert.deepEqual(matcher.match('Add the greet test and document greet in the README').stepIds, ['3', '4']);
  });
});

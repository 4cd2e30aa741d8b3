import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { readPlanSteps, sectionKind, type PlanOutline } from '../../../src/core/execution';

const fixture = (name: string): string => readFileSync(path.resolve(__dirname, '../../fixtures/plans', name), 'utf8');

/** 1-based line numbers inside fenced or indented code, found without markdown-it. */
function codeLines(text: string): Set<number> {
  const inside = new Set<number>();
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const open = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      inside.add(i + 1);
      if (open && open[1]![0] === fence[0] && open[1]!.length >= fence.length && line.trim() === open[1]) fence = undefined;
    } else if (open) {
      fence = open[1]!;
      inside.add(i + 1);
    }
  });
  return inside;
}

function assertWellFormed(outline: PlanOutline, text: string): void {
  const lines = text.split('\n');
  const ids = outline.nodes.map((n) => n.id);
  assert.equal(new Set(ids).size, ids.length, 'ids are unique');
  const code = codeLines(text);
  for (const node of outline.nodes) {
    assert.ok(node.startLine >= 1 && node.endLine >= node.startLine && node.endLine <= lines.length, `${node.id} has a range in the plan`);
    assert.ok(!code.has(node.startLine), `${node.id} (line ${node.startLine}) is not inside code`);
    const first = lines[node.startLine - 1]!;
    assert.match(first, node.kind === 'heading' ? /^\s{0,3}#{1,6}\s/ : /^\s*(?:[-*+]|\d+[.)])\s/, `${node.id} starts on its own line`);
    assert.ok(lines[node.endLine - 1]!.trim() !== '', `${node.id} ends on a non-blank line`);
  }
  assert.deepEqual(readPlanSteps(text), outline, 'the same text gives the same steps');
}

describe('execution/steps: an approved plan read into steps', () => {
  it('reads a Gemini CLI Conductor plan: phases group their tasks, sub-tasks count towards their task', () => {
    const text = fixture('gemini-conductor-agents-md.md');
    const outline = readPlanSteps(text);
    assertWellFormed(outline, text);
    assert.equal(outline.title, 'Implementation Plan - Migrate AGENTS.md to Conductor');
    assert.equal(outline.steps.length, 10);
    assert.equal(outline.nodes.filter((n) => n.role === 'group').length, 4);
    const first = outline.steps[0]!;
    assert.equal(first.id, 'phase-1-analysis-and-mapping-checkpoint-2c0acaf/1');
    assert.equal(first.title, 'Task: Analyze Root AGENTS.md 2c0acaf');
    assert.equal(first.checked, true);
    assert.deepEqual([first.startLine, first.endLine], [4, 6]);
    const subs = outline.nodes.filter((n) => n.parentId === first.id);
    assert.deepEqual(
      subs.map((n) => [n.id, n.role, n.stepId]),
      [
        ['phase-1-analysis-and-mapping-checkpoint-2c0acaf/1.1', 'sub', first.id],
        ['phase-1-analysis-and-mapping-checkpoint-2c0acaf/1.2', 'sub', first.id],
      ],
    );
  });

  it('reads a Claude Code plan-mode plan: batches are steps; Context, Files and Verification are not', () => {
    const text = fixture('claude-plan-mode-perception.md');
    const outline = readPlanSteps(text);
    assertWellFormed(outline, text);
    assert.deepEqual(
      outline.steps.map((s) => s.title),
      [
        'BATCH 4A: BURN solana-agent',
        'BATCH 4B: Wire PerceptionRouter to UnifiedOrchestrator',
        'Add Feedback Tracking',
        'BATCH 4D: Smart Conditional Infra Scan at SessionStart',
        'BATCH 4E: Rendre les External MCPs Routables',
      ],
    );
    const skipped = outline.skipped.map((s) => `${s.kind}:${s.title}`);
    for (const name of ['context:Context', 'context:Files', 'verification:Verification', 'context:Files Summary', 'context:Sequencing'])
      assert.ok(skipped.includes(name), name);
    // The section runs to the line before the next heading's separator, not into it.
    const batch4a = outline.steps[0]!;
    assert.deepEqual([batch4a.startLine, batch4a.endLine], [22, 35]);
  });

  it('reads a long Claude Code (superpowers) plan without turning its code blocks into steps', () => {
    const text = fixture('claude-superpowers-benchmark.md');
    assert.ok(text.split('\n').length > 400);
    const outline = readPlanSteps(text);
    assertWellFormed(outline, text);
    const task1 = outline.nodes.find((n) => n.title === 'Task 1: Create experiment directory and MANIFEST');
    assert.ok(task1 && task1.role === 'group');
    const task1Steps = outline.steps.filter((s) => s.parentId === task1.id).map((s) => s.title);
    assert.deepEqual(task1Steps, ['Step 1: Create MANIFEST.yaml', 'Step 2: Commit']);
    // "**Files:**" lists name files to touch; they are not steps.
    assert.ok(!outline.nodes.some((n) => n.title.startsWith('Create: ')));
    assert.ok(!outline.nodes.some((n) => /collect\.py$/.test(n.title)), 'YAML list items inside a fence are not steps');
  });

  it('reads Codex ExecPlans, short and long: Progress items are steps, the living-document sections are not', () => {
    for (const name of ['codex-execplan-undo-redo.md', 'codex-execplan-bootstrap.md']) {
      const text = fixture(name);
      const outline = readPlanSteps(text);
      assertWellFormed(outline, text);
      const progress = outline.nodes.find((n) => n.id === 'progress');
      assert.ok(progress, `${name}: Progress`);
      assert.ok(outline.steps.filter((s) => s.parentId === 'progress').length >= 5);
      const skipped = outline.skipped.map((s) => s.title);
      for (const name2 of ['Purpose / Big Picture', 'Decision Log', 'Surprises & Discoveries'])
        assert.ok(skipped.includes(name2), `${name}: ${name2}`);
    }
  });

  it('never takes steps from fenced (``` and ~~~) or indented code, tables or HTML', () => {
    const plan = [
      '## Changes',
      '',
      '```md',
      '- not a step',
      '1. nor this',
      '```',
      '',
      '~~~',
      '- nor this',
      '~~~',
      '',
      '    - indented code',
      '',
      '| step | what |',
      '| --- | --- |',
      '| 1 | - a cell |',
      '',
      '<ul><li>html</li></ul>',
      '',
      '- the only step',
    ].join('\n');
    const outline = readPlanSteps(plan);
    assert.deepEqual(
      outline.steps.map((s) => [s.title, s.startLine, s.endLine]),
      [['the only step', 20, 20]],
    );
  });

  it('numbers nested items under their step ("2.1") and items outside any heading from the top ("1")', () => {
    const plan = ['1. first', '2. second', '   1. inner one', '   2. inner two', '      - deeper', '3. third'].join('\n');
    const outline = readPlanSteps(plan);
    assert.deepEqual(
      outline.nodes.map((n) => [n.id, n.role, n.stepId, n.startLine, n.endLine]),
      [
        ['1', 'step', '1', 1, 1],
        ['2', 'step', '2', 2, 5],
        ['2.1', 'sub', '2', 3, 3],
        ['2.2', 'sub', '2', 4, 5],
        ['2.2.1', 'sub', '2', 5, 5],
        ['3', 'step', '3', 6, 6],
      ],
    );
  });

  it('uses the headings when a plan has no lists, and keeps sibling ids unique', () => {
    const plan = [
      '# Plan: cache',
      '',
      '## Add the cache',
      'text',
      '',
      '## Add the cache',
      'again',
      '',
      '## Verification',
      '- run the tests',
    ].join('\n');
    const outline = readPlanSteps(plan);
    assert.equal(outline.title, 'Plan: cache');
    assert.deepEqual(
      outline.steps.map((s) => [s.id, s.startLine, s.endLine]),
      [
        ['add-the-cache', 3, 4],
        ['add-the-cache-2', 6, 7],
      ],
    );
    assert.deepEqual(outline.skipped, [{ title: 'Verification', kind: 'verification', startLine: 9, endLine: 10 }]);
  });

  it('skips a list labelled as files or notes, keeps one labelled as work', () => {
    const plan = ['## Do it', '**Files:**', '- src/a.ts', '', 'Then, in order:', '- write a.ts', '', 'Notes:', '- keep it small'].join(
      '\n',
    );
    assert.deepEqual(
      readPlanSteps(plan).steps.map((s) => s.title),
      ['write a.ts'],
    );
  });

  it('classifies headings by their words, whole', () => {
    assert.equal(sectionKind('Context'), 'context');
    assert.equal(sectionKind('Date: 2026-02-04'), 'context');
    assert.equal(sectionKind('Task 2 exit criteria'), 'verification');
    assert.equal(sectionKind('Validation and Acceptance'), 'verification');
    assert.equal(sectionKind('Add a context menu'), 'work');
    assert.equal(sectionKind('Phase 1: Files'), 'work');
  });
});

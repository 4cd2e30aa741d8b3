import { strict as assert } from 'node:assert';
import { parse } from 'yaml';
import { readPlanSteps } from '../../src/core/execution/steps';
import { planOfFile } from '../../src/core/planFile';
import { planFileText, type SavedPlanFacts } from '../../src/core/planFrontMatter';

const PLAN = [
  '# Plan: Add a "changelog" --- with: colons',
  '',
  '1. Create `CHANGELOG.md` with the releases so far.',
  '2. [x] Link it from the README.',
  '   - Under "Docs".',
  '3. Add a check that each release has an entry.',
  '',
].join('\n');

const FACTS: SavedPlanFacts = {
  sessionId: 'session_01ABC',
  revision: 2,
  planHash: 'ab'.repeat(32),
  agent: 'Claude (ACP)',
  backend: 'Embedded',
  decision: 'teleported',
  decidedAt: '2026-12-03T20:00:00.000Z',
};

describe('planFileText: a saved plan with the front matter editors read', () => {
  it('is valid YAML front matter with the plan as todos and our facts, then the plan unchanged', () => {
    const text = planFileText(PLAN, FACTS, readPlanSteps(PLAN));
    const [, yamlText] = /^---\n([\s\S]*?)\n---\n\n/.exec(text) ?? [];
    assert.ok(yamlText, text);
    const front = parse(yamlText) as Record<string, unknown>;
    assert.equal(front.name, 'Plan: Add a "changelog" --- with: colons');
    assert.deepEqual(front.todos, [
      { id: '1', content: 'Create CHANGELOG.md with the releases so far.', status: 'pending' },
      { id: '2', content: 'Link it from the README.', status: 'completed' },
      { id: '3', content: 'Add a check that each release has an entry.', status: 'pending' },
    ]);
    assert.deepEqual(front.ultraplan, {
      session: 'session_01ABC',
      revision: 2,
      planHash: `sha256:${'ab'.repeat(32)}`,
      agent: 'Claude (ACP)',
      backend: 'Embedded',
      decision: 'teleported',
      decidedAt: '2026-12-03T20:00:00.000Z',
    });
    assert.match(String(front.overview), /revision 2 of Ultraplan session session_01ABC, teleported/);
    assert.equal(planOfFile(text), PLAN);
  });

  it('keeps hostile text inside its strings: a newline, a "---" line and YAML syntax do not end the front matter', () => {
    const plan = '# x\n\n1. step\n';
    const text = planFileText(plan, { ...FACTS, agent: 'evil\n---\nname: injected\n"quote": [1' }, readPlanSteps(plan));
    const front = parse(/^---\n([\s\S]*?)\n---\n\n/.exec(text)![1]!) as { name: string; ultraplan: { agent: string } };
    assert.equal(front.name, 'x');
    assert.equal(front.ultraplan.agent, 'evil --- name: injected "quote": [1');
    assert.equal(planOfFile(text), plan);
  });

  it('leaves out what is not known, and reads a file without front matter as all plan', () => {
    const { revision: _r, agent: _a, ...bare } = FACTS;
    const text = planFileText('just text', bare);
    const front = parse(/^---\n([\s\S]*?)\n---\n\n/.exec(text)![1]!) as { todos?: unknown; ultraplan: Record<string, unknown> };
    assert.equal(front.todos, undefined);
    assert.deepEqual(Object.keys(front.ultraplan), ['session', 'planHash', 'backend', 'decision', 'decidedAt']);
    assert.equal(planOfFile(text), 'just text\n');
    assert.equal(planOfFile('# Old plan file\n\n1. x\n'), '# Old plan file\n\n1. x\n');
  });
});

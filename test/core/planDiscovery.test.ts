import { strict as assert } from 'node:assert';
import { newestPlans, planFolders, planTitle, type FoundPlan } from '../../src/core/planDiscovery';

const folderOf = (tool: string, includeHome = true, plansDirectory = 'docs/plans') => {
  const found = planFolders(plansDirectory, includeHome).find((f) => f.tool === tool);
  assert.ok(found, `no ${tool} folder`);
  return found;
};

describe('planDiscovery', () => {
  it("lists each tool's folder with the names its plans have, and nothing else", () => {
    const copilot = folderOf('copilot');
    assert.deepEqual(copilot.segments, ['.copilot', 'plans']);
    assert.ok(copilot.matches('plan-20260101-auth.md'));
    assert.ok(!copilot.matches('notes.md'), 'Copilot plans are plan-*.md');
    const cursor = folderOf('cursor');
    assert.ok(cursor.matches('refactor_auth_1a2b.plan.md'));
    assert.ok(!cursor.matches('README.md'));
    const air = folderOf('air');
    assert.ok(air.matches('login-flow.md'));
    assert.ok(!air.matches('login-flow.txt'));
    assert.ok(!air.matches('.hidden.md'));
    const own = folderOf('ultraplan');
    assert.deepEqual(own.segments, ['docs', 'plans']);
    assert.ok(own.matches('2026-12-03-add-changelog.plan.md'));
    assert.ok(!own.matches('2026-12-03-add-changelog.md'), 'only the saved *.plan.md');
    const claude = folderOf('claude');
    assert.equal(claude.base, 'home');
    assert.deepEqual(claude.segments, ['.claude', 'plans']);
    assert.ok(claude.matches('quiet-dancing-fox.md'));
  });

  it('never matches a name with a separator (a folder is listed, not walked)', () => {
    for (const folder of planFolders('docs/plans', true)) {
      assert.ok(!folder.matches('sub/plan-x.plan.md'), folder.tool);
      assert.ok(!folder.matches('..\\plan-x.plan.md'), folder.tool);
    }
  });

  it('leaves the home folder out when asked, and an absolute or empty plans directory out of the workspace folders', () => {
    assert.ok(!planFolders('docs/plans', false).some((f) => f.base === 'home'));
    assert.ok(!planFolders('/srv/plans', true).some((f) => f.tool === 'ultraplan'));
    assert.ok(!planFolders('C:\\plans', true).some((f) => f.tool === 'ultraplan'));
    assert.ok(!planFolders('  ', true).some((f) => f.tool === 'ultraplan' && f.segments.length === 0));
  });

  it('orders newest first, bounded, each file once', () => {
    const plan = (shownPath: string, mtime: number): FoundPlan => ({
      location: `file:///w/${shownPath}`,
      shownPath,
      tool: 'cursor',
      mtime,
    });
    const found = [plan('a.plan.md', 1), plan('b.plan.md', 3), plan('c.plan.md', 2), plan('b.plan.md', 3), plan('d.plan.md', 2)];
    assert.deepEqual(
      newestPlans(found).map((p) => p.shownPath),
      ['b.plan.md', 'c.plan.md', 'd.plan.md', 'a.plan.md'],
    );
    assert.deepEqual(
      newestPlans(found, 2).map((p) => p.shownPath),
      ['b.plan.md', 'c.plan.md'],
    );
  });

  it('titles a plan by its first heading, else its file name', () => {
    assert.equal(planTitle('intro\n\n## Add   rate limiting ##\n', 'x.plan.md'), 'Add rate limiting');
    assert.equal(planTitle('no heading', 'refactor-auth.plan.md'), 'refactor-auth');
    assert.equal(planTitle('# ' + 'a'.repeat(100), 'x.md').length, 80);
  });
});

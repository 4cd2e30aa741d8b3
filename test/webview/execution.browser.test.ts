// The approved plan's checklist in the review panel's webview, in real Chromium under the panel's
// CSP: each step's state as the agent reported it, the files under it (a click asks the host for
// the diff), the work no step names, and no decision bar or feedback box once the plan is
// approved. Needs a build (`npm run build`).
import * as assert from 'node:assert/strict';
import type { PanelExecution } from '../../src/core/panelMessages';
import { parseWebviewToHostMessage } from '../../src/core/panelMessages';
import { panelState, revision, type PanelPage, usePanelBrowser } from './panelPage';

const PLAN = '# Dark mode\n\n1. Add the dark mode toggle\n2. Store the theme setting\n3. Document the toggle\n4. Release it\n';

function execution(extra: Partial<PanelExecution> = {}): PanelExecution {
  const step = (n: number, title: string, status: PanelExecution['steps'][number]['status'], files: string[] = []) => ({
    id: String(n),
    title,
    status,
    startLine: n + 2,
    endLine: n + 2,
    todos: status === 'not_reported' ? [] : [title],
    files,
  });
  return {
    toolUseId: 'toolu_1',
    summary: 'Executing: 1 of 4 steps done, 1 not in the plan',
    finished: false,
    steps: [
      step(1, 'Add the dark mode toggle', 'done', ['src/toggle.ts', 'src/toggle.test.ts']),
      step(2, 'Store the theme setting', 'in_progress', ['src/settings.ts']),
      step(3, 'Document the toggle', 'pending'),
      step(4, 'Release it', 'not_reported'),
    ],
    notInPlan: [{ content: 'Refactor the theme loader', status: 'in_progress' }],
    unattributedFiles: ['package.json'],
    ...extra,
  };
}

describe('review panel webview: the approved plan as a checklist (Chromium)', function () {
  this.timeout(60_000);
  const panels = usePanelBrowser();
  let panel: PanelPage | undefined;

  const steps = (p: PanelPage) =>
    p.page.locator('.execution-step').evaluateAll((items) =>
      items.map((item) => ({
        status: (item as HTMLElement).dataset.status,
        label: item.querySelector('.execution-status')?.textContent,
        title: item.querySelector('.execution-title')?.textContent,
        files: [...item.querySelectorAll('.execution-files button')].map((b) => (b as HTMLElement).dataset.path),
      })),
    );

  it('shows no checklist while the plan waits for review, and the decision bar', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN)]));
    assert.equal(await panel.page.locator('.execution').isVisible(), false);
    assert.equal(await panel.page.locator('#feedback').isVisible(), true);
    assert.equal(await panel.page.getByRole('button', { name: 'Approve', exact: true }).isVisible(), true);
  });

  it('once approved: each step pending, in progress, done or not reported, with its files; no decision bar, no feedback box', async () => {
    panel = await panels.open();
    await panel.postState(
      panelState([revision(1, PLAN, { status: 'approved' })], { phase: 'executing', canDecide: false, execution: execution() }),
    );
    const { page } = panel;
    assert.equal(await page.locator('.execution').isVisible(), true);
    assert.equal(await page.locator('.execution-summary').textContent(), 'Executing: 1 of 4 steps done, 1 not in the plan');
    assert.deepEqual(await steps(panel), [
      { status: 'done', label: 'Done', title: 'Add the dark mode toggle', files: ['src/toggle.ts', 'src/toggle.test.ts'] },
      { status: 'in_progress', label: 'In progress', title: 'Store the theme setting', files: ['src/settings.ts'] },
      { status: 'pending', label: 'Pending', title: 'Document the toggle', files: [] },
      { status: 'not_reported', label: 'Not reported', title: 'Release it', files: [] },
    ]);
    assert.match((await page.locator('.execution-not-in-plan').textContent()) ?? '', /Refactor the theme loader \(in progress\)/);
    assert.equal(await page.locator('.execution-extra .execution-files button').textContent(), 'package.json');
    assert.equal(await page.locator('.decision').isVisible(), false, 'no decision bar on an approved plan');
    assert.equal(await page.locator('#feedback').isVisible(), false, 'no feedback box for Reject');
    assert.equal(await page.getByRole('button', { name: 'Approve', exact: true }).count(), 0);
    await panel.screenshot('execution-checklist');
  });

  it('asks the host for the diff of a file under a step', async () => {
    panel = await panels.open();
    await panel.postState(
      panelState([revision(1, PLAN, { status: 'approved' })], { phase: 'executing', canDecide: false, execution: execution() }),
    );
    const before = (await panel.posted()).length;
    await panel.page.getByRole('button', { name: 'src/settings.ts' }).click();
    const message = await panel.waitForPosted('openFileDiff', before);
    assert.deepEqual(message, { type: 'openFileDiff', sessionKey: 'embedded:sess_1', path: 'src/settings.ts' });
    assert.ok(parseWebviewToHostMessage(message).ok, 'the host takes it');
  });

  it("lists a file no todo placed under the step that names it, apart from the agent's own report", async () => {
    panel = await panels.open();
    const next = execution();
    next.steps[3] = { ...next.steps[3]!, namedFiles: ['CHANGELOG.md'] };
    await panel.postState(
      panelState([revision(1, PLAN, { status: 'approved' })], { phase: 'executing', canDecide: false, execution: next }),
    );
    const release = panel.page.locator('.execution-step[data-step-id="4"]');
    assert.equal(await release.getAttribute('data-status'), 'not_reported', 'a named file is no report of the step');
    assert.match(
      (await release.locator('.execution-named-note').textContent()) ?? '',
      /named by this step \(the agent did not report which step\)/,
    );
    assert.deepEqual(await release.getByRole('list', { name: 'Files named by Release it' }).locator('button').allTextContents(), [
      'CHANGELOG.md',
    ]);
    const before = (await panel.posted()).length;
    await release.getByRole('button', { name: 'CHANGELOG.md' }).click();
    assert.deepEqual(await panel.waitForPosted('openFileDiff', before), {
      type: 'openFileDiff',
      sessionKey: 'embedded:sess_1',
      path: 'CHANGELOG.md',
    });
    assert.equal(await panel.page.locator('.execution-step[data-step-id="3"] .execution-named-note').count(), 0);
  });

  it('redraws only the steps that changed, and says when the agent finished', async () => {
    panel = await panels.open();
    const approved = [revision(1, PLAN, { status: 'approved' as const })];
    await panel.postState(panelState(approved, { phase: 'executing', canDecide: false, execution: execution() }));
    const { page } = panel;
    await page.evaluate(() => document.querySelectorAll('.execution-step').forEach((item, i) => item.setAttribute('data-mark', String(i))));
    const next = execution({ summary: 'Completed: 2 of 4 steps reported done, 1 not in the plan', finished: true });
    next.steps[1] = { ...next.steps[1]!, status: 'done' };
    await panel.postState(panelState(approved, { phase: 'completed', canDecide: false, execution: next }));
    const marks = await page.locator('.execution-step').evaluateAll((items) => items.map((item) => item.getAttribute('data-mark')));
    assert.deepEqual(marks, ['0', null, '2', '3'], 'only the second step was rebuilt');
    assert.equal(await page.locator('.execution-step').nth(1).getAttribute('data-status'), 'done');
    assert.equal(await page.locator('.execution').getAttribute('data-finished'), 'true');
    assert.equal(await page.locator('.decision').isVisible(), false, 'no disabled decision bar left on a completed session');
  });
});

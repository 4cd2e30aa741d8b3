// The embedded backend with the shipped demo scenario, in real code-server + Chromium: labelled as
// a demo in the status bar tooltip and the panel; question -> reply -> plan; the session runs in
// the local session service, which outlives the window: after a reload the same service still
// has it and the loop goes on (reject, revision 2, approve, outcome).
import * as assert from 'node:assert/strict';
import { servicePids } from '../support/serviceProcess';
import { readStatusBar, screenshot, statusBarAriaLabel, waitFor } from './harness';
import { planTask, reviewFrame, revisionFrame, suiteWindow, writeReview, AFTER_RELOAD_MS } from './ultraplanSteps';

describe('embedded backend: the scripted demo, across a reload', function () {
  const suite = suiteWindow({
    suite: 'embedded-demo',
    settings: { 'ultraplan.backend': 'embedded', 'ultraplan.agent.choice': 'demo' },
  });

  it('labels the demo everywhere it shows and answers its question', async function () {
    const { page } = suite.window;
    await planTask(page, 'Add rate limiting to the public API', 'Ultraplan: needs input');
    assert.match(await statusBarAriaLabel(page, 'Ultraplan: needs input'), /Backend Embedded.*Demo \(scripted\)/);
    const frame = await reviewFrame(page, '.question');
    assert.match((await frame.locator('body').textContent()) ?? '', /Demo/);
    await frame.getByLabel('Your reply').fill('Per API key, with an in-memory fallback.');
    await frame.getByRole('button', { name: 'Reply', exact: true }).click();
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    await screenshot(page, 'demo-plan-ready');
  });

  it('re-attaches the embedded session after a reload, then reject -> revision 2 -> approve', async function () {
    const w = suite.window;
    const service = servicePids(w.server.serviceDir);
    assert.equal(service.length, 1, 'one session service runs the demo');
    await w.reload();
    assert.deepEqual(servicePids(w.server.serviceDir), service, 'the same service, untouched by the reload');
    await readStatusBar(w.page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    let frame = await reviewFrame(w.page, '#plan li', AFTER_RELOAD_MS);
    await waitFor(async () => ((await frame.getByRole('button', { name: 'Reject', exact: true }).isEnabled()) ? true : undefined), {
      timeoutMs: 20_000,
      message: 'the plan to be decidable after the reload',
    });
    await writeReview(frame, {
      line: 'Make the change in the fewest files',
      comment: 'Redis is not available locally',
      feedback: 'Add the in-memory fallback and make the limit configurable.',
    });
    await frame.getByRole('button', { name: 'Reject', exact: true }).click();
    frame = await revisionFrame(w.page, 'Revision 2 of 2', 30_000);
    await waitFor(async () => ((await frame.getByRole('button', { name: 'Approve', exact: true }).isEnabled()) ? true : undefined), {
      timeoutMs: 20_000,
      message: 'revision 2 to be decidable',
    });
    // The demo's revision takes the person's words in: the feedback, the line comment and the reply.
    const revised = (await frame.locator('#plan').textContent()) ?? '';
    assert.match(revised, /Add the in-memory fallback and make the limit configurable/);
    assert.match(revised, /Redis is not available locally/);
    assert.match(revised, /as you answered: Per API key, with an in-memory fallback/);
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();
    await readStatusBar(w.page, 'Ultraplan: approved · completed', { timeoutMs: 30_000 });
    const outcome = await reviewFrame(w.page, '.outcome');
    assert.match((await outcome.locator('.outcome').textContent()) ?? '', /the demo changes nothing/);
    await screenshot(w.page, 'demo-completed');
  });

  it('keeps the revisions, the feedback and the line comment of a finished session across another reload', async function () {
    const w = suite.window;
    await w.reload();
    await readStatusBar(w.page, 'Ultraplan: approved · completed', { timeoutMs: 30_000 });
    const frame = await reviewFrame(w.page, '.revision-label', AFTER_RELOAD_MS);
    await frame.getByRole('button', { name: 'Revision 1: rejected' }).click();
    assert.match((await frame.locator('.revision-feedback').textContent()) ?? '', /in-memory fallback/);
    assert.equal(await frame.locator('.comment-card .comment-text').textContent(), 'Redis is not available locally');
    await screenshot(w.page, 'demo-history-after-reload');
  });
});

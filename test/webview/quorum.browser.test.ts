// The quorum's line in the review panel's decision bar, in real Chromium under the panel's CSP:
// who approved and who is still needed; once this person's approval counts, Approve is off and
// says why, while Reject stays; once the quorum released a revision, who approved it. Needs a
// build (`npm run build`).
import * as assert from 'node:assert/strict';
import { panelState, revision, type PanelPage, usePanelBrowser } from './panelPage';

const PLAN = '# Add a dark mode toggle\n\n1. Add a `theme` field\n';
const SUMMARY = '1 of 2 approvals: alice; waiting for one more from platform-reviewers';

describe('review panel webview: approvals by a quorum (Chromium)', function () {
  this.timeout(60_000);
  const panels = usePanelBrowser();
  let panel: PanelPage | undefined;

  it('shows the summary; mine turns Approve off with its reason, Reject stays; without it the line goes', async () => {
    panel = await panels.open();
    const { page } = panel;
    const line = page.locator('.approval-quorum');
    const approve = page.locator('button[data-action="approve"]');
    await panel.postState(panelState([revision(1, PLAN)], { approval: { summary: SUMMARY, mine: false } }));
    assert.equal(await line.textContent(), SUMMARY);
    assert.equal(await approve.isEnabled(), true, "someone else's approval leaves mine to give");
    await panel.postState(panelState([revision(1, PLAN)], { approval: { summary: SUMMARY, mine: true } }));
    assert.equal(await line.textContent(), `Your approval is counted. ${SUMMARY}`);
    assert.equal(await approve.isEnabled(), false);
    assert.match((await approve.getAttribute('title')) ?? '', /waits for more approvals/);
    assert.equal(await page.locator('button[data-action="reject"]').isEnabled(), true);
    await panel.screenshot('quorum-waiting');
    await panel.postState(panelState([revision(1, PLAN)]));
    assert.equal(await line.isVisible(), false);
    assert.equal(await approve.isEnabled(), true);
    assert.equal(await approve.getAttribute('title'), null);
  });

  it('after the quorum released a revision, the header says who approved it, for that revision only', async () => {
    panel = await panels.open();
    const { page } = panel;
    const approvedBy = page.locator('.approved-by');
    const APPROVED = 'Approved by 2 of 2: alice@example.com, bob@example.com';
    const first = revision(1, PLAN, { status: 'rejected', feedback: 'Smaller steps' });
    const second = revision(2, `${PLAN}2. Wire it\n`, { status: 'approved', approvedBy: APPROVED });
    await panel.postState(panelState([first, second], { phase: 'executing', canDecide: false }));
    await approvedBy.waitFor({ state: 'visible' });
    assert.equal(await approvedBy.textContent(), APPROVED);
    assert.equal(await page.locator('.approval-quorum').isVisible(), false, 'the waiting count is gone');
    await page.locator('button[data-revision="1"]').click();
    assert.equal(await approvedBy.isVisible(), false, 'the rejected revision names no approvers');
    await page.locator('button[data-revision="2"]').click();
    assert.equal(await approvedBy.textContent(), APPROVED);
    await panel.postState(panelState([first, revision(2, `${PLAN}2. Wire it\n`, { status: 'approved' })], { phase: 'executing' }));
    assert.equal(await approvedBy.isVisible(), false, 'an approval without a quorum names nobody');
  });
});

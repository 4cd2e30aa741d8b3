// Approve with Notes in the review panel's webview, in real Chromium under the panel's CSP: the
// notes field (counted, bounded), Ctrl+Enter sends, Escape cancels without losing the text, the
// approve message carries the notes and the binding of the plan shown, the draft survives a
// reload, and a revision approved with notes says so. Needs a build (`npm run build`).
import * as assert from 'node:assert/strict';
import { PANEL_LIMITS, parseWebviewToHostMessage } from '../../src/core/panelMessages';
import { panelState, revision, type PanelPage, usePanelBrowser } from './panelPage';

const PLAN = '# Add a dark mode toggle\n\n1. Add a `theme` field to the settings store\n2. Render a switch\n';
const NOTES = 'Keep the settings file format unchanged.';

describe('review panel webview: Approve with Notes (Chromium)', function () {
  this.timeout(60_000);
  const panels = usePanelBrowser();
  let panel: PanelPage | undefined;

  const notesButton = (p: PanelPage) => p.page.getByRole('button', { name: 'Approve with Notes…' });
  const approvesSent = async (p: PanelPage) => (await p.posted()).filter((m) => m.type === 'approve');

  it('opens a counted notes field; Escape closes it keeping the text; Ctrl+Enter approves with the notes, bound to the plan shown', async () => {
    panel = await panels.open();
    const state = panelState([revision(1, PLAN)]);
    await panel.postState(state);
    const { page } = panel;
    const notes = page.locator('#approval-notes');
    assert.equal(await notes.isVisible(), false, 'closed until asked for');
    await notesButton(panel).click();
    assert.equal(await notes.isVisible(), true);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'approval-notes', 'the field has the focus');
    assert.equal(await notes.getAttribute('maxlength'), String(PANEL_LIMITS.notesChars));
    assert.match((await page.locator('.notes-count').textContent()) ?? '', /^0 \/ 2,000 characters/);
    await notes.pressSequentially('Keep it');
    assert.match((await page.locator('.notes-count').textContent()) ?? '', /^7 \/ 2,000 characters/);
    await notes.press('Escape');
    assert.equal(await notes.isVisible(), false, 'Escape closes the field');
    assert.deepEqual(await approvesSent(panel), [], 'Escape sends nothing');
    await notesButton(panel).click();
    assert.equal(await notes.inputValue(), 'Keep it', 'the text was kept');
    await notes.fill(NOTES);
    await panel.screenshot('approve-notes-open');
    await notes.press('Control+Enter');
    const approve = await panel.waitForPosted('approve');
    const parsed = parseWebviewToHostMessage(approve);
    assert.ok(parsed.ok, 'the message passes the host schema');
    assert.deepEqual(
      { ...approve, requestId: undefined },
      {
        type: 'approve',
        requestId: undefined,
        sessionKey: 'embedded:sess_1',
        binding: { sessionId: 'sess_1', toolUseId: 'toolu_1', planHash: state.revisions[0]?.planHash },
        notes: NOTES,
      },
    );
    assert.equal(await page.getByRole('button', { name: 'Approve', exact: true }).isEnabled(), false, 'locked until the answer');
    assert.equal(await notesButton(panel).isEnabled(), false);
    await panel.postRaw({ type: 'answer', requestId: approve.requestId, result: 'sent' });
    await panel.postState(panelState([revision(1, PLAN, { status: 'approved', notes: NOTES })], { phase: 'approved', canDecide: false }));
    assert.equal(await page.locator('.decision-status').textContent(), 'Revision 1 was approved with notes.');
    assert.equal((await page.locator('.revision-list button').textContent())?.trim(), 'Revision 1: approved with notes');
    assert.equal(await page.locator('.revision-feedback h2').textContent(), 'Approved with notes');
    assert.equal(await page.locator('.approval-notes-text').textContent(), NOTES);
    assert.equal(await notes.isVisible(), false);
    await panel.screenshot('approved-with-notes');
  });

  it('refuses blank notes and notes over 2,000 characters in the panel, sending nothing', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN)]));
    const { page } = panel;
    await notesButton(panel).click();
    const notes = page.locator('#approval-notes');
    await notes.fill('   ');
    await notes.press('Control+Enter');
    assert.match((await page.locator('.notice-local').textContent()) ?? '', /Write the notes for the agent first/);
    // maxlength stops typing past the bound; a value set otherwise (a paste script) is still refused.
    await notes.fill('n'.repeat(PANEL_LIMITS.notesChars + 5));
    assert.equal((await notes.inputValue()).length, PANEL_LIMITS.notesChars, 'typing stops at the bound');
    await notes.evaluate(
      (element, text) => {
        (element as HTMLTextAreaElement).value = text;
        element.dispatchEvent(new Event('input'));
      },
      'n'.repeat(PANEL_LIMITS.notesChars + 5),
    );
    await page.getByRole('button', { name: 'Approve with Notes', exact: true }).click();
    assert.match((await page.locator('.notice-local').textContent()) ?? '', /limited to 2,000 characters/);
    assert.equal(await page.locator('.notes-count.over').count(), 1, 'the counter shows the excess');
    assert.deepEqual(await approvesSent(panel), []);
    // Not decidable (a stale plan, or decided elsewhere): the button is disabled and the field closed.
    await panel.postState(panelState([revision(1, PLAN)], { canDecide: false }));
    assert.equal(await notesButton(panel).isEnabled(), false);
    assert.equal(await notes.isVisible(), false);
  });

  it('keeps a notes draft across a reload (setState and the host), and shows it open again', async () => {
    panel = await panels.open();
    const state = panelState([revision(1, PLAN)]);
    await panel.postState(state);
    await notesButton(panel).click();
    await panel.page.locator('#approval-notes').fill('half-written notes');
    await panel.page.waitForFunction(() => JSON.stringify(window.__saved ?? '').includes('half-written notes'));
    const draft = (await panel.posted()).filter((m) => m.type === 'saveDraft').at(-1) ?? {};
    assert.equal(typeof draft.at, 'number');
    assert.deepEqual(
      { ...draft, at: undefined },
      {
        type: 'saveDraft',
        sessionKey: 'embedded:sess_1',
        toolUseId: 'toolu_1',
        feedback: '',
        comments: [],
        notes: 'half-written notes',
        at: undefined,
      },
    );
    const saved = await panel.saved();
    await panel.close();
    panel = await panels.open(saved);
    await panel.postState(state);
    assert.equal(await panel.page.locator('#approval-notes').isVisible(), true, 'open again with its draft');
    assert.equal(await panel.page.locator('#approval-notes').inputValue(), 'half-written notes');
    // A draft the host kept is used when the webview has none.
    await panel.close();
    panel = await panels.open();
    await panel.postState({ ...state, draft: { toolUseId: 'toolu_1', feedback: '', comments: [], notes: 'from the host' } });
    assert.equal(await panel.page.locator('#approval-notes').inputValue(), 'from the host');
  });

  it('an approval with notes carried as an edit (Claude Code on the web) is shown as an edited approval with the notes', async () => {
    panel = await panels.open();
    const edited = `${PLAN}\n## Reviewer notes\n\n${NOTES}\n`;
    await panel.postState(
      panelState([revision(1, edited, { status: 'approved_edited', notes: NOTES })], { phase: 'executing', canDecide: false }),
    );
    const { page } = panel;
    assert.equal((await page.locator('.revision-list button').textContent())?.trim(), 'Revision 1: approved (edited) with notes');
    assert.equal(
      await page.locator('.revision-feedback h2').textContent(),
      'Approved with notes (appended to the approved plan as an edit)',
    );
    assert.equal(await page.locator('#plan h2').last().textContent(), 'Reviewer notes');
  });
});

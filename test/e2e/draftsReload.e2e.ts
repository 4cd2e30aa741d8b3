// Drafts are never lost (real server, real code-server + Chromium): what is typed in the review
// panel (a reply to the agent's question, a line comment still being written, the rejection
// feedback, approval notes) is kept from the keystrokes that typed it, so a window reload one
// second after the last keystroke brings every draft back, and each can still be sent. Hiding the
// panel behind another editor (its page goes, and with it the plan texts it was sent) and showing
// it again brings the plan and the drafts back too.
import * as assert from 'node:assert/strict';
import type { Frame } from 'playwright-core';
import { readStatusBar, screenshot, uriArg, waitFor, type TestWindow } from './harness';
import { extensionLog, onlySession, planTask, reviewFrame, scenario, suiteWindow, waitForEvents } from './ultraplanSteps';

/** What the spec allows between the last keystroke and the reload. */
const RELOAD_AFTER_MS = 1_000;

const REPLY = 'Node 20, please: it is what CI runs.';
const COMMENT = 'Pin the exact target, node20.11';
const FEEDBACK = 'Also say how the engines field is checked.';
const NOTES = 'Keep the build script names as they are.';

/** Reloads the window once RELOAD_AFTER_MS have passed since `typedAt` (not later), and waits for the new extension host. */
async function reloadSoonAfter(window: TestWindow, typedAt: number): Promise<void> {
  const left = typedAt + RELOAD_AFTER_MS - Date.now();
  if (left > 0) await window.page.waitForTimeout(left);
  const before = window.probe.announcement();
  const after = await window.reload();
  assert.notEqual(after.startedAt, before?.startedAt, 'a new extension host');
}

/** Opens README.md in the review panel's group, so the panel's page goes, then brings the panel back. */
async function hideAndShowPanel(window: TestWindow): Promise<void> {
  const panel = (await window.probe.tabs()).find((t) => t.kind === 'webview' && (t.viewType ?? '').endsWith('ultraplan.review'));
  assert.ok(panel, 'the review panel is open');
  await window.probe.executeCommand('vscode.open', uriArg(`${window.workspace}/README.md`), {
    viewColumn: panel.group + 1,
    preview: false,
  });
  await waitFor(
    async () => ((await window.probe.tabs()).some((t) => t.group === panel.group && t.kind === 'text' && t.isActive) ? true : undefined),
    { timeoutMs: 10_000, message: 'README.md to cover the review panel in its group' },
  );
  await window.page.locator('.tabs-container .tab', { hasText: 'Ultraplan Review' }).first().click();
}

/** Types `text` key by key (each keystroke an input event, as a person types). */
async function typeInto(frame: Frame, selector: string, text: string): Promise<number> {
  await frame.locator(selector).pressSequentially(text);
  return Date.now();
}

/** Waits until the panel's field `selector` holds `text` (the panel may still be coming back). */
async function fieldShows(page: TestWindow['page'], selector: string, text: string, what: string): Promise<Frame> {
  return waitFor(
    async () => {
      const frame = await reviewFrame(page, selector);
      const value = await frame
        .locator(selector)
        .inputValue({ timeout: 1_000 })
        .catch(() => undefined);
      return value === text ? frame : undefined;
    },
    { timeoutMs: 30_000, message: `${what} back in the panel after the reload` },
  );
}

describe('drafts typed in the review panel survive a window reload 1 s later (server backend)', function () {
  const suite = suiteWindow({ suite: 'drafts-reload', scenario: scenario('question.json') });
  let sessionId = '';

  it('a reply being typed to the question is back after the reload, and then goes out', async function () {
    const w = suite.window;
    await planTask(w.page, 'make the build target one Node version', 'Ultraplan: needs input');
    sessionId = (await onlySession(suite.server)).id;
    const frame = await reviewFrame(w.page, '#reply-text');
    const typedAt = await typeInto(frame, '#reply-text', REPLY);
    await reloadSoonAfter(w, typedAt);
    await readStatusBar(w.page, 'Ultraplan: needs input', { timeoutMs: 30_000 });
    const back = await fieldShows(w.page, '#reply-text', REPLY, 'the reply');
    await screenshot(w.page, 'reply-after-reload');
    await back.locator('#reply-text').press('Control+Enter');
    await waitForEvents(
      suite.server,
      sessionId,
      (events) => events.some((e) => e.type === 'user' && (e as { message?: { content?: unknown } }).message?.content === REPLY),
      'the restored reply to reach the session',
    );
    // Reading the session's log back after the reload said nothing new: the question stayed on
    // screen (a flicker to "planning" took the reply box away for a poll).
    const afterReload = extensionLog(w).split('re-attached session')[1] ?? '';
    assert.doesNotMatch(afterReload.split(/\] reply \(/)[0] ?? '', /needs_input -> planning/);
  });

  it('a comment being written, the rejection feedback and approval notes are back after the reload, and the notes go out', async function () {
    const w = suite.window;
    await readStatusBar(w.page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    const frame = await reviewFrame(w.page, '#plan li');
    await frame.locator('#plan li', { hasText: 'Target node20' }).click();
    await typeInto(frame, '.comment-composer textarea', COMMENT);
    await typeInto(frame, '#feedback', FEEDBACK);
    await frame.getByRole('button', { name: 'Approve with Notes…' }).click();
    const firstNotesAt = await typeInto(frame, '#approval-notes', NOTES.slice(0, 10));

    // Hidden and shown again (as long after the last keystroke as the reload below): a new page,
    // which gets the plan's text again and its drafts back.
    const left = firstNotesAt + RELOAD_AFTER_MS - Date.now();
    if (left > 0) await w.page.waitForTimeout(left);
    await hideAndShowPanel(w);
    await fieldShows(w.page, '#feedback', FEEDBACK, 'the rejection feedback (after the panel was hidden)');
    await fieldShows(w.page, '.comment-composer textarea', COMMENT, 'the comment being written (after the panel was hidden)');
    const shown = await fieldShows(w.page, '#approval-notes', NOTES.slice(0, 10), 'the approval notes (after the panel was hidden)');
    assert.match((await shown.locator('#plan').textContent()) ?? '', /Set engines\.node to >=20/, 'the plan text came again');

    const typedAt = await typeInto(shown, '#approval-notes', NOTES.slice(10));
    await reloadSoonAfter(w, typedAt);
    await readStatusBar(w.page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    await fieldShows(w.page, '#feedback', FEEDBACK, 'the rejection feedback');
    await fieldShows(w.page, '.comment-composer textarea', COMMENT, 'the comment being written');
    const back = await fieldShows(w.page, '#approval-notes', NOTES, 'the approval notes');
    // The field holds its draft at once; it shows when the plan can be decided again (the buttons enabled).
    await waitFor(async () => ((await back.locator('#approval-notes').isVisible()) ? true : undefined), {
      timeoutMs: 20_000,
      message: 'the notes field open again on its draft',
    });
    assert.match(
      (await back.locator('.comment-composer label').textContent()) ?? '',
      /Target node20/,
      'the comment is on the lines it was written for',
    );
    await screenshot(w.page, 'review-drafts-after-reload');
    // Still decidable, with what came back: the notes go with the approval.
    await back.locator('#approval-notes').press('Control+Enter');
    await waitForEvents(
      suite.server,
      sessionId,
      (events) => events.some((e) => JSON.stringify(e).includes(NOTES)),
      'the restored notes to reach the session with the approval',
    );
    await readStatusBar(w.page, 'Ultraplan: approved', { timeoutMs: 30_000 });
  });
});

// The review loop against the real ultraplan-server in real code-server + Chromium:
// plan -> reject with a line comment (the comment and the quoted line reach the agent) ->
// revision 2 shown with a diff -> edit, approve the edited text (the agent receives it) ->
// executing -> the outcome.
import * as assert from 'node:assert/strict';
import {
  answerInputBox,
  closeQuickInput,
  readQuickInput,
  readStatusBar,
  runCommand,
  screenshot,
  statusBarAriaLabel,
  waitFor,
} from './harness';
import {
  decisionsSent,
  extensionLog,
  exitPlanResults,
  onlySession,
  planTask,
  reviewFrame,
  revisionFrame,
  scenario,
  suiteWindow,
  waitForEvents,
  writeReview,
} from './ultraplanSteps';

describe('review loop: reject with a line comment, diff, edit and approve (server backend)', function () {
  const suite = suiteWindow({ suite: 'review-loop', scenario: scenario('review-loop.json') });
  let sessionId = '';

  it('plans a task: status bar goes to "plan ready" and the panel shows revision 1 with the four buttons', async function () {
    const { page } = suite.window;
    // The input box hints at the keyword (and at ultrareview) before anything is sent.
    await runCommand(page, 'Ultraplan: Plan a Task…');
    await answerInputBox(page, 'ultraplan add a dark mode toggle, ultrareview later', { submit: false });
    const hint = await waitFor(
      async () => {
        const q = await readQuickInput(page);
        return q.message.includes('launch keyword') ? q.message : undefined;
      },
      { timeoutMs: 10_000, message: 'the keyword hint' },
    );
    assert.match(hint, /the agent receives: plan add a dark mode toggle/);
    assert.match(hint, /ultrareview/);
    await screenshot(page, 'keyword-hint');
    await closeQuickInput(page);
    await planTask(page, 'ultraplan add a dark mode toggle');
    const session = await onlySession(suite.server);
    sessionId = session.id;
    assert.equal(session.title, 'ultraplan: plan add a dark mode toggle', 'title prefixed, keyword replaced per section 7');
    const frame = await reviewFrame(page, '#plan li');
    for (const label of ['Approve', 'Reject', 'Edit', 'Teleport']) {
      assert.equal(await frame.getByRole('button', { name: label, exact: true }).isEnabled(), true, `${label} enabled`);
    }
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Persist the choice in localStorage/);
    const tooltip = await statusBarAriaLabel(page, 'Ultraplan: plan ready');
    assert.match(tooltip, /plan ready/i);
    await screenshot(page, 'plan-ready');
  });

  it('keeps the plan readable in a short editor area: the header and the buttons do not cover it', async function () {
    const { page } = suite.window;
    const size = page.viewportSize();
    await page.setViewportSize({ width: size?.width ?? 1400, height: 420 });
    try {
      const frame = await reviewFrame(page, '#plan li');
      const layout = await waitFor(
        async () => {
          const l = (await frame.evaluate(`(() => {
            const rect = (sel) => document.querySelector(sel).getBoundingClientRect();
            const pinned = (sel) => getComputedStyle(document.querySelector(sel)).position === 'sticky';
            const first = document.querySelector('#plan li');
            first.scrollIntoView({ block: 'center' });
            const r = first.getBoundingClientRect();
            const hit = document.elementFromPoint(r.left + 10, r.top + r.height / 2);
            return { height: innerHeight, header: pinned('.panel-header') ? rect('.panel-header').height : 0, decision: pinned('.decision') ? rect('.decision').height : 0, visible: first.contains(hit) };
          })()`)) as { height: number; header: number; decision: number; visible: boolean };
          return l.height < 400 ? l : undefined;
        },
        { timeoutMs: 10_000, message: 'the panel to take the short size' },
      );
      assert.ok(layout.visible, 'a plan line scrolled into view is covered');
      assert.ok(
        layout.header + layout.decision <= layout.height * 0.25,
        `pinned header and buttons take ${layout.header + layout.decision} of ${layout.height} px`,
      );
      await screenshot(page, 'short-editor-area');
    } finally {
      if (size) await page.setViewportSize(size);
    }
  });

  it('rejects with feedback and a line comment; the agent receives the comment under its quoted line', async function () {
    const { page } = suite.window;
    const frame = await reviewFrame(page, '#plan li');
    await writeReview(frame, {
      line: 'Persist the choice in localStorage',
      comment: 'Store it in the user profile, not the browser',
      feedback: 'Close, but the storage is wrong.',
    });
    // Labelled by the text the person clicked, not by its Markdown source line.
    assert.equal(await frame.locator('.comment-card .comment-lines').textContent(), '“Persist the choice in localStorage”');
    await screenshot(page, 'line-comment');
    await frame.getByRole('button', { name: 'Reject', exact: true }).click();

    const deny = await waitForEvents(
      suite.server,
      sessionId,
      (events) => exitPlanResults(events).find((r) => r.isError),
      'the rejection to reach the agent',
    );
    assert.match(deny.text, /Close, but the storage is wrong\./);
    assert.match(deny.text, /> 3\. Persist the choice in localStorage\n\nStore it in the user profile, not the browser/);
  });

  it('shows revision 2 and its diff against revision 1; revision 1 keeps its comment', async function () {
    const { page } = suite.window;
    const frame = await revisionFrame(page, 'Revision 2 of 2');
    await frame.getByRole('button', { name: 'Compare plan revisions' }).click();
    const added = await frame.locator('.diff-added').allTextContents();
    assert.ok(
      added.some((t) => t.includes('Persist the choice in the user profile on the server')),
      added.join(' | '),
    );
    assert.ok((await frame.locator('.diff-removed').allTextContents()).some((t) => t.includes('localStorage')));
    await screenshot(page, 'revision-2-diff');
    await frame.getByRole('button', { name: 'Revision 1: rejected' }).click();
    assert.equal(await frame.locator('.comment-card .comment-text').textContent(), 'Store it in the user profile, not the browser');
    await frame.getByRole('button', { name: /^Revision 2/ }).click();
  });

  it('edits the plan and approves the edited text; the agent receives it and executes', async function () {
    const { page, probe } = suite.window;
    const frame = await reviewFrame(page, '.revision-label');
    await frame.getByRole('button', { name: 'Edit', exact: true }).click();
    const editor = await waitFor(
      async () => (await probe.editors()).find((e) => e.uri.startsWith('untitled:') && e.text.includes('user profile on the server')),
      {
        timeoutMs: 20_000,
        message: 'the plan to open in an untitled editor',
      },
    );
    assert.equal(editor.languageId, 'markdown');
    // Type at the end of the document in the real editor.
    await page.locator('.monaco-editor textarea.inputarea, .monaco-editor .native-edit-context').first().focus();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('5. Document the toggle in the README\n');
    await screenshot(page, 'editing');
    await runCommand(page, 'Ultraplan: Approve Edited Plan');

    const approved = await waitForEvents(
      suite.server,
      sessionId,
      (events) => exitPlanResults(events).find((r) => !r.isError),
      'the edited approval to reach the agent',
    );
    assert.match(approved.text, /## Approved Plan \(edited by user\):\n[\s\S]*5\. Document the toggle in the README/);
    const events = await waitForEvents(suite.server, sessionId, (e) => (decisionsSent(e).length === 2 ? e : undefined), 'two decisions');
    const allow = decisionsSent(events)[1] as { behavior: string; updatedInput: { plan: string } };
    assert.equal(allow.behavior, 'allow');
    assert.match(allow.updatedInput.plan, /4\. Add a test for the toggle\n5\. Document the toggle in the README/);

    await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 30_000 });
    const outcome = await reviewFrame(page, '.outcome');
    await waitFor(
      async () => ((await outcome.locator('.outcome').textContent()) ?? '').includes('Dark mode toggle implemented') || undefined,
      {
        timeoutMs: 20_000,
        message: 'the outcome in the panel',
      },
    );
    // The approved revision shows what was approved: the edited plan, not the agent's.
    await waitFor(
      async () => ((await outcome.locator('#plan').textContent()) ?? '').includes('Document the toggle in the README') || undefined,
      {
        timeoutMs: 20_000,
        message: 'the edited plan in the panel',
      },
    );
    assert.match((await outcome.locator('.revision-label').textContent()) ?? '', /Revision 2/);
    await screenshot(page, 'completed');
  });

  it('logged each request, phase change and decision, and never the token', async function () {
    const log = extensionLog(suite.window);
    assert.match(log, /http: POST http:\/\/127\.0\.0\.1:\d+\/v1\/code\/sessions -> 20\d/);
    assert.match(log, /decision reject on plan \S+ \(sha256 [0-9a-f]{12}…\)/);
    assert.match(log, /decision edit on plan/);
    assert.match(log, /planning -> plan_ready|plan_ready/);
    assert.ok(!log.includes(suite.server.token!), 'the server token is not in the log');
  });
});

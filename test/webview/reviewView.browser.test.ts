// The review panel's webview in real Chromium, under the CSP ReviewPanel serves. Needs a build
// (`npm run build`; `npm test` builds first). Screenshots go to test-output/webview/.
import * as assert from 'node:assert/strict';
import { waitFor } from '../support/wait';
import { parseWebviewToHostMessage, splitPlanTexts } from '../../src/core/panelMessages';
import { WARM_UP_PASSES } from '../../src/webview/renderWarmUp';
import { panelState, revision, startRecordingServer, type PanelPage, usePanelBrowser } from './panelPage';

const PLAN_V1 = [
  '# Add a dark mode toggle', // 1
  '', // 2
  'We add a toggle to the settings page.', // 3
  '', // 4
  '## Steps', // 5
  '', // 6
  '1. Add a `theme` field to the settings store', // 7
  '2. Render a switch in `SettingsPage.tsx`', // 8
  '3. Persist the choice in localStorage', // 9
  '', // 10
  '```ts', // 11
  "export type Theme = 'light' | 'dark';", // 12
  '```', // 13
  '', // 14
  'See https://example.com/design for the design.', // 15
].join('\n');

const PLAN_V2 = PLAN_V1.replace(
  '3. Persist the choice in localStorage',
  '3. Persist the choice in the user profile\n4. Add a test for the toggle',
);

const BUTTONS = ['Approve', 'Reject', 'Edit', 'Teleport'] as const;

/** A request as posted, its id checked and set aside (it is random per request). */
function withoutRequestId(message: Record<string, unknown>): Record<string, unknown> {
  const { requestId, ...rest } = message;
  assert.match(String(requestId), /^[0-9a-f]{16}$/, 'each request carries an id');
  return rest;
}

async function buttonStates(panel: PanelPage): Promise<Record<string, boolean>> {
  const result: Record<string, boolean> = {};
  for (const label of BUTTONS) result[label] = await panel.page.getByRole('button', { name: label, exact: true }).isEnabled();
  return result;
}

function allEnabled(states: Record<string, boolean>, enabled: boolean): boolean {
  return BUTTONS.every((label) => states[label] === enabled);
}

describe('review panel webview (Chromium)', function () {
  this.timeout(60_000);
  const panels = usePanelBrowser();
  let panel: PanelPage | undefined;

  it('renders the plan with its header and the four buttons', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN_V1)], { sessionLink: 'https://example.com/sessions/1' }));
    const { page } = panel;
    assert.equal(await page.locator('#plan h1').textContent(), 'Add a dark mode toggle');
    assert.equal(await page.locator('#plan ol > li').count(), 3);
    assert.equal(await page.locator('#plan pre code').textContent(), "export type Theme = 'light' | 'dark';\n");
    assert.equal(await page.locator('.revision-label').textContent(), 'Revision 1 of 1');
    assert.equal(await page.locator('.phase-badge').textContent(), 'Plan ready');
    assert.equal(await page.locator('.backend-label').textContent(), 'Embedded · Fake ACP agent');
    assert.ok(allEnabled(await buttonStates(panel), true));
    for (const label of BUTTONS) assert.equal((await page.getByRole('button', { name: label, exact: true }).textContent())?.trim(), label);
    assert.equal(await page.locator('.demo-badge').isVisible(), false);
    // The codicon font came from our own origin, so the CSP allowed it.
    // The font is fetched when a glyph is first laid out, which may come after the buttons are read.
    await waitFor(() => panels.server.requests.includes('/dist/codicon.ttf') || undefined, {
      timeoutMs: 10_000,
      message: `the font to be requested (requested: ${panels.server.requests.join(', ')})`,
    });
    // The script and the stylesheet came in the page itself, with no fetch of their own.
    assert.deepEqual(
      panels.server.requests.filter((r) => r.startsWith('/dist/webview.')),
      [],
    );
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
    await panel.screenshot('plan-rendered');
  });

  it('warms its render path in idle time after loading, leaving nothing in the page', async () => {
    panel = await panels.open();
    const { page } = panel;
    // Each pass leaves a performance measure.
    await page.waitForFunction((passes) => performance.getEntriesByName('ultraplan:warm-up').length === passes, WARM_UP_PASSES, {
      timeout: 20_000,
    });
    assert.equal(await page.locator('.plan-warm-up').count(), 0, 'the hidden sample is removed in the pass that adds it');
    assert.equal(await page.locator('[data-ls]').count(), 0, 'no block of the sample is left anywhere');
    assert.deepEqual(await page.evaluate(() => window.__violations), [], 'no CSP violation');
    await panel.postState(panelState([revision(1, PLAN_V1)]));
    assert.equal(await page.locator('#plan [data-ls]').count(), 9, 'h1, p, h2, ol, three li, the fence, p');
  });

  it("a new panel says nothing of the demo before its state arrives, nor after a real agent's state", async () => {
    panel = await panels.open();
    await panel.page.locator('.panel-header').waitFor({ state: 'attached' });
    assert.equal(await panel.page.locator('.demo-badge').isVisible(), false, 'no Demo badge before the first state');
    assert.equal(await panel.page.locator('.demo-note').isVisible(), false, 'no demo note before the first state');
    await panel.postState(panelState([revision(1, PLAN_V1)], { backendLabel: 'Embedded · Claude (ACP)' }));
    assert.equal(await panel.page.locator('.demo-badge').isVisible(), false);
    assert.equal(await panel.page.locator('.demo-note').isVisible(), false);
  });

  it('hovering one list item highlights that item only, not its whole list', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN_V1)]));
    const { page } = panel;
    const background = (selector: string) => page.locator(selector).evaluate((e) => getComputedStyle(e).backgroundColor);
    const hover = 'rgb(42, 45, 46)'; // --vscode-list-hoverBackground of the theme the page sets
    await page.locator('#plan ol > li').nth(1).hover();
    assert.equal(await background('#plan ol > li:nth-child(2)'), hover, 'the item under the pointer');
    assert.notEqual(await background('#plan ol'), hover, 'not the list around it');
    assert.notEqual(await background('#plan ol > li:nth-child(1)'), hover, 'not its sibling');
  });

  it('an approved plan executing on this machine reads "Executing", never "remotely"', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN_V1, { status: 'approved' })], { phase: 'executing', canDecide: false }));
    assert.equal(await panel.page.locator('.phase-badge').textContent(), 'Executing');
  });

  it('labels the scripted demo as a demo', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN_V1)], { demo: true, backendLabel: 'Embedded (demo)' }));
    assert.equal(await panel.page.locator('.demo-badge').isVisible(), true);
    assert.match((await panel.page.locator('.demo-note').textContent()) ?? '', /scripted demo/);
  });

  it('runs nothing and loads nothing from a hostile plan, and keeps its text readable', async () => {
    const recorder = await startRecordingServer();
    try {
      const remote = recorder.origin;
      const hostileHead = [
        '# Hostile plan',
        '<script>window.__canary = "script"; alert("script")</script>',
        '<img src="x" onerror="window.__canary = \'img\'; alert(\'img\')">',
        `<img src="${remote}/raw-img.png">`,
        `![tracking pixel](${remote}/md-img.png)`,
        '[run me](javascript:window.__canary="js-link")',
        '[open terminal](command:workbench.action.terminal.new)',
        '[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
        `<iframe src="${remote}/frame"></iframe>`,
        `<style>@import url("${remote}/style.css"); body { background: url("${remote}/bg.png") }</style>`,
        `<link rel="stylesheet" href="${remote}/link.css">`,
        '<a href="javascript:alert(1)">raw anchor</a>',
        `<svg onload="window.__canary='svg'"><image href="${remote}/svg.png"/></svg>`,
        `[safe link](${remote}/clicked)`,
        '',
      ];
      const filler = Array.from({ length: 5_000 }, (_, i) => `- filler line ${i + 1}`);
      const plan = [...hostileHead, ...filler, '', 'THE LAST LINE'].join('\n');
      panel = await panels.open();
      await panel.postState(panelState([revision(1, plan)]));
      const { page } = panel;
      await page.getByText('THE LAST LINE').waitFor();
      // Give any stray loader a moment: images and styles would have been requested by now.
      await page.waitForTimeout(300);
      assert.equal(await page.evaluate(() => window.__canary), undefined, 'no script ran');
      assert.deepEqual(panel.dialogs, [], 'no dialog opened');
      assert.deepEqual(recorder.requests, [], 'nothing requested from the remote server');
      // Nothing even tried: the CSP (the third layer) had nothing to refuse.
      assert.deepEqual(await page.evaluate(() => window.__violations), []);
      for (const tag of ['script', 'img', 'iframe', 'style', 'link', 'svg', 'object', 'embed']) {
        assert.equal(await page.locator(`#plan ${tag}`).count(), 0, `no <${tag}> in the plan`);
      }
      const hrefs = await page.locator('#plan a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
      assert.ok(
        hrefs.every((h) => h !== null && /^https?:\/\//.test(h)),
        `only http(s) links: ${hrefs.join(' ')}`,
      );
      // The hostile text is shown as text, readable.
      const text = (await page.locator('#plan').textContent()) ?? '';
      assert.match(text, /<script>window.__canary = "script"; alert\("script"\)<\/script>/);
      assert.match(text, /\[open terminal\]\(command:workbench.action.terminal.new\)/);
      assert.match(text, /\[image: tracking pixel\]/);
      assert.match(text, /filler line 5000/);
      // Clicking a plan link asks the host to open it; the page itself does not navigate.
      const before = (await panel.posted()).length;
      await page.getByRole('link', { name: 'safe link' }).click();
      const open = await panel.waitForPosted('openLink', before);
      assert.deepEqual(open, { type: 'openLink', href: `${remote}/clicked` });
      assert.ok(parseWebviewToHostMessage(open).ok);
      assert.deepEqual(recorder.requests, [], 'the click did not navigate');
      assert.equal(page.url(), `${panels.server.origin}/index.html`);
      await panel.screenshot('hostile-plan');
    } finally {
      await recorder.close();
    }
  });

  it('collects line comments and sends them with the feedback in the reject message', async () => {
    panel = await panels.open();
    const state = panelState([revision(1, PLAN_V1)]);
    await panel.postState(state);
    const { page } = panel;
    // Click step 2 (source line 8) and comment on it.
    await page.locator('#plan li', { hasText: 'Render a switch' }).click();
    const composer = page.locator('.comment-composer textarea');
    await composer.fill('Use the existing Switch component');
    await page.getByRole('button', { name: 'Add comment' }).click();
    // Select from step 1 to step 3 (lines 7-9) with click + shift-click and comment on the range.
    await page.locator('#plan li', { hasText: 'Add a theme field' }).click();
    await page.locator('#plan li', { hasText: 'Persist the choice' }).click({ modifiers: ['Shift'] });
    await page.locator('.comment-composer textarea').fill('Too many steps for one PR');
    await page.locator('.comment-composer textarea').press('Control+Enter');
    const cards = page.locator('.comment-card');
    assert.equal(await cards.count(), 2);
    // Each thread sits after the block where its lines end: step 2's, then step 3's.
    // Labelled by the text the person clicked, as the panel shows it (not the Markdown source line).
    assert.deepEqual(await page.locator('.comment-lines').allTextContents(), [
      '“Render a switch in SettingsPage.tsx”',
      '“Add a theme field to the settings store” and 2 more',
    ]);
    // Edit one, remove nothing, then reject with feedback.
    await page.getByRole('button', { name: 'Edit comment on “Render a switch in SettingsPage.tsx”' }).click();
    await page.locator('.comment-composer textarea').fill('Use the existing <Switch> component');
    await page.getByRole('button', { name: 'Save comment' }).click();
    await page.locator('#feedback').fill('Please split the work.');
    await panel.screenshot('line-comments');
    const before = (await panel.posted()).length;
    await page.getByRole('button', { name: 'Reject', exact: true }).click();
    const reject = await panel.waitForPosted('reject', before);
    const parsed = parseWebviewToHostMessage(reject);
    assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
    assert.deepEqual(withoutRequestId(reject), {
      type: 'reject',
      sessionKey: 'embedded:sess_1',
      binding: { sessionId: 'sess_1', toolUseId: 'toolu_1', planHash: state.revisions[0]?.planHash },
      feedback: 'Please split the work.',
      comments: [
        {
          line: 7,
          endLine: 9,
          quote:
            '1. Add a `theme` field to the settings store\n2. Render a switch in `SettingsPage.tsx`\n3. Persist the choice in localStorage',
          text: 'Too many steps for one PR',
        },
        { line: 8, quote: '2. Render a switch in `SettingsPage.tsx`', text: 'Use the existing <Switch> component' },
      ],
    });
    // The comment text with markup is shown as text, not parsed.
    assert.equal(await page.locator('#plan switch').count(), 0);
  });

  it('refuses to reject without feedback or comments, and removes a comment', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN_V1)]));
    const { page } = panel;
    await page.locator('#plan p', { hasText: 'We add a toggle' }).click();
    await page.locator('.comment-composer textarea').fill('temporary');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.getByRole('button', { name: 'Remove comment on “We add a toggle to the settings page.”' }).click();
    assert.equal(await page.locator('.comment-card').count(), 0);
    await page.getByRole('button', { name: 'Reject', exact: true }).click();
    assert.match((await page.locator('.notice-local').textContent()) ?? '', /write feedback or add at least one line comment/);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'feedback');
    assert.ok(!(await panel.posted()).some((m) => m.type === 'reject'), 'no reject was sent');
  });

  it('keeps the buttons disabled after a decision until the host answers it or a new plan arrives', async () => {
    panel = await panels.open();
    const state = panelState([revision(1, PLAN_V1)]);
    await panel.postState(state);
    const { page } = panel;
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    const approve = await panel.waitForPosted('approve');
    assert.deepEqual(withoutRequestId(approve), {
      type: 'approve',
      sessionKey: 'embedded:sess_1',
      binding: { sessionId: 'sess_1', toolUseId: 'toolu_1', planHash: state.revisions[0]?.planHash },
    });
    assert.ok(allEnabled(await buttonStates(panel), false), 'disabled right after the click');
    // A state the host sent before it saw the click must not re-enable them.
    await panel.postState(state);
    assert.ok(allEnabled(await buttonStates(panel), false), 'still disabled on a stale state');
    await panel.screenshot('after-approve');
    // The host is sending it: shown as in progress, still disabled.
    await panel.postState({ ...state, pendingDecision: 'approve' });
    assert.ok(allEnabled(await buttonStates(panel), false));
    assert.match((await page.locator('.decision-status').textContent()) ?? '', /Approve: in progress/);
    // An answer to another request changes nothing.
    await panel.postRaw({ type: 'answer', requestId: 'ffffffffffffffff', result: 'refused', reason: 'not this one' });
    await panel.postState({ ...state, notice: { level: 'error', text: 'Could not send the approval: offline' } });
    assert.ok(allEnabled(await buttonStates(panel), false), 'only the answer to this request ends the lock');
    // The answer: refused (say the send failed), with the reason; enabled again.
    await panel.postRaw({
      type: 'answer',
      requestId: approve.requestId,
      result: 'refused',
      reason: 'Sending the decision failed: offline',
    });
    assert.ok(allEnabled(await buttonStates(panel), true), 'released by the answer');
    assert.equal(await page.locator('.notice').first().textContent(), 'Could not send the approval: offline');
    assert.equal(await page.locator('.notice-local').textContent(), 'Sending the decision failed: offline');
    // Teleport, then a new revision arrives: enabled for the new plan.
    await page.getByRole('button', { name: 'Teleport', exact: true }).click();
    await panel.waitForPosted('teleport');
    assert.ok(allEnabled(await buttonStates(panel), false));
    const next = panelState([revision(1, PLAN_V1, { status: 'rejected' }), revision(2, PLAN_V2)]);
    await panel.postState(next);
    assert.ok(allEnabled(await buttonStates(panel), true), 'a new plan enables them');
    // canDecide false from the host keeps them disabled.
    await panel.postState({ ...next, canDecide: false });
    assert.ok(allEnabled(await buttonStates(panel), false));
  });

  it('after a decision is sent, the status follows the session, never a stale "waiting for the extension"', async () => {
    panel = await panels.open();
    const state = panelState([revision(1, PLAN_V1)]);
    await panel.postState(state);
    const { page } = panel;
    const before = (await panel.posted()).length;
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    const approve = await panel.waitForPosted('approve', before);
    assert.match((await page.locator('.decision-status').textContent()) ?? '', /Approve sent; waiting for the extension/);
    // The host answers `sent` and the session shows the plan approved: the status says so.
    await panel.postRaw({ type: 'answer', requestId: approve.requestId, result: 'sent' });
    await panel.postState(panelState([revision(1, PLAN_V1, { status: 'approved' })], { phase: 'approved', canDecide: false }));
    assert.equal(await page.locator('.decision-status').textContent(), 'Revision 1 was approved.');
    await panel.postState(panelState([revision(1, PLAN_V1, { status: 'approved' })], { phase: 'executing', canDecide: false }));
    assert.doesNotMatch((await page.locator('.decision-status').textContent()) ?? '', /waiting for the extension/);
  });

  it('acts on invoke from the host keybindings, with the same checks as a click', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN_V1)]));
    await panel.postRaw({ type: 'invoke', action: 'reject' });
    assert.ok(!(await panel.posted()).some((m) => m.type === 'reject'), 'reject without feedback is not sent');
    await panel.postRaw({ type: 'invoke', action: 'edit' });
    const edit = await panel.waitForPosted('edit');
    assert.equal((edit.binding as { toolUseId: string }).toolUseId, 'toolu_1');
    await panel.postRaw({ type: 'invoke', action: 'approve' });
    assert.ok(!(await panel.posted()).some((m) => m.type === 'approve'), 'locked after edit: a second decision is not sent');
  });

  it('shows the revision list and the current revision as a diff against the previous one', async () => {
    panel = await panels.open();
    const state = panelState([
      revision(1, PLAN_V1, {
        status: 'rejected',
        feedback: 'Store it server side',
        comments: [{ line: 9, quote: '3. Persist the choice in localStorage', text: 'not local' }],
      }),
      revision(2, PLAN_V2),
    ]);
    await panel.postState(state);
    const { page } = panel;
    assert.equal(await page.locator('.revision-label').textContent(), 'Revision 2 of 2');
    assert.deepEqual(await page.locator('.revision-list button').allTextContents(), [
      'Revision 1: rejected',
      'Revision 2: waiting for review',
    ]);
    const compare = page.getByRole('button', { name: 'Compare plan revisions' });
    assert.equal(await compare.getAttribute('title'), 'The lines of the plan that revision 2 added and removed since revision 1');
    await compare.click();
    assert.deepEqual(await page.locator('.diff-removed').allTextContents(), ['- 3. Persist the choice in localStorage']);
    assert.deepEqual(await page.locator('.diff-added').allTextContents(), [
      '+ 3. Persist the choice in the user profile',
      '+ 4. Add a test for the toggle',
    ]);
    assert.match((await page.locator('.diff-summary').textContent()) ?? '', /2 lines added, 1 removed/);
    assert.ok(allEnabled(await buttonStates(panel), true), 'decisions allowed while viewing the diff of the current revision');
    await panel.screenshot('revision-diff');
    // Revision 1: read-only, with its feedback and kept comment; decisions disabled.
    await page.getByRole('button', { name: 'Revision 1: rejected' }).click();
    assert.equal(await page.locator('.revision-label').textContent(), 'Revision 1 of 2');
    assert.match((await page.locator('.revision-feedback').textContent()) ?? '', /Store it server side/);
    assert.equal(await page.locator('.comment-card .comment-text').textContent(), 'not local');
    assert.equal(await page.getByRole('button', { name: /Remove comment/ }).count(), 0);
    assert.ok(allEnabled(await buttonStates(panel), false));
    assert.match((await page.locator('.decision-status').textContent()) ?? '', /older revision/);
  });

  it('switching revisions shows each plan again from what it rendered, with its own comments on its own lines', async () => {
    panel = await panels.open();
    const state = panelState([
      revision(1, PLAN_V1, {
        status: 'rejected',
        comments: [{ line: 9, quote: '3. Persist the choice in localStorage', text: 'not local' }],
      }),
      revision(2, PLAN_V2),
    ]);
    await panel.postState(state);
    const { page } = panel;
    await page.locator('#plan li', { hasText: 'Add a test for the toggle' }).click();
    await page.locator('.comment-composer textarea').fill('Which test runner?');
    await page.getByRole('button', { name: 'Add comment' }).click();
    // An expando on a rendered block: only the very same element carries it.
    await page.evaluate(() => Object.assign(document.querySelector('#plan li') ?? {}, { __renderedOnce: true }));

    await page.getByRole('button', { name: 'Revision 1: rejected' }).click();
    assert.match((await page.locator('#plan').textContent()) ?? '', /localStorage/);
    assert.deepEqual(await page.locator('.comment-lines').allTextContents(), ['“Persist the choice in localStorage”']);
    assert.deepEqual(await page.locator('.comment-text').allTextContents(), ['not local']);

    await page.getByRole('button', { name: 'Revision 2: waiting for review' }).click();
    assert.equal(
      await page.evaluate(() => (document.querySelector('#plan li') as { __renderedOnce?: boolean } | null)?.__renderedOnce),
      true,
      'revision 2 shown from the nodes rendered the first time',
    );
    assert.deepEqual(await page.locator('.comment-lines').allTextContents(), ['“Add a test for the toggle”']);
    assert.deepEqual(await page.locator('.comment-text').allTextContents(), ['Which test runner?']);
    assert.equal(await page.locator('.comment-thread').count(), 1, 'no thread left over from revision 1');
    // And the comment still lands on the right source line.
    await page.locator('#feedback').fill('See the comment.');
    const before = (await panel.posted()).length;
    await page.getByRole('button', { name: 'Reject', exact: true }).click();
    const reject = await panel.waitForPosted('reject', before);
    assert.deepEqual(reject.comments, [{ line: 10, quote: '4. Add a test for the toggle', text: 'Which test runner?' }]);
  });

  it('shows a 1.6 MB table plan as text, says why, and stays usable', async () => {
    panel = await panels.open();
    const rows = ['# Inventory', '', '| id | name | value | notes |', '| --- | --- | --- | --- |'];
    let length = rows.join('\n').length;
    for (let i = 0; length < 1_600_000; i++) {
      const row = `| ${i} | item-${i} | ${(i * 37) % 1000} | ok |`;
      rows.push(row);
      length += row.length + 1;
    }
    const plan = rows.join('\n');
    assert.ok(plan.length >= 1_600_000);
    await panel.postState(panelState([revision(1, plan)]));
    const { page } = panel;
    assert.match((await page.locator('#plan .plan-bounded').textContent()) ?? '', /This plan is 1\.6 MB long, .*shown as plain text/);
    assert.equal(await page.locator('#plan table').count(), 0, 'the table was not rendered');
    const shown = await page.locator('#plan pre.plan-text').evaluate((element) => element.textContent ?? '');
    assert.equal(shown, plan);
    assert.match((await page.locator('.comment-count').textContent()) ?? '', /shown as text here, so write your feedback above/);
    // The panel still answers: a decision goes through.
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await panel.waitForPosted('approve');
    await panel.screenshot('plan-bounded-table');
  });

  it('shows a smaller plan with too many table cells as text, naming the cell bound', async () => {
    panel = await panels.open();
    const rows = ['| a | b | c | d | e | f | g | h |', '|---|---|---|---|---|---|---|---|'];
    for (let i = 0; i < 1200; i++) rows.push(`| ${i} | 1 | 2 | 3 | 4 | 5 | 6 | 7 |`);
    const plan = rows.join('\n');
    await panel.postState(panelState([revision(1, plan)]));
    const { page } = panel;
    assert.match((await page.locator('#plan .plan-bounded').textContent()) ?? '', /tables of more than 5,000 cells/);
    assert.equal(await page.locator('#plan table').count(), 0);
    assert.equal(await page.locator('#plan pre.plan-text').evaluate((element) => element.textContent ?? ''), plan);
  });

  it('bounds the diff of an 8k-line revision and shows the revision as text instead', async () => {
    panel = await panels.open();
    const lines = (word: string, stride: number) =>
      Array.from({ length: 8000 }, (_, i) => `- step ${(i * stride) % 8000}: ${word}`).join('\n');
    const first = lines('alpha', 1);
    const second = lines('beta', 7);
    await panel.postState(panelState([revision(1, first, { status: 'rejected', feedback: 'redo it' }), revision(2, second)]));
    const { page } = panel;
    await page.getByRole('button', { name: 'Compare plan revisions' }).click();
    assert.match(
      (await page.locator('#plan .plan-bounded').textContent()) ?? '',
      /too large to show as a line diff .*Revision 2 is shown as plain text/,
    );
    assert.equal(await page.locator('#plan .diff-line').count(), 0, 'no partial diff is shown');
    assert.equal(await page.locator('#plan pre.plan-text').evaluate((element) => element.textContent ?? ''), second);
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await panel.waitForPosted('approve');
    await panel.screenshot('plan-bounded-diff');
  });

  it('shows an oversized question as text too, and the reply still goes out', async () => {
    panel = await panels.open();
    const rows = ['Which of these?', '', '| a | b | c | d |', '|---|---|---|---|'];
    for (let i = 0; i < 2000; i++) rows.push(`| ${i} | x | y | z |`);
    const question = rows.join('\n');
    await panel.postState(panelState([], { phase: 'needs_input', question, canDecide: false }));
    const { page } = panel;
    assert.match((await page.locator('.question .plan-bounded').textContent()) ?? '', /This text has tables of more than 5,000 cells/);
    assert.equal(await page.locator('.question table').count(), 0);
    assert.equal(await page.locator('.question pre.plan-text').evaluate((element) => element.textContent ?? ''), question);
    await page.getByLabel('Your reply').fill('The first.');
    await page.getByRole('button', { name: 'Reply', exact: true }).click();
    assert.equal((await panel.waitForPosted('reply')).text, 'The first.');
  });

  it('shows a question with a reply box and sends the reply once', async () => {
    panel = await panels.open();
    const state = panelState([], {
      phase: 'needs_input',
      question: 'Should the toggle be **per device** or per account?',
      canDecide: false,
    });
    await panel.postState(state);
    const { page } = panel;
    assert.equal(await page.locator('.question strong').textContent(), 'per device');
    await page.getByLabel('Your reply').fill('Per account, please.');
    await panel.screenshot('question');
    await page.getByRole('button', { name: 'Reply', exact: true }).click();
    const reply = await panel.waitForPosted('reply');
    assert.deepEqual(withoutRequestId(reply), { type: 'reply', sessionKey: 'embedded:sess_1', text: 'Per account, please.' });
    assert.equal(await page.getByRole('button', { name: 'Reply', exact: true }).isEnabled(), false);
    await panel.postState(state);
    assert.equal(
      await page.getByRole('button', { name: 'Reply', exact: true }).isEnabled(),
      false,
      'a stale state does not re-enable Reply',
    );
    await panel.postState({ ...state, question: 'And the default?' });
    assert.equal(await page.getByRole('button', { name: 'Reply', exact: true }).isEnabled(), true);
  });

  it('an agent that stopped: why is shown; with no plan, Continue (message optional) is the one action', async () => {
    panel = await panels.open();
    const why = 'The session host restarted and this session’s agent could not continue (the agent does not support resuming).';
    await panel.postState(
      panelState([], { phase: 'agent_stopped', question: 'Which file?', canDecide: false, agentStopped: { text: why, canContinue: true } }),
    );
    const { page } = panel;
    assert.equal(await page.locator('.notice').first().textContent(), why);
    assert.equal(await page.getByRole('heading', { name: 'The agent stopped after saying' }).count(), 1);
    assert.equal(await page.getByRole('button', { name: 'Reply', exact: true }).count(), 0, 'no Reply: nothing would receive it');
    await panel.screenshot('agent-stopped');
    await page.getByRole('button', { name: 'Continue planning', exact: true }).click();
    assert.deepEqual(withoutRequestId(await panel.waitForPosted('continue')), {
      type: 'continue',
      sessionKey: 'embedded:sess_1',
      text: '',
    });
    assert.equal(await page.getByRole('button', { name: 'Continue planning', exact: true }).isEnabled(), false, 'sent once');
  });

  it('an agent that stopped with a plan waiting: the decisions stay, Continue is not offered', async () => {
    panel = await panels.open();
    const why = 'The session host restarted and this session’s agent could not continue. Its plan can still be decided.';
    await panel.postState(panelState([revision(1, PLAN_V1)], { phase: 'agent_stopped', agentStopped: { text: why, canContinue: false } }));
    const { page } = panel;
    assert.equal(await page.locator('.notice').first().textContent(), why);
    assert.equal(await page.getByRole('button', { name: 'Continue planning', exact: true }).isVisible(), false);
    assert.equal(await page.getByRole('button', { name: 'Approve', exact: true }).isEnabled(), true);
  });

  it('drops an invalid message with a visible notice and changes nothing', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN_V1)]));
    const { page } = panel;
    const hostile = splitPlanTexts(
      { ...panelState([revision(1, '# Replaced')]), sessionLink: 'command:workbench.action.terminal.new' },
      new Set(),
    );
    await panel.postRaw(hostile.message);
    assert.equal(await page.locator('#plan h1').textContent(), 'Add a dark mode toggle', 'the plan was not replaced');
    assert.match((await page.locator('.notice-local').textContent()) ?? '', /did not pass validation/);
    await panel.postRaw({ type: 'run', command: 'alert(1)' });
    assert.match((await page.locator('.notice-local').textContent()) ?? '', /did not pass validation/);
    assert.deepEqual(panel.dialogs, []);
    await panel.screenshot('invalid-message');
  });

  it('keeps drafts (and only drafts) across a reload through setState, tells the host, and takes the newer copy', async () => {
    panel = await panels.open();
    const state = panelState([revision(1, PLAN_V1)]);
    await panel.postState(state);
    const { page } = panel;
    await page.locator('#plan h2').click();
    await page.locator('.comment-composer textarea').fill('Name the steps');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.locator('#feedback').fill('draft feedback');
    await page.locator('#plan li', { hasText: 'Persist the choice' }).click();
    await page.locator('.comment-composer textarea').fill('half-written');
    await page.waitForFunction(() => JSON.stringify(window.__saved ?? '').includes('half-written'));
    const drafts = (await panel.posted()).filter((m) => m.type === 'saveDraft');
    const last = drafts.at(-1) ?? {};
    assert.equal(typeof last.at, 'number', 'stamped with when it was typed');
    assert.deepEqual(
      { ...last, at: undefined },
      {
        type: 'saveDraft',
        sessionKey: 'embedded:sess_1',
        toolUseId: 'toolu_1',
        feedback: 'draft feedback',
        comments: [{ line: 5, quote: '## Steps', text: 'Name the steps' }],
        comment: { line: 9, text: 'half-written' },
        at: undefined,
      },
    );
    assert.ok(parseWebviewToHostMessage(last).ok);
    const saved = await panel.saved();
    assert.equal((saved as { sessionKey?: string }).sessionKey, 'embedded:sess_1');
    assert.ok(!JSON.stringify(saved).includes('dark mode toggle'), 'no plan text and no state in setState');
    await panel.close();
    // A restored webview: its drafts are back once the host sends the state.
    panel = await panels.open(saved);
    const restored = panel.page;
    assert.match((await restored.locator('#plan').textContent()) ?? '', /Waiting for the extension/);
    await panel.postState(state);
    assert.equal(await restored.locator('#feedback').inputValue(), 'draft feedback');
    assert.equal(await restored.locator('.comment-card .comment-text').textContent(), 'Name the steps');
    assert.equal(await restored.locator('.comment-composer textarea').inputValue(), 'half-written', 'the comment being written too');
    // A draft the host kept is used when the webview has none, or when it is newer than the page's.
    await panel.close();
    panel = await panels.open(saved);
    await panel.postState({ ...state, draft: { toolUseId: 'toolu_1', feedback: 'from the host', comments: [], at: Date.now() + 60_000 } });
    assert.equal(await panel.page.locator('#feedback').inputValue(), 'from the host');
  });

  it('writes a draft from the first keystroke at a bounded rate, the last keystroke always written', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN_V1)]));
    const { page } = panel;
    const text = 'Split this into two pull requests, please.';
    const started = Date.now();
    await page.locator('#feedback').pressSequentially(text, { delay: 15 });
    const typedMs = Date.now() - started;
    await page.waitForFunction((t) => window.__posted.some((m) => (m as { type?: string; feedback?: string }).feedback === t), text, {
      timeout: 5_000,
    });
    const writes = (await panel.posted()).filter((m) => m.type === 'saveDraft');
    assert.equal(writes[0]?.feedback, 'S', 'the first keystroke is written at once');
    assert.equal(writes.at(-1)?.feedback, text);
    // One write per 200 ms at most, plus the first.
    assert.ok(writes.length <= Math.ceil(typedMs / 200) + 2, `${writes.length} writes in ${typedMs} ms of typing`);
    // Keystrokes faster than the bound share a write, however slow the machine: 40 inputs in one task.
    const burst = `${text} And keep the tests.`;
    await page.evaluate((full) => {
      const box = document.querySelector<HTMLTextAreaElement>('#feedback');
      if (!box) throw new Error('no #feedback');
      for (let end = box.value.length + 1; end <= full.length; end++) {
        box.value = full.slice(0, end);
        box.dispatchEvent(new Event('input', { bubbles: true }));
      }
    }, burst);
    await page.waitForFunction((t) => window.__posted.some((m) => (m as { type?: string; feedback?: string }).feedback === t), burst, {
      timeout: 5_000,
    });
    const burstWrites = (await panel.posted()).filter((m) => m.type === 'saveDraft').slice(writes.length);
    assert.ok(burstWrites.length <= 2, `not one write per keystroke (${burstWrites.length} for ${burst.length - text.length} inputs)`);
    assert.equal(burstWrites.at(-1)?.feedback, burst);
  });

  it('keeps the focus and the text of the comment being written when a state arrives meanwhile', async () => {
    panel = await panels.open();
    const state = panelState([revision(1, PLAN_V1)]);
    await panel.postState(state);
    const { page } = panel;
    await page.locator('#plan li', { hasText: 'Render a switch' }).click();
    const composer = page.locator('.comment-composer textarea');
    await composer.pressSequentially('Use the ');
    // The host's echo of the draft, and a notice, while the person types.
    await panel.postState({ ...state, notice: { level: 'info', text: 'Still planning elsewhere' } });
    await page.keyboard.type('Switch component');
    assert.equal(await composer.inputValue(), 'Use the Switch component');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'comment-composer-text');
  });

  it('saves another session at once, so a reload right after the switch restores the session shown', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN_V1)]));
    const other = splitPlanTexts(
      panelState([revision(1, PLAN_V1)], { sessionKey: 'embedded:sess_2', sessionId: 'sess_2', title: 'Another session' }),
      new Set(),
    ).message;
    // Dispatched synchronously and read in the same turn: no timer can have run.
    const savedKey = await panel.page.evaluate((message) => {
      window.dispatchEvent(new MessageEvent('message', { data: message }));
      return (window.__saved as { sessionKey?: string } | undefined)?.sessionKey;
    }, other);
    assert.equal(savedKey, 'embedded:sess_2');
  });

  it('asks the host for every plan text once when a state names a text the page does not have', async () => {
    panel = await panels.open();
    const state = panelState([revision(1, PLAN_V1)]);
    const named = splitPlanTexts(state, new Set([state.revisions[0]?.planHash ?? ''])).message;
    const before = (await panel.posted()).filter((m) => m.type === 'ready').length;
    await panel.postRaw(named);
    await panel.postRaw(named);
    const readies = (await panel.posted()).filter((m) => m.type === 'ready').length;
    assert.equal(readies - before, 1, 'one request, not one per state');
    assert.match((await panel.page.locator('#plan').textContent()) ?? '', /Waiting for the extension/);
    await panel.postState(state);
    assert.equal(await panel.page.locator('#plan h1').textContent(), 'Add a dark mode toggle');
  });

  it('supports the keyboard: arrows move between blocks, Enter comments', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN_V1)]));
    const { page } = panel;
    await page.locator('#plan').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.keyboard.type('Keyboard comment');
    await page.keyboard.press('Control+Enter');
    assert.equal(await page.locator('.comment-lines').textContent(), '“We add a toggle to the settings page.”');
  });

  it('comments on the lines a text selection spans', async () => {
    panel = await panels.open();
    await panel.postState(panelState([revision(1, PLAN_V1)]));
    const { page } = panel;
    const from = await page.locator('#plan li', { hasText: 'Add a theme field' }).boundingBox();
    const to = await page.locator('#plan li', { hasText: 'Persist the choice' }).boundingBox();
    assert.ok(from && to);
    await page.mouse.move(from.x + 30, from.y + from.height / 2);
    await page.mouse.down();
    await page.mouse.move(to.x + 60, to.y + to.height / 2, { steps: 5 });
    await page.mouse.up();
    assert.equal(
      await page.locator('.comment-composer label').textContent(),
      'Comment on “Add a theme field to the settings store” and 2 more',
    );
    assert.equal(await page.locator('#plan li.block-selected').count(), 3);
    assert.equal(await page.locator('#plan p.block-selected, #plan h2.block-selected').count(), 0);
  });

  it('opens the session and outcome links through the host only', async () => {
    panel = await panels.open();
    await panel.postState(
      panelState([revision(1, PLAN_V1, { status: 'approved' })], {
        phase: 'completed',
        canDecide: false,
        sessionLink: 'https://example.com/sessions/1',
        outcome: { text: 'Implemented **dark mode** in 3 files.', link: 'https://example.com/sessions/1/result' },
      }),
    );
    const { page } = panel;
    assert.equal(await page.locator('.outcome strong').textContent(), 'dark mode');
    assert.ok(allEnabled(await buttonStates(panel), false), 'nothing to decide on a completed session');
    await page.getByRole('link', { name: 'Open session' }).click();
    await page.getByRole('link', { name: 'Open the session' }).click();
    const links = (await panel.posted()).filter((m) => m.type === 'openLink').map((m) => m.href);
    assert.deepEqual(links, ['https://example.com/sessions/1', 'https://example.com/sessions/1/result']);
    assert.equal(page.url(), `${panels.server.origin}/index.html`);
    await panel.screenshot('outcome');
  });
});

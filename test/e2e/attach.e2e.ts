// Attach to Session… in real code-server + Chromium against the real ultraplan-server: a session
// started by a plain HTTP client (no extension involved) is listed in the picker, attached by its
// pasted server URL, its plan shows in the review, and Approve reaches the agent (the server's own
// record shows the approval). Attaching it again only shows it; an archived session, or one on a
// server we hold no token for, attaches read-only, says why, and takes no decision; a server that
// wants a token we do not have is not read at all.
import * as assert from 'node:assert/strict';
import { createCodeSessionByHttp as createByHttp, startServer } from '../support/serverProcess';
import { answerInputBox, clickNotificationButton, readStatusBar, screenshot, waitFor } from './harness';
import {
  attachByPasting,
  decisionsSent,
  exitPlanResults,
  extensionLog,
  HOST_NOTICE,
  planRequested,
  reviewFrame,
  scenario,
  sessionEvents,
  suiteWindow,
  waitForEvents,
} from './ultraplanSteps';

describe('attach: a session started elsewhere is followed and reviewed (server backend)', function () {
  const suite = suiteWindow({ suite: 'attach', scenario: scenario('one-plan.json') });
  let sessionId = '';

  it('lists a session a plain HTTP client started, attaches it from its pasted URL, and shows its plan', async function () {
    const { page } = suite.window;
    const { server } = suite;
    sessionId = await createByHttp(server, 'add a changelog');
    // The agent proposes its plan on the server before anyone looks.
    await planRequested(server, sessionId);
    const link = `${server.url}/v1/code/sessions/${sessionId}`;
    const listed = await attachByPasting(page, link, 'add a changelog');
    assert.ok(
      listed.some((i) => i.includes('add a changelog')),
      `listed: ${JSON.stringify(listed)}`,
    );

    const frame = await reviewFrame(page, '#plan li');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Add CHANGELOG\.md with an Unreleased section/);
    assert.equal(await frame.getByRole('button', { name: 'Approve', exact: true }).isEnabled(), true);
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    await screenshot(page, 'attached-plan');
  });

  it('approves the attached plan: the server records the approval and the agent executes', async function () {
    const { page } = suite.window;
    const frame = await reviewFrame(page, '#plan li');
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();
    const approved = await waitForEvents(
      suite.server,
      sessionId.replace(/^cse_/, 'session_'),
      (events) => exitPlanResults(events).find((r) => !r.isError),
      'the approval to reach the agent',
    );
    assert.match(approved.text, /## Approved Plan:\n# Plan: add a changelog/);
    const events = await sessionEvents(suite.server, sessionId.replace(/^cse_/, 'session_'));
    const decisions = decisionsSent(events);
    assert.equal(decisions.length, 1);
    assert.equal(decisions[0]!.behavior, 'allow');
    await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 30_000 });
  });

  it('attaching the same session again (by its bare id) only shows it; the picker calls it completed', async function () {
    const { page } = suite.window;
    const listed = await attachByPasting(page, sessionId, 'add a changelog');
    const row = listed.find((i) => i.includes('add a changelog')) ?? '';
    assert.match(row, /completed/, row);
    assert.doesNotMatch(row, /waiting for a message/);
    await reviewFrame(page, '#plan li');
    const log = extensionLog(suite.window);
    assert.equal((log.match(/attached to session /g) ?? []).length, 1, 'attached once');
  });

  it('an archived session attaches read-only: the panel says why and offers no decision', async function () {
    const { page } = suite.window;
    const { server } = suite;
    const archivedId = await createByHttp(server, 'rename the build script');
    await planRequested(server, archivedId);
    const archived = await fetch(`${server.url}/v1/code/sessions/${archivedId}/archive`, {
      method: 'POST',
      headers: server.headers({ 'content-type': 'application/json' }),
      body: '{}',
    });
    assert.equal(archived.status, 200);
    await attachByPasting(page, archivedId, 'rename the build script');
    const frame = await reviewFrame(page, '#plan li');
    await waitFor(
      async () => ((await frame.locator(HOST_NOTICE).textContent()) ?? '').includes('Read-only: this session is archived') || undefined,
      { timeoutMs: 20_000, message: 'the read-only notice' },
    );
    const approve = frame.getByRole('button', { name: 'Approve', exact: true });
    assert.ok((await approve.count()) === 0 || !(await approve.isEnabled()), 'no enabled Approve on a read-only session');
    await screenshot(page, 'attached-read-only');
    const decisions = decisionsSent(await sessionEvents(server, archivedId.replace(/^cse_/, 'session_')));
    assert.equal(decisions.length, 0, 'nothing was sent to the archived session');
  });

  it('a session on a server we hold no token for attaches read-only when that server runs without one', async function () {
    const { page } = suite.window;
    const open = await startServer({ scenario: scenario('one-plan.json'), token: null });
    try {
      const id = await createByHttp(open, 'tidy the imports');
      await planRequested(open, id);
      await attachByPasting(page, `${open.url}/v1/sessions/${id.replace(/^cse_/, 'session_')}`);
      const frame = await reviewFrame(page, '#plan li');
      await waitFor(async () => ((await frame.locator('.panel-header').textContent()) ?? '').includes('tidy the imports') || undefined, {
        timeoutMs: 20_000,
        message: 'the review of the session on the open server',
      });
      await waitFor(async () => ((await frame.locator(HOST_NOTICE).textContent()) ?? '').includes('no token is set for') || undefined, {
        timeoutMs: 20_000,
        message: 'the no-token notice',
      });
      const approve = frame.getByRole('button', { name: 'Approve', exact: true });
      assert.ok((await approve.count()) === 0 || !(await approve.isEnabled()), 'no enabled Approve without a token');
      assert.equal(decisionsSent(await sessionEvents(open, id.replace(/^cse_/, 'session_'))).length, 0);
    } finally {
      await open.stop();
    }
  });

  it('a server that wants a token we do not have is not read: Set Server Token… sets it for that server and attaches, the backend unchanged', async function () {
    const { page, probe } = suite.window;
    const guarded = await startServer({ scenario: scenario('one-plan.json') });
    try {
      const id = await createByHttp(guarded, 'bump the version');
      await planRequested(guarded, id);
      await attachByPasting(page, `${guarded.url}/v1/code/sessions/${id}`);
      await clickNotificationButton(page, 'refuses requests without its token', 'Set Server Token…', { timeoutMs: 20_000 });
      // The token is asked for that link's server, not for ultraplan.server.url.
      await answerInputBox(page, guarded.token!, { title: `token for ${new URL(guarded.url).origin}` });
      const frame = await reviewFrame(page, '#plan li');
      await waitFor(async () => ((await frame.locator('.panel-header').textContent()) ?? '').includes('bump the version') || undefined, {
        timeoutMs: 20_000,
        message: 'the review of the session on the guarded server',
      });
      await waitFor(async () => (await frame.getByRole('button', { name: 'Approve', exact: true }).isEnabled()) || undefined, {
        timeoutMs: 20_000,
        message: 'Approve, enabled: the token makes the session decidable here',
      });
      assert.equal(await probe.getConfiguration('ultraplan', 'server.url'), suite.server.url, 'the backend in use is unchanged');
      const log = extensionLog(suite.window);
      assert.ok(!log.includes(suite.server.token!) && !log.includes(guarded.token!), 'no token is in the log');
    } finally {
      await guarded.stop();
    }
  });
});

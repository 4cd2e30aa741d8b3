// Safety in real code-server: a hostile plan runs no script and loads nothing (a recording server
// sees no request) while its text stays readable; a stale decision (an edit of a plan that another
// review already rejected) is refused with a message and never reaches the agent.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { ServerProcess } from '../support/serverProcess';
import { readStatusBar, runCommand, screenshot, statusBarTexts, waitFor, waitForNotification } from './harness';
import {
  decisionsSent,
  listSessions,
  planTask,
  reviewFrame,
  revisionFrame,
  scenario,
  sessionEvents,
  startScenarioServer,
  suiteWindow,
  useServer,
  waitForEvents,
} from './ultraplanSteps';

async function startRecordingServer(): Promise<{ origin: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function hostilePlan(origin: string): string {
  const lines = [
    '# Plan: totally normal refactor',
    '',
    `<script>fetch('${origin}/script')</script>`,
    `<img src="x" onerror="fetch('${origin}/onerror')">`,
    `![tracking pixel](${origin}/remote-image.png)`,
    // No URL inside this one: clicking its text must do nothing at all (an http link would open).
    '[run me](javascript:alert(document.domain))',
    '[stop everything](command:ultraplan.stopSession)',
    `<iframe src="${origin}/iframe"></iframe>`,
    '',
    '1. Step that keeps its <b>text</b> readable',
  ];
  for (let i = lines.length; i < 5000; i++) lines.push(`- filler line ${i + 1}`);
  lines.push('LAST LINE OF THE HOSTILE PLAN');
  return lines.join('\n');
}

describe('safety: hostile plan and stale decisions (server backend)', function () {
  const suite = suiteWindow({ suite: 'safety' });
  let hostileServer: ServerProcess | undefined;
  let reviseServer: ServerProcess | undefined;
  let recorder: Awaited<ReturnType<typeof startRecordingServer>> | undefined;
  let scenarioDir = '';

  before(async function () {
    recorder = await startRecordingServer();
    scenarioDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ultraplan-hostile-'));
    const file = path.join(scenarioDir, 'hostile.json');
    fs.writeFileSync(file, JSON.stringify({ title: 'hostile plan', steps: [{ plan: hostilePlan(recorder.origin) }] }));
    hostileServer = await startScenarioServer(file);
    reviseServer = await startScenarioServer(scenario('review-loop.json'));
  });
  after(async function () {
    await hostileServer?.stop();
    await reviseServer?.stop();
    await recorder?.close();
    fs.rmSync(scenarioDir, { recursive: true, force: true });
  });

  it('renders a hostile 5,000-line plan without running or loading anything, text readable', async function () {
    const { page } = suite.window;
    await useServer(suite.window, hostileServer!);
    await planTask(page, 'refactor');
    const readyAt = Date.now();
    // The frame is looked up again on each try: the webview may be re-created while it loads.
    const frame = await waitFor(
      async () => {
        const f = await reviewFrame(page, '#plan');
        const text = await f
          .locator('#plan')
          .textContent({ timeout: 2000 })
          .catch(() => '');
        return (text ?? '').includes('LAST LINE OF THE HOSTILE PLAN') ? f : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, message: 'the whole plan to render' },
    );
    const text = (await frame.locator('#plan').textContent()) ?? '';
    // Readable: the text is there, whether rendered or (for a plan this long) shown as source.
    assert.match(text, /Step that keeps its (<b>)?text(<\/b>)? readable/);
    assert.match(text, /run me/);
    assert.equal(await frame.locator('#plan script, #plan iframe, #plan [onerror]').count(), 0);
    console.log(`      status bar "plan ready" -> last of 5,000 lines in the panel: ${Date.now() - readyAt} ms`);
    // The javascript: and command: links are not links at all; clicking their text does nothing.
    assert.equal(await frame.locator('#plan a[href^="javascript:"], #plan a[href^="command:"], #plan a:not([href^="http"])').count(), 0);
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await frame.getByText('run me', { exact: false }).first().click({ timeout: 5000 });
    await frame.getByText('stop everything', { exact: false }).first().click({ timeout: 5000 });
    await page.waitForTimeout(2000);
    assert.deepEqual(recorder!.requests, [], 'no request reached the recording server');
    assert.deepEqual(dialogs, [], 'no script ran (no alert)');
    assert.ok(
      (await statusBarTexts(page)).some((t) => t.includes('Ultraplan: plan ready')),
      'the command: link did not stop the session',
    );
    const [session] = await listSessions(hostileServer!);
    assert.notEqual(session?.session_status, 'archived');
    await screenshot(page, 'hostile-plan');
  });

  it('refuses an edited approval for a plan that another review rejected meanwhile', async function () {
    const { page, probe } = suite.window;
    // Stop the hostile session first (Stop Session archives it), so the status bar speaks of the new one.
    await runCommand(page, 'Ultraplan: Stop Session');
    await readStatusBar(page, 'Ultraplan: stopped', { timeoutMs: 15_000 });
    await waitFor(async () => ((await listSessions(hostileServer!))[0]?.session_status === 'archived' ? true : undefined), {
      timeoutMs: 15_000,
      message: 'Stop Session to archive the hostile session',
    });
    await useServer(suite.window, reviseServer!);
    await planTask(page, 'add a dark mode toggle');
    const [session] = await listSessions(reviseServer!);
    const sessionId = session!.id;
    const frame = await reviewFrame(page, '#plan li');
    await waitFor(async () => ((await frame.locator('#plan').textContent()) ?? '').includes('localStorage') || undefined, {
      timeoutMs: 20_000,
      message: 'revision 1 in the panel',
    });
    await frame.getByRole('button', { name: 'Edit', exact: true }).click();
    await waitFor(async () => (await probe.editors()).find((e) => e.uri.startsWith('untitled:') && e.text.includes('localStorage')), {
      timeoutMs: 20_000,
      message: 'the edit to open',
    });

    // Another reviewer (straight through the server API) rejects revision 1; the agent revises.
    const events = await sessionEvents(reviseServer!, sessionId);
    const request = events.find(
      (e) => e.type === 'control_request' && (e as { request?: { subtype?: string } }).request?.subtype === 'can_use_tool',
    ) as { request_id: string } | undefined;
    assert.ok(request, "the plan's control_request");
    const res = await fetch(`${reviseServer!.url}/v1/sessions/${sessionId}/events`, {
      method: 'POST',
      headers: reviseServer!.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({
        events: [
          {
            type: 'control_response',
            response: {
              subtype: 'success',
              request_id: request.request_id,
              response: { behavior: 'deny', message: 'Rejected in another review' },
            },
          },
        ],
      }),
    });
    assert.ok(res.ok, `external reject: HTTP ${res.status}`);
    await revisionFrame(page, 'Revision 2 of 2', 60_000);
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 10_000 });

    // The old edit is still open: approving it now must be refused.
    await page.locator('.tabs-container .tab', { hasText: 'Untitled' }).first().click();
    const untitled = (await probe.editors()).find((e) => e.uri.startsWith('untitled:'));
    assert.ok(untitled, 'the edit is still open');
    await runCommand(page, 'Ultraplan: Approve Edited Plan');
    await waitForNotification(page, 'superseded by a newer revision', { timeoutMs: 15_000 });
    await screenshot(page, 'stale-refused');
    await page.waitForTimeout(1000);
    const sent = decisionsSent(await sessionEvents(reviseServer!, sessionId));
    assert.deepEqual(
      sent.map((d) => d.behavior),
      ['deny'],
      "only the other review's rejection was sent; the stale approval never left the editor",
    );
    // The current plan can still be decided in the panel, brought back by its tab as a person
    // would (the edit may cover it in its group).
    await page.locator('.tabs-container .tab', { hasText: 'Ultraplan Review' }).first().click();
    // Shown again, the panel's page may be set up anew: its label is blank until the state arrives.
    const panel = await revisionFrame(page, 'Revision 2 of 2');
    assert.equal(await panel.getByRole('button', { name: 'Approve', exact: true }).isEnabled(), true);
    await waitForEvents(reviseServer!, sessionId, (e) => e.length > 0, 'events');
  });
});

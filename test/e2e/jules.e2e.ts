// Jules as the backend, in real code-server + Chromium: the strict Jules stand-in
// (test/support/jules/standIn.ts, built from the published REST reference) stands where
// jules.googleapis.com would, through `ultraplan.jules.baseUrl`; the workspace is a git repository
// with a github.com remote. The key through the real command into secret storage -> the inbox's
// Jules group lists a session started elsewhere -> plan here: the create request as the reference
// defines it, the plan in the panel with its link and what Jules cannot do said where the person
// decides -> Reject with a line comment goes as a message and the revised plan arrives -> Approve
// goes through :approvePlan and the execution is followed to completed -> the inbox row of the
// session started elsewhere follows it and opens its review. Every request carries the key in its
// header, and the key reaches no log.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { makeGitRepo } from '../support/claudeCompatFixtures';
import { JulesStandIn } from '../support/jules/standIn';
import { answerInputBox, openTestWindow, readStatusBar, runCommand, screenshot, waitFor, type TestWindow } from './harness';
import {
  SIDEBAR,
  extensionLogFiles,
  inboxGroups,
  planTask,
  reportIfFailed,
  revisionFrame,
  reviewFrame,
  writeReview,
} from './ultraplanSteps';

const KEY = 'AIzaSy-e2e-jules-key-0123456789abcdef';
const REPO = 'acme/widgets';
/** A session started outside this window (the Jules web app), waiting on its plan; its id. The title is the prompt in lower case. */
async function startedElsewhere(at: JulesStandIn, prompt: string): Promise<string> {
  const created = await fetch(`${at.baseUrl}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': KEY },
    body: JSON.stringify({
      prompt,
      title: prompt.toLowerCase(),
      sourceContext: { source: `sources/github/${REPO}`, githubRepoContext: { startingBranch: 'main' } },
      requirePlanApproval: true,
    }),
  });
  assert.equal(created.status, 200);
  return ((await created.json()) as { id: string }).id;
}

describe('Jules backend: key, inbox, plan, reject as a message, approve, attach (code-server + Chromium)', function () {
  let window: TestWindow | undefined;
  let standIn: JulesStandIn | undefined;
  let other: JulesStandIn | undefined;
  let workspace = '';
  let ownId = '';
  let elsewhereId = '';

  before(async function () {
    standIn = await new JulesStandIn({ key: KEY }).start();
    workspace = await makeGitRepo(`https://github.com/${REPO}.git`);
    window = await openTestWindow({
      suite: 'jules',
      workspace,
      settings: {
        'ultraplan.backend': 'jules',
        'ultraplan.jules.baseUrl': standIn.baseUrl,
      },
    });
  });
  afterEach(async function () {
    await reportIfFailed(this, window);
  });
  after(async function () {
    await window?.close();
    await standIn?.close();
    await other?.close();
    if (workspace) await fs.promises.rm(workspace, { recursive: true, force: true });
  });

  it('stores the key through "Set Jules API Key…"; the inbox lists the Jules sessions of that key', async function () {
    const { page, probe } = window!;
    // A session started elsewhere (the Jules web app): its plan waits for approval there.
    elsewhereId = await startedElsewhere(standIn!, 'Fix the flaky login test');

    await runCommand(page, 'Ultraplan: Set Jules API Key…');
    await answerInputBox(page, KEY);
    await probe.executeCommand('ultraplan.inbox.focus');
    await waitFor(async () => (await inboxGroups(page)).Jules ?? [], {
      timeoutMs: 30_000,
      intervalMs: 500,
      message: "the inbox's Jules group to list the session started elsewhere",
      until: (rows) => rows.includes('fix the flaky login test'),
    });
    await screenshot(page, 'jules-inbox');
    assert.ok(
      standIn!.requests.some((r) => r.method === 'GET' && r.path === '/v1alpha/sessions' && r.keyOk),
      'the group listed the sessions with the key',
    );
  });

  it('plans on Jules: the create request as the reference defines it, the plan with its link, what Jules cannot do said at the decision', async function () {
    const { page } = window!;
    await planTask(page, 'ultraplan add a changelog');
    const create = standIn!.requests.filter((r) => r.method === 'POST' && r.path === '/v1alpha/sessions' && r.keyOk);
    assert.equal(create.length, 2, 'the session started elsewhere, then ours');
    const body = JSON.parse(create[1]!.body) as {
      prompt: string;
      requirePlanApproval: boolean;
      sourceContext: { source: string; githubRepoContext?: { startingBranch?: string } };
    };
    assert.equal(body.requirePlanApproval, true);
    assert.equal(body.sourceContext.source, `sources/github/${REPO}`);
    assert.equal(body.sourceContext.githubRepoContext?.startingBranch, 'main');
    assert.match(body.prompt, /add a changelog/);
    ownId = [...standIn!.sessions.values()].find((s) => s.id !== elsewhereId)!.id;

    const frame = await reviewFrame(page, '#plan li');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Create hello\.txt/);
    assert.equal(await frame.locator('a.session-link').getAttribute('href'), `https://jules.google.com/session/${ownId}`);
    assert.match(
      (await frame.locator('body').textContent()) ?? '',
      /Jules has no reject: your feedback and comments are sent to it as a message/,
    );
    for (const [name, why] of [
      ['Edit', /Jules approves only the plan it proposed/],
      ['Teleport', /cannot stop a session/],
    ] as const) {
      const button = frame.getByRole('button', { name, exact: true });
      assert.equal(await button.isDisabled(), true, `${name} is not offered on Jules`);
      assert.match((await button.getAttribute('title')) ?? '', why);
    }
    await screenshot(page, 'jules-plan');
  });

  it('Reject with a line comment reaches Jules as a message; its revised plan arrives as revision 2', async function () {
    const { page } = window!;
    const frame = await reviewFrame(page, '#plan li');
    await writeReview(frame, { line: 'Create hello.txt', comment: 'Call it greeting.md', feedback: 'Use markdown.' });
    await frame.getByRole('button', { name: 'Reject', exact: true }).click();
    const message = await waitFor(
      () => standIn!.requests.find((r) => r.method === 'POST' && r.path === `/v1alpha/sessions/${ownId}:sendMessage`),
      { timeoutMs: 20_000, message: 'the rejection to reach Jules as a message' },
    );
    const prompt = (JSON.parse(message.body) as { prompt: string }).prompt;
    assert.match(prompt, /Use markdown\./);
    assert.match(prompt, /Create hello\.txt[\s\S]*Call it greeting\.md/);
    const revised = await revisionFrame(page, 'Revision 2 of 2', 30_000);
    assert.match((await revised.locator('#plan').textContent()) ?? '', /Address the review: /);
  });

  it('Approve goes through :approvePlan once, and the execution is followed to completed', async function () {
    const { page } = window!;
    const frame = await reviewFrame(page, '.revision-label');
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();
    await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 60_000 });
    const approvals = standIn!.requests.filter((r) => r.path === `/v1alpha/sessions/${ownId}:approvePlan`);
    assert.equal(approvals.length, 1);
    assert.equal(approvals[0]!.body, '', 'the reference: "The request body must be empty."');
    assert.equal(standIn!.sessions.get(ownId)?.state, 'COMPLETED');
    await screenshot(page, 'jules-completed');
  });

  it('the inbox row of the session started elsewhere follows it here and opens its review', async function () {
    const { page, probe } = window!;
    await probe.executeCommand('ultraplan.inbox.focus');
    await page.locator(`${SIDEBAR} .monaco-list-row`, { hasText: 'fix the flaky login test' }).first().click();
    const frame = await waitFor(
      async () => {
        const f = await reviewFrame(page, '#plan li');
        return ((await f.locator('#plan').textContent()) ?? '').includes('Fix the flaky login test') ? f : undefined;
      },
      { timeoutMs: 30_000, message: "the review of the session started elsewhere to show Jules's plan" },
    );
    assert.equal(await frame.locator('a.session-link').getAttribute('href'), `https://jules.google.com/session/${elsewhereId}`);
    assert.equal(standIn!.sessions.get(elsewhereId)?.state, 'AWAITING_PLAN_APPROVAL', 'following it decided nothing');
    await screenshot(page, 'jules-attached');
  });

  it("another API address in the settings: the inbox's Jules group lists the sessions there at once", async function () {
    const { page, probe } = window!;
    other = await new JulesStandIn({ key: KEY }).start();
    await startedElsewhere(other, 'A session at the other address');
    await probe.updateConfiguration('ultraplan', 'jules.baseUrl', other.baseUrl);
    await probe.executeCommand('ultraplan.inbox.focus');
    const rows = await waitFor(async () => (await inboxGroups(page)).Jules ?? [], {
      timeoutMs: 15_000,
      intervalMs: 500,
      message: "the Jules group to list the other address's sessions without a new key or a reload",
      until: (listed) => listed.includes('a session at the other address'),
    });
    assert.ok(!rows.includes('fix the flaky login test'), `the first address's sessions are gone: ${rows.join(' | ')}`);
    assert.ok(other.requests.some((r) => r.method === 'GET' && r.path === '/v1alpha/sessions'));
  });

  it('sent the key only in its header: every request carried it, and no log holds it', function () {
    const requests = [...standIn!.requests, ...(other?.requests ?? [])];
    assert.ok(standIn!.requests.length > 0);
    assert.deepEqual(
      requests.filter((r) => !r.keyOk).map((r) => `${r.method} ${r.path}`),
      [],
    );
    assert.ok(requests.every((r) => !r.query.includes(KEY) && !r.body.includes(KEY)));
    const logs = extensionLogFiles(window!);
    assert.ok(logs.length > 0, 'the extension wrote its log');
    for (const file of logs) assert.ok(!fs.readFileSync(file, 'utf8').includes(KEY), `${file} holds no key`);
  });
});

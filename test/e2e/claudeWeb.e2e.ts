// Claude Code on the web as the backend, in real code-server + Chromium: the strict
// Claude-compatibility proxy stands where api.anthropic.com would, in front of a real
// ultraplan-server running a scripted scenario; Claude Code's login comes from a temporary
// CLAUDE_CONFIG_DIR; the workspace is a git repository with a github.com remote.
// plan -> the panel shows the plan and the session link -> approve -> executed, not archived, the
// pull request shown; teleport -> archived, plan file saved; the GitHub app missing -> its message,
// Retry after installing -> the unpushed-work question -> plan; a decision the service refuses ->
// said plainly, still pending; stop -> archived. The proxy is the strict server: the current
// /v1/code/sessions wire only, as Claude Code 2.1.332 sends it. The login file is never written
// and the token reaches no log.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startClaudeCompatProxy, type ClaudeCompatProxy } from '../support/claudeCompatProxy';
import { assertUntouched, makeClaudeHome, makeGitRepo, type ClaudeHome } from '../support/claudeCompatFixtures';
import { createCodeSessionByHttp, type ServerProcess } from '../support/serverProcess';
import type { Page } from 'playwright-core';
import {
  answerInputBox,
  closeQuickInput,
  answerQuickPick,
  clickNotificationButton,
  openTestWindow,
  readStatusBar,
  runCommand,
  screenshot,
  statusBarItem,
  waitFor,
  waitForNotification,
  type TestWindow,
} from './harness';
import {
  attachByPasting,
  listSessions,
  planRequested,
  planTask,
  reportIfFailed,
  reviewFrame,
  scenario,
  sessionEvents,
  startScenarioServer,
} from './ultraplanSteps';

const ORG = '6f1c1a8e-0000-4000-8000-00000000e2e0';
const REPO = 'acme/widgets';

/** Every file under `dir` (bounded), for the token search. */
function filesUnder(dir: string, limit = 5000): string[] {
  const out: string[] = [];
  const stack = [dir];
  while (stack.length > 0 && out.length < limit) {
    const current = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const full = path.join(current, e.name);
      if (e.isDirectory()) stack.push(full);
      else if (e.isFile()) out.push(full);
    }
  }
  return out;
}

/**
 * The palette, once more if something (an editor or panel the extension reveals) took the focus
 * and closed it while it was being typed into.
 */
async function runCommandSettled(page: Page, title: string): Promise<void> {
  try {
    await runCommand(page, title, { timeoutMs: 10_000 });
  } catch {
    await closeQuickInput(page);
    await runCommand(page, title);
  }
}

/** Clears the toasts through the workbench command (no palette: a toast or panel can steal its focus). */
async function clearNotifications(window: TestWindow): Promise<void> {
  await window.probe.executeCommand('notifications.clearAll');
}

describe('Claude Code on the web backend: plan, approve, teleport, eligibility (code-server + Chromium)', function () {
  let window: TestWindow | undefined;
  let server: ServerProcess | undefined;
  let proxy: ClaudeCompatProxy | undefined;
  let home: ClaudeHome | undefined;
  let workspace = '';
  let credentialsBefore: { content: string; mtimeMs: number } | undefined;
  const token = `sk-ant-oat01-e2e-${randomBytes(16).toString('hex')}`;
  let firstId = '';

  before(async function () {
    server = await startScenarioServer(scenario('claude-web-plan.json'));
    home = await makeClaudeHome({ accessToken: token }, ORG);
    credentialsBefore = await home.snapshot();
    proxy = await startClaudeCompatProxy({
      upstreamUrl: server.url,
      upstreamToken: server.token,
      validTokens: [token],
      organizationUuid: ORG,
      repos: { [REPO]: { app: 'installed' } },
    });
    workspace = await makeGitRepo(`https://github.com/${REPO}.git`);
    window = await openTestWindow({
      suite: 'claude-web',
      workspace,
      env: { CLAUDE_CONFIG_DIR: home.configDir },
      settings: {
        'ultraplan.backend': 'claude-web',
        'ultraplan.claudeWeb.baseUrl': proxy.url,
        'ultraplan.teleport.target': 'file',
      },
    });
  });
  afterEach(async function () {
    await reportIfFailed(this, window);
  });
  after(async function () {
    await window?.close();
    await proxy?.close();
    await server?.stop();
    await home?.remove();
    if (workspace) await fs.promises.rm(workspace, { recursive: true, force: true });
  });

  it('"Choose Backend…" offers Claude Code on the web with its environment picker (cloud environments only)', async function () {
    const { page, probe } = window!;
    await runCommandSettled(page, 'Ultraplan: Choose Backend…');
    await answerQuickPick(page, 'Claude Code on the web (cloud)');
    const picker = page.locator('.quick-input-widget');
    await picker.locator('.quick-input-list-row', { hasText: 'Automatic' }).first().waitFor({ timeout: 20_000 });
    const rows = await picker.locator('.quick-input-list-row').allInnerTexts();
    assert.ok(
      rows.some((r) => r.includes('Default') && r.includes('env_cloud_default')),
      rows.join(' | '),
    );
    assert.ok(!rows.some((r) => r.includes('my laptop')), 'a bridge cannot host a remote plan and is not offered');
    await screenshot(page, 'environment-picker');
    await answerQuickPick(page, 'Default');
    await waitFor(async () => (await probe.getConfiguration('ultraplan', 'claudeWeb.environmentId')) === 'env_cloud_default' || undefined, {
      timeoutMs: 10_000,
      message: 'the environment choice to be stored',
    });
    assert.equal(await probe.getConfiguration('ultraplan', 'backend'), 'claude-web');
  });

  it("plans: the request is Claude Code's, the panel shows the plan and the session link (panel, tooltip, log)", async function () {
    const { page } = window!;
    await planTask(page, 'ultraplan add a changelog');
    const sessions = await listSessions(server!);
    assert.equal(sessions.length, 1);
    firstId = sessions[0]!.id;
    const link = `https://claude.ai/code/${firstId}`;

    // The older create is tried first and answered sessions_v1_retired; the repeat is the current one.
    assert.deepEqual(
      proxy!.requests.filter((r) => r.method === 'POST' && /^\/v1(\/code)?\/sessions$/.test(r.path)).map((r) => `${r.path} ${r.status}`),
      ['/v1/sessions 400', '/v1/code/sessions 200'],
    );
    const create = proxy!.requests.find((r) => r.method === 'POST' && r.path === '/v1/code/sessions');
    assert.ok(create, 'the session was created through the Claude-compatible API');
    assert.equal(create.headers['x-organization-uuid'], ORG);
    assert.equal(create.headers['anthropic-client-platform'], 'ultraplan_vscode');
    assert.match(create.headers['user-agent'] ?? '', /^ultraplan-vscode\/\d+\.\d+\.\d+/);
    const body = create.body as {
      title: string;
      environment_id: string;
      config: { model: string; sources: Array<{ url: string; revision?: string }> };
      events: Array<{ payload: { uuid: string; request?: { mode?: string; ultraplan?: boolean } } }>;
    };
    assert.equal(body.title, 'ultraplan: plan add a changelog');
    assert.equal(body.environment_id, 'env_cloud_default');
    assert.ok(body.config.model);
    assert.deepEqual(body.config.sources[0], { type: 'git_repository', url: `https://github.com/${REPO}`, revision: 'main' });
    assert.equal(body.events[0]?.payload.request?.mode, 'plan');
    assert.equal(body.events[0]?.payload.request?.ultraplan, true);
    assert.ok(body.events.every((e) => typeof e.payload.uuid === 'string'));

    const frame = await reviewFrame(page, '#plan li');
    assert.match((await frame.locator('#plan').textContent()) ?? '', /Link it from README\.md/);
    assert.equal(await frame.locator('a.session-link').getAttribute('href'), link);
    assert.match((await frame.locator('body').textContent()) ?? '', /Claude Code on the web · acme\/widgets · Default/);
    await screenshot(page, 'plan-ready');

    await statusBarItem(page, 'Ultraplan: plan ready').hover();
    const hover = page.locator('.monaco-hover, .workbench-hover').filter({ hasText: 'Session:' }).first();
    await hover.waitFor({ state: 'visible', timeout: 10_000 });
    assert.match((await hover.textContent()) ?? '', new RegExp(link.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
    await screenshot(page, 'status-tooltip');
    await page.mouse.move(400, 300);

    const logFile = await waitFor(
      () => filesUnder(window!.server.userDataDir).find((f) => /Ultraplan\.log$/.test(f) && fs.readFileSync(f, 'utf8').includes(link)),
      {
        timeoutMs: 10_000,
        message: 'the session link in the Ultraplan log',
      },
    );
    assert.ok(logFile);
  });

  it('approve: the remote executes to its result, the outcome names the pull request and branch, not archived', async function () {
    const { page } = window!;
    const frame = await reviewFrame(page, '#plan li');
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();
    await readStatusBar(page, 'Ultraplan: approved · completed', { timeoutMs: 60_000 });
    const outcome = frame.locator('section.outcome');
    await waitFor(async () => ((await outcome.textContent()) ?? '').includes('pull/7') || undefined, {
      timeoutMs: 10_000,
      message: 'the outcome in the panel',
    });
    const text = (await outcome.textContent()) ?? '';
    assert.match(text, /Pull request: https:\/\/github\.com\/acme\/widgets\/pull\/7/);
    assert.match(text, /Branch: claude\/add-a-changelog-7f3a1/);
    await screenshot(page, 'approved-outcome');

    const events = await sessionEvents(server!, firstId);
    const allow = events.filter((e) => e.type === 'control_response');
    assert.equal(allow.length, 1, 'one decision reached the agent');
    assert.equal(
      (await listSessions(server!)).find((s) => s.id === firstId)?.session_status !== 'archived',
      true,
      'approve leaves the session running on the remote',
    );
    assert.ok(!proxy!.requests.some((r) => r.path.endsWith('/archive')), 'no archive request after approve');
    await clearNotifications(window!);
  });

  it('teleport: the plan file is saved and the remote session archived', async function () {
    const { page } = window!;
    await planTask(page, 'ultraplan add a changelog, run it here');
    const second = (await listSessions(server!)).find((s) => s.id !== firstId);
    assert.ok(second);
    const frame = await reviewFrame(page, '#plan li');
    await waitFor(async () => (await frame.getByRole('button', { name: 'Teleport', exact: true }).isEnabled()) || undefined, {
      timeoutMs: 20_000,
      message: 'Teleport enabled',
    });
    await frame.getByRole('button', { name: 'Teleport', exact: true }).click();
    await readStatusBar(page, 'Ultraplan: teleported', { timeoutMs: 30_000 });
    await waitFor(async () => (await listSessions(server!)).find((s) => s.id === second.id)?.session_status === 'archived' || undefined, {
      timeoutMs: 20_000,
      message: 'the teleported session to be archived',
    });
    assert.ok(
      proxy!.requests.some(
        (r) => r.method === 'POST' && r.path === `/v1/code/sessions/cse_${second.id.slice('session_'.length)}/archive` && r.status === 200,
      ),
    );
    const plansDir = path.join(workspace, '.ultraplan', 'plans');
    const files = fs.readdirSync(plansDir).filter((f) => f.endsWith('.md'));
    assert.equal(files.length, 1, files.join(', '));
    assert.match(fs.readFileSync(path.join(plansDir, files[0]!), 'utf8'), /# Plan: add a changelog/);
    // Target "file": the saved plan opens in an editor (after the archive).
    await waitFor(async () => (await window!.probe.editors()).find((e) => e.uri.endsWith(files[0]!) && e.active), {
      timeoutMs: 20_000,
      message: 'the saved plan to open in the editor',
    });
    // The approved first session is still not archived.
    assert.notEqual((await listSessions(server!)).find((s) => s.id === firstId)?.session_status, 'archived');
    await screenshot(page, 'teleported');
  });

  it('the GitHub app not installed: its cause and fix; Retry after installing asks about unpushed work, then plans', async function () {
    const { page } = window!;
    const before = (await listSessions(server!)).length;
    proxy!.settings.repos[REPO] = { app: 'not_installed' };
    await runCommandSettled(page, 'Ultraplan: Plan a Task…');
    await answerInputBox(page, 'add a license file');
    const toast = await waitForNotification(page, 'The Claude GitHub app is not installed on acme/widgets', { timeoutMs: 30_000 });
    const buttons = await toast.locator('.monaco-button').allInnerTexts();
    assert.ok(buttons.includes('Install the GitHub App') && buttons.includes('Retry'), buttons.join(' | '));
    assert.match((await toast.textContent()) ?? '', /github\.com\/apps\/claude/);
    await screenshot(page, 'github-app-missing');
    assert.equal((await listSessions(server!)).length, before, 'no session was created');

    proxy!.settings.repos[REPO] = { app: 'installed' };
    await clickNotificationButton(page, 'The Claude GitHub app is not installed', 'Retry');
    // The teleported plan file is untracked: the remote will not see it, so the launch asks first.
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 30_000 });
    assert.match((await dialog.textContent()) ?? '', /not committed and pushed/);
    await screenshot(page, 'unpushed-warning');
    await dialog.getByRole('button', { name: 'Launch Anyway' }).click();
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 60_000 });
    assert.equal((await listSessions(server!)).length, before + 1);
    await clearNotifications(window!);
  });

  it('after a reload, a decision the service refuses is said plainly, offers the browser and stays pending', async function () {
    const { page } = window!;
    const third = (await listSessions(server!)).at(-1)!;
    const expectedLink = `https://claude.ai/code/${third.id}`; // session_X: links use that form
    // The panel shows the new session before the reload (the extension keeps what it follows in
    // workspace state, written shortly after each change; a reload in the same instant can lose it).
    await waitFor(
      async () => {
        const shown = await reviewFrame(page, '#plan li');
        return (
          (await shown
            .locator('a.session-link')
            .getAttribute('href', { timeout: 2000 })
            .catch(() => null)) === expectedLink || undefined
        );
      },
      { timeoutMs: 30_000, intervalMs: 250, message: 'the new session in the panel before the reload' },
    );
    // After a window reload the session is re-attached on this backend: only the login and the
    // organization are checked (no policy, environment or GitHub call).
    const reloadedAt = Date.now();
    const requestsBefore = proxy!.requests.length;
    await window!.reload();
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 60_000 });
    const sinceReload = proxy!.requests.slice(requestsBefore).map((r) => r.path);
    assert.ok(!sinceReload.some((p) => /policy_limits|environment_providers|code\/repos/.test(p)), sinceReload.join(', '));
    console.log(`      reload -> re-attached session at "plan ready": ${Date.now() - reloadedAt} ms`);
    // The restored panel may paint its saved state before the session is re-attached; the link
    // arrives with the first state from the re-attached session.
    const revivedLink = await waitFor(
      async () => {
        const revived = await reviewFrame(page, '#plan li');
        const href = await revived
          .locator('a.session-link')
          .getAttribute('href', { timeout: 2000 })
          .catch(() => null);
        return href === expectedLink ? href : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, message: 'the session link in the re-attached panel' },
    );
    assert.equal(revivedLink, expectedLink);
    proxy!.settings.refuseDecisions = 422;
    const frame = await reviewFrame(page, '#plan li');
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();
    const toast = await waitForNotification(page, 'Your decision was NOT sent', { timeoutMs: 30_000 });
    assert.ok((await toast.locator('.monaco-button').allInnerTexts()).includes('Review in Browser'));
    await screenshot(page, 'decision-not-delivered');
    // Not shown as sent: still "plan ready", buttons usable again, nothing reached the agent.
    await readStatusBar(page, 'Ultraplan: plan ready');
    await waitFor(async () => (await frame.getByRole('button', { name: 'Approve', exact: true }).isEnabled()) || undefined, {
      timeoutMs: 10_000,
      message: 'the panel to release its decision lock',
    });
    assert.match((await frame.locator('.notice').first().textContent()) ?? '', /NOT sent/);
    assert.equal((await sessionEvents(server!, third.id)).filter((e) => e.type === 'control_response').length, 0);
    proxy!.settings.refuseDecisions = false;
    await clearNotifications(window!);

    await runCommandSettled(page, 'Ultraplan: Stop Session');
    await waitFor(async () => (await listSessions(server!)).find((s) => s.id === third.id)?.session_status === 'archived' || undefined, {
      timeoutMs: 20_000,
      message: 'the stopped session to be archived',
    });
  });

  it('Refine Plan… seeds a new session with a saved plan as the draft to refine', async function () {
    const { page } = window!;
    const before = (await listSessions(server!)).length;
    const planFile = fs.readdirSync(path.join(workspace, '.ultraplan', 'plans')).find((f) => f.endsWith('.md'))!;
    await runCommandSettled(page, 'Ultraplan: Refine Plan…');
    await answerQuickPick(page, planFile);
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 30_000 });
    await dialog.getByRole('button', { name: 'Launch Anyway' }).click();
    const sessions = await waitFor(
      async () => {
        const all = await listSessions(server!);
        return all.length > before ? all : undefined;
      },
      { timeoutMs: 30_000, message: 'the refine session to be created' },
    );
    assert.equal(sessions.length, before + 1);
    const refined = sessions.at(-1)!;
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 60_000 });
    assert.equal(refined.title, 'ultraplan: Refine the plan "add a changelog".');
    const create = proxy!.requests.filter((r) => r.method === 'POST' && r.path === '/v1/code/sessions').at(-1)!;
    const prompt = JSON.stringify((create.body as { events: unknown[] }).events[1]);
    assert.ok(prompt.includes(`(from .ultraplan/plans/${planFile})`), prompt);
    assert.match(prompt, /<draft-plan>\\n# Plan: add a changelog/);
    await screenshot(page, 'refine-plan');
    await clearNotifications(window!);
  });

  it('the login refused while following: run `claude`, Retry follows again, the session is not archived; Stop archives it', async function () {
    const { page } = window!;
    const current = (await listSessions(server!)).at(-1)!;
    // As if the token expired and was revoked: the "service" now refuses it.
    proxy!.settings.validTokens.delete(token);
    const toast = await waitForNotification(page, "refused Claude Code's login", { timeoutMs: 30_000 });
    const buttons = await toast.locator('.monaco-button').allInnerTexts();
    assert.deepEqual(buttons.filter((b) => b === 'Open Terminal' || b === 'Retry').sort(), ['Open Terminal', 'Retry']);
    await readStatusBar(page, 'Ultraplan: failed');
    await screenshot(page, 'login-refused');
    assert.notEqual(
      (await listSessions(server!)).find((s) => s.id === current.id)?.session_status,
      'archived',
      'our login failing leaves the remote session alone',
    );
    // The person ran `claude` (it refreshed the login), then Retry.
    proxy!.settings.validTokens.add(token);
    await clickNotificationButton(page, "refused Claude Code's login", 'Retry');
    await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
    await clearNotifications(window!);
    await runCommandSettled(page, 'Ultraplan: Stop Session');
    await waitFor(async () => (await listSessions(server!)).find((s) => s.id === current.id)?.session_status === 'archived' || undefined, {
      timeoutMs: 20_000,
      message: 'the stopped session to be archived',
    });
  });

  it("Attach to Session…: lists the organization's sessions as Claude Code does, attaches a claude.ai link, and approves with the plan", async function () {
    const { page } = window!;
    await clearNotifications(window!);
    // Started elsewhere (the browser): no request of ours created it.
    const id = await createCodeSessionByHttp(server!, 'document the widgets API');
    await planRequested(server!, id);
    const linkId = id.replace(/^cse_/, 'session_');
    proxy!.requests.length = 0;
    const listed = await attachByPasting(page, `https://claude.ai/code/${linkId}`, 'document the widgets API');
    assert.ok(
      listed.some((r) => r.includes('document the widgets API')),
      listed.join(' | '),
    );
    // Recorded when it arrives, its status set when answered: wait for an answered one.
    const list = await waitFor(() => proxy!.requests.find((r) => r.method === 'GET' && r.path === '/v1/code/sessions' && r.status !== 0), {
      timeoutMs: 20_000,
      message: 'the list from the Claude-compatible API, answered',
    });
    assert.equal(list.status, 200);
    assert.deepEqual(list.query, { limit: '100' });
    assert.equal(list.headers['x-organization-uuid'], undefined);

    const frame = await reviewFrame(page, '#plan li');
    await waitFor(
      async () => ((await frame.locator('.panel-header').textContent()) ?? '').includes('document the widgets API') || undefined,
      { timeoutMs: 20_000, message: 'the review of the attached session' },
    );
    assert.equal(await frame.locator('a.session-link').getAttribute('href'), `https://claude.ai/code/${linkId}`);
    await frame.getByRole('button', { name: 'Approve', exact: true }).click();
    const sent = await waitFor(
      () =>
        proxy!.requests.find(
          (r) =>
            r.method === 'POST' &&
            r.path === `/v1/code/sessions/${id}/events` &&
            JSON.stringify(r.body).includes('control_response') &&
            r.status !== 0, // recorded when it arrives, its status set when answered
        ),
      { timeoutMs: 20_000, message: 'the approval through the Claude-compatible API, answered' },
    );
    assert.equal(sent.status, 200);
    assert.match(JSON.stringify(sent.body), /"behavior":"allow","updatedInput":\{"plan":"# Plan: add a changelog/);
    await waitFor(
      async () =>
        (await sessionEvents(server!, linkId)).some(
          (e) => e.type === 'control_response' && JSON.stringify(e).includes('"behavior":"allow"'),
        ) || undefined,
      { timeoutMs: 20_000, message: "the approval in the server's record" },
    );
    await screenshot(page, 'attached-claude-web');
  });

  it("Claude Code's login file is unchanged, and the token reached no log, setting or state", async function () {
    await assertUntouched(home!, credentialsBefore!);
    assert.ok(
      proxy!.requests.length > 0 && proxy!.requests.every((r) => r.token === token),
      'every request carried the login read from the file',
    );
    const leaks = [...filesUnder(window!.server.userDataDir), ...filesUnder(path.join(workspace, '.ultraplan'))].filter((f) => {
      try {
        return fs.readFileSync(f).includes(token);
      } catch {
        return false;
      }
    });
    assert.deepEqual(leaks, []);
    assert.ok(!window!.server.output().includes(token), 'code-server output holds no token');
  });
});

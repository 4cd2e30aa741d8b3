// Steps shared by the Ultraplan scenario suites (test/e2e/*.e2e.ts): start a real ultraplan-server
// with a scripted scenario, point the extension at it, plan a task from the palette, read what the
// agent received through the server's own events API.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { errorMessage } from '../../src/core/errors';
import { startServer, type ServerProcess } from '../support/serverProcess';
import {
  answerInputBox,
  closeQuickInput,
  findWebviewFrame,
  openTestWindow,
  readQuickInput,
  readStatusBar,
  runCommand,
  screenshot,
  screenshotIfFailed,
  waitFor,
  type TestWindow,
  type TestWindowOptions,
} from './harness';

export const SCENARIOS = path.resolve(__dirname, '..', 'fixtures', 'scenarios');

export function scenario(name: string): string {
  return path.join(SCENARIOS, name);
}

export async function startScenarioServer(file: string): Promise<ServerProcess> {
  return startServer({ scenario: file, keepAliveMs: 2000 });
}

/** Points the extension at `server` (settings through the probe, token through the real command). */
export async function useServer(window: TestWindow, server: ServerProcess): Promise<void> {
  await window.probe.updateConfiguration('ultraplan', 'backend', 'server');
  await window.probe.updateConfiguration('ultraplan', 'server.url', server.url);
  await runCommand(window.page, 'Ultraplan: Set Server Token…');
  await answerInputBox(window.page, server.token ?? '');
}

/** A suite's window and, with a scenario, the ultraplan-server it is pointed at. */
export interface SuiteWindow {
  readonly window: TestWindow;
  readonly server: ServerProcess;
}

/**
 * Registers the hooks of a suite with one window: before it, a real ultraplan-server running
 * `scenario` (when given), the window, and the extension pointed at that server (unless `connect`
 * is false: the suite does that itself, e.g. through Choose Backend); after each failed
 * test, a screenshot and the tail of the extension's log; after it, the window closed and the server
 * stopped. Call it inside `describe`; read `.window` / `.server` in the tests.
 */
export function suiteWindow(options: TestWindowOptions & { scenario?: string; connect?: boolean }): SuiteWindow {
  const { scenario: scenarioFile, connect = true, ...windowOptions } = options;
  let window: TestWindow | undefined;
  let server: ServerProcess | undefined;
  before(async function () {
    if (scenarioFile) server = await startScenarioServer(scenarioFile);
    window = await openTestWindow(windowOptions);
    if (server && connect) await useServer(window, server);
  });
  afterEach(async function () {
    await reportIfFailed(this, window);
  });
  after(async function () {
    await window?.close();
    await server?.stop();
  });
  return {
    get window(): TestWindow {
      if (!window) throw new Error(`the "${windowOptions.suite}" window is not open (its before hook failed)`);
      return window;
    },
    get server(): ServerProcess {
      if (!server) throw new Error(`the "${windowOptions.suite}" suite has no scenario server`);
      return server;
    },
  };
}

/** The title of the "Plan a Task…" input box (src/extension/extension.ts). */
const PLAN_TASK_TITLE = 'Ultraplan: Plan a Task';
const QUICK_INPUT_BOX = '.quick-input-widget .quick-input-box input';

/** The open quick input's title, or undefined when none is open. */
async function quickInputTitle(page: Page): Promise<string | undefined> {
  try {
    return (await readQuickInput(page, { timeoutMs: 500 })).title;
  } catch {
    return undefined;
  }
}

/**
 * Opens "Plan a Task…", waits until its input box has stayed open for a moment, types the prompt
 * and presses Enter only once the box still shows exactly that prompt. Throws before Enter when
 * anything moved (so a retry cannot start a second session).
 */
async function submitPlanPrompt(page: Page, prompt: string): Promise<void> {
  await runCommand(page, 'Ultraplan: Plan a Task…', { timeoutMs: 15_000 });
  // The extension may reveal an editor or the panel right then, which closes the quick input.
  await waitFor(
    async () => {
      if ((await quickInputTitle(page)) !== PLAN_TASK_TITLE) return undefined;
      await page.waitForTimeout(300);
      return (await quickInputTitle(page)) === PLAN_TASK_TITLE || undefined;
    },
    { timeoutMs: 10_000, intervalMs: 200, message: `the "${PLAN_TASK_TITLE}" input box to stay open` },
  );
  const input = page.locator(QUICK_INPUT_BOX);
  await input.fill(prompt);
  const typed = await input.inputValue();
  if (typed !== prompt || (await quickInputTitle(page)) !== PLAN_TASK_TITLE) {
    throw new Error(`the "${PLAN_TASK_TITLE}" input box did not keep the prompt (it shows ${JSON.stringify(typed)})`);
  }
  await input.press('Enter');
}

/** Plans a task from the palette and waits for the status bar to say `until`. */
export async function planTask(page: Page, prompt: string, until = 'Ultraplan: plan ready'): Promise<void> {
  try {
    await submitPlanPrompt(page, prompt);
  } catch (err) {
    // Once more from the palette: nothing was submitted (Enter goes only on a verified prompt).
    console.log(`planTask: retrying once (${errorMessage(err).split('\n')[0]})`);
    await closeQuickInput(page).catch(() => undefined);
    await submitPlanPrompt(page, prompt);
  }
  await readStatusBar(page, until, { timeoutMs: 60_000 });
}

/** Fills in a review in the panel (nothing is sent): a comment on the plan line that reads `line`, then the feedback. */
export async function writeReview(frame: Frame, review: { line: string; comment: string; feedback: string }): Promise<void> {
  await frame.locator('#plan li', { hasText: review.line }).click();
  await frame.locator('.comment-composer textarea').fill(review.comment);
  await frame.getByRole('button', { name: 'Add comment' }).click();
  await frame.locator('#feedback').fill(review.feedback);
}

/** Once the status bar says "plan ready" and the panel's revision label reads `label` ("Revision 2 of 2"): the panel's frame. */
export async function revisionFrame(page: Page, label: string, timeoutMs = 20_000): Promise<Frame> {
  await readStatusBar(page, 'Ultraplan: plan ready', { timeoutMs: 30_000 });
  // The frame is looked up on each try: the panel's webview may be recreated meanwhile.
  // A panel between two revisions shows no label for a while: that is a try to repeat, within the bound.
  return waitFor(
    async () => {
      const frame = await findWebviewFrame(page, '.revision-label', { timeoutMs: 5_000 });
      const shown = await frame
        .locator('.revision-label')
        .textContent()
        .catch(() => '');
      return shown === label ? frame : undefined;
    },
    { timeoutMs, message: `the panel to show "${label}"`, retryErrors: true },
  );
}

/** The review panel's notice from the extension (a read-only reason, reconnecting), not the panel's own refusals. */
/** The workbench's side bar, where the Plan inbox shows. */
export const SIDEBAR = '[id="workbench.parts.sidebar"]';

/** The inbox as its rows show it: each group's label and the labels of its rows, in order. */
export async function inboxGroups(page: Page): Promise<Record<string, string[]>> {
  const rows = (await page
    .locator(`${SIDEBAR} .monaco-list-row`)
    .evaluateAll((els) =>
      els.map((e) => ({ level: e.getAttribute('aria-level'), label: e.querySelector('.label-name')?.textContent?.trim() ?? '' })),
    )) as Array<{ level: string | null; label: string }>;
  const groups: Record<string, string[]> = {};
  let current: string[] | undefined;
  for (const row of rows) {
    if (row.level === '1') groups[row.label] = current = [];
    else if (row.level === '2') current?.push(row.label);
  }
  return groups;
}

export const HOST_NOTICE = '.notice:not(.notice-local)';

/**
 * The review panel's frame, once it shows `selector`. After a window reload the panel is restored
 * with the new extension host: pass `AFTER_RELOAD_MS`.
 */
export async function reviewFrame(page: Page, selector = '#plan', timeoutMs = 30_000): Promise<Frame> {
  return findWebviewFrame(page, selector, { timeoutMs });
}

/** How long a panel may take to come back after a reload on a loaded machine (seen: 30 s and more). */
export const AFTER_RELOAD_MS = 90_000;

interface StoredEvent {
  id: string;
  type: string;
  [key: string]: unknown;
}

async function getJson(server: ServerProcess, route: string): Promise<unknown> {
  const res = await fetch(`${server.url}${route}`, { headers: server.headers() });
  if (!res.ok) throw new Error(`GET ${route}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

/** The server's sessions (newest last, as listed). */
export async function listSessions(server: ServerProcess): Promise<Array<{ id: string; title: string; session_status: string }>> {
  const body = (await getJson(server, '/v1/sessions')) as { data: Array<{ id: string; title: string; session_status: string }> };
  return body.data;
}

/** The only session on the server (each scenario suite plans one task per server). */
export async function onlySession(server: ServerProcess): Promise<{ id: string; title: string; session_status: string }> {
  const sessions = await listSessions(server);
  if (sessions.length !== 1) throw new Error(`expected one session, found ${sessions.length}`);
  return sessions[0]!;
}

/** Every stored event of a session, control_responses included (what the agent was sent). */
export async function sessionEvents(server: ServerProcess, sessionId: string): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  let after: string | null = null;
  for (let page = 0; page < 100; page++) {
    const query: string = after ? `?limit=1000&after_id=${encodeURIComponent(after)}` : '?limit=1000';
    const body = (await getJson(server, `/v1/sessions/${encodeURIComponent(sessionId)}/events${query}`)) as {
      data: StoredEvent[];
      has_more: boolean;
      last_id: string | null;
    };
    events.push(...body.data);
    if (!body.has_more || !body.last_id) break;
    after = body.last_id;
  }
  return events;
}

/** Text of the tool_results the agent wrote for its ExitPlanMode calls, in order. */
export function exitPlanResults(events: StoredEvent[]): Array<{ text: string; isError: boolean }> {
  const results: Array<{ text: string; isError: boolean }> = [];
  const exitPlanIds = new Set<string>();
  for (const e of events) {
    if (e.type === 'assistant') {
      const blocks = (e as { message?: { content?: unknown } }).message?.content;
      for (const b of Array.isArray(blocks) ? (blocks as Array<Record<string, unknown>>) : []) {
        if (b.type === 'tool_use' && b.name === 'ExitPlanMode' && typeof b.id === 'string') exitPlanIds.add(b.id);
      }
    }
    if (e.type !== 'user') continue;
    const content = (e as { message?: { content?: unknown } }).message?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content as Array<Record<string, unknown>>) {
      if (block.type !== 'tool_result' || !exitPlanIds.has(String(block.tool_use_id))) continue;
      const c = block.content;
      const text = typeof c === 'string' ? c : Array.isArray(c) ? c.map((b: { text?: string }) => b.text ?? '').join('\n') : '';
      results.push({ text, isError: block.is_error === true });
    }
  }
  return results;
}

/** The decisions sent to the agent (control_response payloads), in order. */
export function decisionsSent(events: StoredEvent[]): Array<Record<string, unknown>> {
  return events
    .filter((e) => e.type === 'control_response')
    .map((e) => (e as { response?: { response?: Record<string, unknown> } }).response?.response ?? {});
}

/** Waits until the session's events satisfy `check`. */
export async function waitForEvents<T>(
  server: ServerProcess,
  sessionId: string,
  check: (events: StoredEvent[]) => T | undefined | false,
  message: string,
): Promise<T> {
  return waitFor(async () => check(await sessionEvents(server, sessionId)) || undefined, { timeoutMs: 30_000, intervalMs: 300, message });
}

/** The extension's own log files (one per extension host, so a reload adds one), then the session service's. */
export function extensionLogFiles(window: TestWindow): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    if (depth > 6) return;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full, depth + 1);
      else if (entry.name === 'Ultraplan.log') found.push(full);
    }
  };
  try {
    walk(path.join(window.server.userDataDir, 'logs'), 0);
  } catch {
    return [];
  }
  // The session service's logs: its agents' lines are there (docs/service.md).
  const serviceState = path.join(window.server.serviceDir, 'state');
  const serviceLogs = fs.existsSync(serviceState)
    ? fs
        .readdirSync(serviceState)
        .filter((name) => /^service-.*\.log$/.test(name))
        .map((name) => path.join(serviceState, name))
    : [];
  return [...found.sort(), ...serviceLogs.sort()];
}

/** Everything the extension logged so far, across reloads. */
export function extensionLog(window: TestWindow): string {
  return extensionLogFiles(window)
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('\n');
}

/**
 * After a failed test: a screenshot, the tail of the extension's own log (why a session did not
 * move on), and what `more` says (a scripted model's requests). For a suite's afterEach.
 */
export async function reportIfFailed(context: Mocha.Context, window: TestWindow | undefined, more?: () => string): Promise<void> {
  await screenshotIfFailed(context, window);
  if (context.currentTest?.state !== 'failed' || !window) return;
  for (const file of extensionLogFiles(window)) console.log(`--- ${file}\n${fs.readFileSync(file, 'utf8').slice(-4000)}`);
  if (more) console.log(more());
}

const QUICK_INPUT_ROW = '.quick-input-widget .monaco-list-row';

/** Resolves once the agent has asked for a decision on its plan (as the server records it). */
export async function planRequested(server: ServerProcess, sessionId: string): Promise<void> {
  await waitForEvents(
    server,
    sessionId.replace(/^cse_/, 'session_'),
    (events) => events.some((e) => e.type === 'control_request' && JSON.stringify(e).includes('ExitPlanMode')) || undefined,
    `the plan request of ${sessionId} on the server`,
  );
}

/**
 * Runs "Attach to Session…"; with `expectListed`, waits until the picker lists a session with that
 * title; then pastes `text` and presses Enter on its row. Returns the rows listed (title and description).
 */
export async function attachByPasting(page: Page, text: string, expectListed?: string): Promise<string[]> {
  await runCommand(page, 'Ultraplan: Attach to Session…');
  let listed: string[] = [];
  if (expectListed) {
    listed = await waitFor(
      async () => {
        const q = await readQuickInput(page);
        if (q.title !== 'Ultraplan: Attach to Session' || !q.items.some((i) => i.includes(expectListed))) return undefined;
        // Each row whole (title and description), one line each.
        return (await page.locator(QUICK_INPUT_ROW).allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
      },
      { timeoutMs: 20_000, message: `the picker to list "${expectListed}"` },
    );
  }
  await page.locator(QUICK_INPUT_BOX).fill(text);
  const row = page.locator(QUICK_INPUT_ROW, { hasText: 'Attach to session_' }).first();
  await row.waitFor({ state: 'visible', timeout: 10_000 });
  await screenshot(page, 'attach-picker');
  await page.locator(QUICK_INPUT_BOX).press('Enter');
  return listed;
}

import * as assert from 'node:assert/strict';
// Loads the real webview bundle (dist/webview.js + dist/webview.css) in real Chromium, under the
// exact page and CSP that ReviewPanel serves (reviewPanelHtml), from a node:http server on
// 127.0.0.1:0. acquireVsCodeApi is a small shim installed before any page script: it records what
// the webview posts and saves, which is all the host side of VS Code would see.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { splitPlanTexts, type PanelState, type PlanRevision } from '../../src/core/panelMessages';
import { reviewPanelHtml } from '../../src/extension/review/reviewPanelHtml';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../e2e/harness/browser';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
const DIST = path.join(REPO_ROOT, 'dist');
export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'test-output', 'webview');

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.ttf': 'font/ttf',
  '.map': 'application/json',
};

/**
 * A few of VS Code's Dark Modern theme variables, set the way VS Code sets them (CSSOM on <html>,
 * which the CSP allows), so screenshots look like the panel in the editor.
 */
const DARK_MODERN: Record<string, string> = {
  'font-family': "-apple-system, BlinkMacSystemFont, 'Segoe WPC', 'Segoe UI', 'Ubuntu', 'Droid Sans', sans-serif",
  'font-size': '13px',
  'editor-font-family': "'Droid Sans Mono', 'monospace', monospace",
  'editor-font-size': '13px',
  foreground: '#cccccc',
  descriptionForeground: '#9d9d9d',
  'editor-background': '#1f1f1f',
  'button-background': '#0078d4',
  'button-foreground': '#ffffff',
  'button-hoverBackground': '#026ec1',
  'button-border': '#ffffff12',
  'button-secondaryBackground': '#313131',
  'button-secondaryForeground': '#cccccc',
  'button-secondaryHoverBackground': '#3c3c3c',
  'badge-background': '#616161',
  'badge-foreground': '#f8f8f8',
  'textLink-foreground': '#4daafc',
  'textLink-activeForeground': '#4daafc',
  'input-background': '#313131',
  'input-foreground': '#cccccc',
  'input-border': '#3c3c3c',
  focusBorder: '#0078d4',
  'widget-border': '#313131',
  'panel-border': '#2b2b2b',
  'textCodeBlock-background': '#2b2b2b',
  'textBlockQuote-background': '#2b2b2b',
  'textBlockQuote-border': '#616161',
  'list-hoverBackground': '#2a2d2e',
  'editor-selectionHighlightBackground': '#add6ff26',
  'editorWidget-background': '#202020',
  'diffEditor-insertedLineBackground': '#9bb95533',
  'diffEditor-removedLineBackground': '#ff000033',
  'statusBarItem-warningBackground': '#c19c00',
  'statusBarItem-warningForeground': '#ffffff',
  'editorWarning-foreground': '#cca700',
  errorForeground: '#f85149',
  'notificationsErrorIcon-foreground': '#f14c4c',
  'notificationsWarningIcon-foreground': '#cca700',
  'notificationsInfoIcon-foreground': '#3794ff',
  'icon-foreground': '#cccccc',
};

export interface PanelServer {
  origin: string;
  /** Every path requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Serves the panel page (a fresh nonce per load) and the built bundle from dist/ (or another build's `dist`). */
export async function startPanelServer(dist = DIST): Promise<PanelServer> {
  for (const file of ['webview.js', 'webview.css', 'codicon.ttf']) {
    if (!fs.existsSync(path.join(dist, file))) throw new Error(`${dist}/${file} is missing: run \`npm run build\` first`);
  }
  const requests: string[] = [];
  let origin = '';
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    requests.push(url.pathname);
    if (url.pathname === '/' || url.pathname === '/index.html') {
      const html = reviewPanelHtml({
        cspSource: origin,
        nonce: randomBytes(18).toString('base64'),
        script: fs.readFileSync(path.join(dist, 'webview.js'), 'utf8'),
        style: fs.readFileSync(path.join(dist, 'webview.css'), 'utf8'),
        assetsUri: `${origin}/dist`,
      });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
      return;
    }
    const match = /^\/dist\/([\w.-]+)$/.exec(url.pathname);
    const file = match?.[1];
    if (file && fs.existsSync(path.join(dist, file))) {
      res.writeHead(200, { 'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream' });
      res.end(fs.readFileSync(path.join(dist, file)));
      return;
    }
    res.writeHead(404).end();
  });
  origin = await listen(server);
  return { origin, requests, close: () => closeServer(server) };
}

/** A server that serves nothing and remembers every request: a hostile plan must never reach it. */
export async function startRecordingServer(): Promise<{ origin: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(204).end();
  });
  const origin = await listen(server);
  return { origin, requests, close: () => closeServer(server) };
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}

declare global {
  interface Window {
    __posted: unknown[];
    __saved: unknown;
    __violations: string[];
    __canary?: unknown;
  }
}

export interface PanelPage {
  page: Page;
  dialogs: string[];
  pageErrors: string[];
  /** Messages the webview posted to the host, in order. */
  posted(): Promise<Array<Record<string, unknown>>>;
  /** Waits until the webview has posted a message of `type` (beyond `after` earlier ones). */
  waitForPosted(type: string, after?: number): Promise<Record<string, unknown>>;
  /** Posts `state` as ReviewPanel does: plan texts the page has are named by hash only. */
  postState(state: PanelState): Promise<void>;
  /** Forgets which plan texts the page has (as ReviewPanel does on `ready`): the next state carries them all. */
  forgetSentPlans(): void;
  postRaw(message: unknown): Promise<void>;
  saved(): Promise<unknown>;
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** Opens the panel page; `saved` is what getState() returns (a restored webview). */
export async function openPanel(browser: Browser, server: PanelServer, saved?: unknown): Promise<PanelPage> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  const dialogs: string[] = [];
  const pageErrors: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  // A string, not a function: tsx compiles test functions with a `__name` helper that does not exist
  // in the page. The same helper is defined here for the callbacks page.evaluate sends.
  await page.addInitScript(`
    window.__name = (fn) => fn;
    const theme = ${JSON.stringify(DARK_MODERN)};
    document.addEventListener('DOMContentLoaded', () => {
      for (const [name, value] of Object.entries(theme)) document.documentElement.style.setProperty('--vscode-' + name, value);
      document.body.classList.add('vscode-dark');
    });
    window.__posted = [];
    window.__saved = ${JSON.stringify(saved ?? null)} ?? undefined;
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber));
    let acquired = false;
    window.acquireVsCodeApi = () => {
      if (acquired) throw new Error('acquireVsCodeApi called twice');
      acquired = true;
      return {
        postMessage: (message) => window.__posted.push(JSON.parse(JSON.stringify(message))),
        getState: () => window.__saved,
        setState: (state) => { window.__saved = JSON.parse(JSON.stringify(state)); },
      };
    };
  `);
  await page.goto(`${server.origin}/index.html`);
  await page.waitForFunction(() => window.__posted.some((m) => (m as { type?: string }).type === 'ready'));
  const posted = () => page.evaluate(() => window.__posted as Array<Record<string, unknown>>);
  let sentPlans: ReadonlySet<string> = new Set();
  return {
    page,
    dialogs,
    pageErrors,
    posted,
    async waitForPosted(type, after = 0) {
      const handle = await page.waitForFunction(
        ([t, n]) => window.__posted.slice(n as number).find((m) => (m as { type?: string }).type === t),
        [type, after] as const,
        { timeout: 5_000 },
      );
      return (await handle.jsonValue()) as Record<string, unknown>;
    },
    async postState(state) {
      const { message, has } = splitPlanTexts(state, sentPlans);
      sentPlans = has;
      await page.evaluate((m) => window.postMessage(m, '*'), message);
      // postMessage is async; one frame later the view has handled it.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
    },
    forgetSentPlans() {
      sentPlans = new Set();
    },
    async postRaw(message) {
      await page.evaluate((m) => window.postMessage(m, '*'), message);
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
    },
    saved: () => page.evaluate(() => window.__saved),
    async screenshot(name) {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: false });
    },
    close: () => context.close(),
  };
}

/**
 * A panel server and Chromium for the enclosing describe, and `open` for each test's panel: the
 * last panel opened is checked for uncaught page errors and closed after its test.
 */
export function usePanelBrowser(): { readonly server: PanelServer; open(saved?: unknown): Promise<PanelPage> } {
  let browser: Browser | undefined;
  let server: PanelServer | undefined;
  let opened: PanelPage | undefined;
  before(async () => {
    server = await startPanelServer();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  afterEach(async () => {
    const page = opened;
    opened = undefined;
    if (!page) return;
    assert.deepEqual(page.pageErrors, [], 'no uncaught errors in the page');
    await page.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('usePanelBrowser: used outside a test of its describe');
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    async open(saved?: unknown) {
      opened = await openPanel(started(browser), started(server), saved);
      return opened;
    },
  };
}

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function revision(n: number, plan: string, extra: Partial<PlanRevision> = {}): PlanRevision {
  return { revision: n, toolUseId: `toolu_${n}`, plan, planHash: sha256(plan), status: 'pending', comments: [], ...extra };
}

export function panelState(revisions: PlanRevision[], extra: Partial<PanelState> = {}): PanelState {
  return {
    sessionKey: 'embedded:sess_1',
    sessionId: 'sess_1',
    title: 'Add a dark mode toggle',
    backendLabel: 'Embedded',
    agentLabel: 'Fake ACP agent',
    phase: 'plan_ready',
    revisions,
    canDecide: true,
    ...extra,
  };
}

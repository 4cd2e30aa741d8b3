// Debian's Chromium driven by playwright-core (no bundled browser here), opened on code-server.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { outputDir } from './paths';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The flags TESTING.md lists: without the networking ones Chromium keeps dialing Google here. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Workbench {
  /** This test process's Chromium, shared by its windows (each window is a context of its own). */
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** test-output/e2e/<suite> gets this window's screenshots and console log. */
  suite: string;
  /** Console errors and uncaught page errors from every frame (webviews included), in order. */
  consoleErrors: string[];
  /** Closes the window's context and writes the console log to test-output/e2e/<suite>/console.log. */
  close(): Promise<void>;
}

export interface LaunchOptions {
  suite?: string;
  /** Default 1400x900, big enough that the panel, status bar and a webview are all visible. */
  viewport?: { width: number; height: number };
  /** How long to wait for `.monaco-workbench`. */
  timeoutMs?: number;
}

const suiteOfPage = new WeakMap<Page, string>();

/** The suite a page was launched for (screenshot() uses it to pick the folder). */
export function suiteOf(page: Page): string {
  return suiteOfPage.get(page) ?? 'e2e';
}

let sharedBrowser: Promise<Browser> | undefined;

/**
 * One Chromium for every window of this test process: a window is a browser context of its own
 * (its own storage, cache, cookies and service workers, as a fresh profile would have), and the
 * second of CPU a Chromium launch costs is paid once, not per window. A browser that went away
 * (crashed, or closed) is launched again for the next window. Playwright kills it when the
 * process exits; a run that ends without exiting closes it (closeSharedBrowser, rootHooks.ts).
 */
export function browserForWindows(): Promise<Browser> {
  if (!sharedBrowser) {
    const launching = chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
    sharedBrowser = launching;
    launching.then(
      (browser) =>
        browser.on('disconnected', () => {
          if (sharedBrowser === launching) sharedBrowser = undefined;
        }),
      () => {
        if (sharedBrowser === launching) sharedBrowser = undefined;
      },
    );
  }
  return sharedBrowser;
}

/** Closes this process's Chromium, if it runs: the last step of a run whose process is not about to exit. */
export async function closeSharedBrowser(): Promise<void> {
  const launching = sharedBrowser;
  sharedBrowser = undefined;
  const browser = await launching?.catch(() => undefined);
  await browser?.close();
}

/** Opens `url` (e.g. CodeServer.workspaceUrl) in a new context of the shared Chromium and waits for the workbench. */
export async function launchBrowser(url: string, options: LaunchOptions = {}): Promise<Workbench> {
  const suite = options.suite ?? 'e2e';
  const browser = await browserForWindows();
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1400, height: 900 } });
  const consoleLog: string[] = [];
  const consoleErrors: string[] = [];
  try {
    const page = await context.newPage();
    suiteOfPage.set(page, suite);
    page.on('console', (message) => {
      const line = `[${message.type()}] ${message.text()}`;
      consoleLog.push(line);
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => {
      consoleLog.push(`[pageerror] ${error.stack ?? error.message}`);
      consoleErrors.push(error.message);
    });
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: options.timeoutMs ?? 60_000 });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: options.timeoutMs ?? 60_000 });
    let closed = false;
    return {
      browser,
      context,
      page,
      suite,
      consoleErrors,
      close: async () => {
        if (closed) return;
        closed = true;
        fs.writeFileSync(path.join(outputDir(suite), 'console.log'), `${consoleLog.join('\n')}\n`);
        await context.close();
      },
    };
  } catch (err) {
    await context.close().catch(() => undefined);
    throw err;
  }
}

/** Reloads the window (a new extension host starts) and waits for the workbench again. */
export async function reloadWindow(page: Page, options: { timeoutMs?: number } = {}): Promise<void> {
  await page.reload({ waitUntil: 'domcontentloaded', timeout: options.timeoutMs ?? 60_000 });
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: options.timeoutMs ?? 60_000 });
}

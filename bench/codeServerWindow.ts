// For benches that run the extension in real code-server 4.100.3 + Chromium: a window whose
// extensions folder holds staged builds (bench/extensionStaging.ts; installed before the browser
// connects, which is when code-server starts the extension host), the page's clock against this
// process's, and the extension's own log lines with the moment they were written.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { createWorkspace, launchBrowser, startCodeServer, type CodeServer, type Workbench } from '../test/e2e/harness';
import { EXTENSION_ID, installStaged } from './extensionStaging';

/** This process's clock as epoch ms with sub-ms resolution; Node children and Chromium stamp the same way. */
export const now = (): number => performance.timeOrigin + performance.now();

export interface StagedWindow {
  server: CodeServer;
  workbench: Workbench;
  page: Page;
  workspace: string;
  close(): Promise<void>;
}

export interface StagedWindowOptions {
  /** Names test-output/e2e/<suite> (code-server log, browser console). */
  suite: string;
  settings: Record<string, unknown>;
  staged: Parameters<typeof installStaged>[1];
  /** An existing folder to open (the caller removes it); default a fresh git workspace, removed on close. */
  workspace?: string;
}

/** Like the harness's openTestWindow, but installs the staged extensions before the browser connects. */
export async function openStagedWindow(options: StagedWindowOptions): Promise<StagedWindow> {
  const ownWorkspace = options.workspace === undefined;
  const workspace = options.workspace ?? (await createWorkspace({}));
  let server: CodeServer | undefined;
  let workbench: Workbench | undefined;
  const close = async () => {
    await workbench?.close().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    if (ownWorkspace) await fs.promises.rm(workspace, { recursive: true, force: true });
  };
  try {
    server = await startCodeServer({ workspace, suite: options.suite, settings: options.settings, installUltraplan: false });
    await installStaged(server.extensionsDir, options.staged);
    workbench = await launchBrowser(server.workspaceUrl, { suite: options.suite });
    await server.probe.ready();
    return { server, workbench, page: workbench.page, workspace, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The page's (or a webview frame's) clock minus this process's, from the ping with the shortest
 * round trip; half that round trip bounds the error.
 */
export async function clockOffset(target: Page | Frame, pings = 12): Promise<{ offset: number; errorMs: number }> {
  let best = { offset: 0, errorMs: Infinity };
  for (let i = 0; i < pings; i++) {
    const sent = now();
    const there = (await target.evaluate('performance.timeOrigin + performance.now()')) as number;
    const back = now();
    if ((back - sent) / 2 < best.errorMs) best = { offset: there - (sent + back) / 2, errorMs: (back - sent) / 2 };
  }
  return best;
}

/** The first line of an extension host log file (under <user-data>/logs/<session>/exthost1/) containing `text`. */
export function findExtensionHostLogLine(server: CodeServer, file: string, text: string): string | undefined {
  const logs = path.join(server.userDataDir, 'logs');
  if (!fs.existsSync(logs)) return undefined;
  for (const session of fs.readdirSync(logs)) {
    const full = path.join(logs, session, 'exthost1', file);
    if (!fs.existsSync(full)) continue;
    const line = fs
      .readFileSync(full, 'utf8')
      .split('\n')
      .find((l) => l.includes(text));
    if (line) return line;
  }
  return undefined;
}

/** The first line of the Ultraplan log (its LogOutputChannel) containing `text`. */
export function findUltraplanLogLine(server: CodeServer, text: string): string | undefined {
  return findExtensionHostLogLine(server, path.join(EXTENSION_ID, 'Ultraplan.log'), text);
}

/**
 * When (this process's clock) a log line was written: VS Code stamps log lines with the local
 * wall clock to the millisecond, so this is good to about a millisecond.
 */
export function logLineTime(line: string): number {
  const stamp = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3})/.exec(line);
  if (!stamp) throw new Error(`no timestamp on the log line ${JSON.stringify(line)}`);
  return new Date(`${stamp[1]}T${stamp[2]}`).getTime() - (Date.now() - now());
}

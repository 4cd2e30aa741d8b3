// One call that gives a test a real VS Code window: a workspace, code-server with the extension,
// Chromium on it, and the in-host probe ready. Start one per suite file (before), close it (after).
import * as fs from 'node:fs';
import type { Page } from 'playwright-core';
import type { HostSuiteResults, ProbeFile } from '../runner-extension/src/wire';
import { launchBrowser, reloadWindow, type Workbench } from './browser';
import { childGroupLeaders, groupsCpuSeconds } from './cpu';
import { startCodeServer, type CodeServer, type CodeServerOptions } from './codeServer';
import type { HostProbe } from './hostProbe';
import { outputDir } from './paths';
import { assertHostSuitePassed, readHostResults } from './hostResults';
import { screenshot } from './workbench';
import { createWorkspace, type WorkspaceOptions } from './workspace';

export interface TestWindowOptions extends Omit<CodeServerOptions, 'workspace' | 'suite'>, WorkspaceOptions {
  /** Names test-output/e2e/<suite>; use the e2e file's base name. */
  suite: string;
  /** An existing folder to open; otherwise a fresh one is made from `files` (and removed on close). */
  workspace?: string;
  /** Wait for the extension host probe before returning (default true). */
  waitForHost?: boolean;
}

export interface TestWindow {
  server: CodeServer;
  workbench: Workbench;
  page: Page;
  probe: HostProbe;
  workspace: string;
  /** Waits for the env-started in-host suite (options.hostSuite), prints it and throws on any failure. */
  expectHostSuitePassed(options?: { timeoutMs?: number }): Promise<HostSuiteResults>;
  /** Reloads the window and waits for the new extension host. */
  reload(): Promise<ProbeFile>;
  /** Closes the window (its browser context), stops code-server, removes a workspace it made. Safe to call twice. */
  close(): Promise<void>;
}

export async function openTestWindow(options: TestWindowOptions): Promise<TestWindow> {
  const started = Date.now();
  // Screenshots and logs of an earlier run of this suite would mislead.
  // (This code-server's folder only: a run on another code-server may be writing its own meanwhile.)
  await fs.promises.rm(outputDir(options.suite), { recursive: true, force: true });
  const ownWorkspace = options.workspace === undefined;
  const workspace = options.workspace ?? (await createWorkspace(options));
  let server: CodeServer | undefined;
  let workbench: Workbench | undefined;
  const chromiumAtOpen = chromiumCpuSeconds();
  const cleanUp = async () => {
    logCpu(options.suite, started, server, chromiumAtOpen);
    await workbench?.close().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    if (ownWorkspace) await fs.promises.rm(workspace, { recursive: true, force: true });
  };
  try {
    server = await startCodeServer({ ...options, workspace });
    const serverMs = Date.now() - started;
    workbench = await launchBrowser(server.workspaceUrl, { suite: options.suite });
    const workbenchMs = Date.now() - started;
    if (options.waitForHost ?? true) await server.probe.ready();
    console.log(
      `      [harness] ${options.suite}: code-server ${serverMs} ms, workbench ${workbenchMs} ms, extension host ${Date.now() - started} ms`,
    );
  } catch (err) {
    await cleanUp();
    throw err;
  }
  const readyServer = server;
  const readyWorkbench = workbench;
  let closing: Promise<void> | undefined;
  return {
    server: readyServer,
    workbench: readyWorkbench,
    page: readyWorkbench.page,
    probe: readyServer.probe,
    workspace,
    expectHostSuitePassed: async (waitOptions = {}) => {
      const results = await readHostResults(readyServer.hostResultsFile, { suite: options.suite, ...waitOptions });
      assertHostSuitePassed(results);
      return results;
    },
    reload: async () => {
      const before = readyServer.probe.announcement();
      await reloadWindow(readyWorkbench.page);
      return readyServer.probe.ready(before ? { after: before } : {});
    },
    close: () => {
      closing ??= cleanUp();
      return closing;
    },
  };
}

/** CPU seconds of this process's Chromium so far (the browser its windows share), if it runs. */
function chromiumCpuSeconds(): number {
  return groupsCpuSeconds(childGroupLeaders('chromium')) ?? 0;
}

/**
 * One line for where the window's time went: its wall time, the CPU of its code-server's process
 * group, and what the shared Chromium used while the window was open (another window open at the
 * same time in this process would count there too).
 */
function logCpu(suite: string, started: number, server: CodeServer | undefined, chromiumAtOpen: number): void {
  if (process.platform !== 'linux') return;
  const codeServer = server?.pid === undefined ? undefined : groupsCpuSeconds([server.pid]);
  const cpu = (seconds: number | undefined) => (seconds === undefined ? '?' : seconds.toFixed(1));
  console.log(
    `      [harness] ${suite}: ${((Date.now() - started) / 1000).toFixed(1)} s open, CPU code-server ${cpu(codeServer)} s, Chromium ${cpu(chromiumCpuSeconds() - chromiumAtOpen)} s`,
  );
}

/** For afterEach: a screenshot named after the failed test, so a red run shows what the window showed. */
export async function screenshotIfFailed(context: Mocha.Context, window: TestWindow | undefined): Promise<void> {
  const test = context.currentTest;
  if (!window || !test || test.state !== 'failed') return;
  await screenshot(window.page, `FAILED-${test.title}`).catch(() => undefined);
}

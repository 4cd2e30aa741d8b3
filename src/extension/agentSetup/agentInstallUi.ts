// Installing a known agent from the editor: the exact command shown first, the Node.js it needs
// checked before anything runs, npm's progress in a notification, and on failure the cause and
// the fix (the command to run by hand is one click away).
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import type { KnownAgent } from '../../agents/catalogue';

const INSTALL = 'Install';
const COPY = 'Copy Command';

/** The `node` on PATH (the one npm will use), or undefined when there is none. */
export function nodeVersion(): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('node', ['--version'], { timeout: 15_000, shell: process.platform === 'win32' }, (error, stdout) =>
      resolve(error ? undefined : stdout.trim()),
    );
  });
}

async function copyCommand(agent: KnownAgent): Promise<void> {
  await vscode.env.clipboard.writeText(agent.installCommand);
  void vscode.window.showInformationMessage(
    `Ultraplan: copied "${agent.installCommand}". Run it in a terminal, then choose ${agent.label} again.`,
  );
}

/**
 * Offers to install a missing agent; answers true once it is installed. Nothing runs without the
 * person's click, and never with sudo.
 */
export async function offerAgentInstall(agent: KnownAgent, log: vscode.LogOutputChannel): Promise<boolean> {
  const choice = await vscode.window.showWarningMessage(
    `Ultraplan: ${agent.label} is not installed here. Install it with: ${agent.installCommand} (needs Node.js ${agent.pkg.node}).`,
    INSTALL,
    COPY,
  );
  if (choice === COPY) await copyCommand(agent);
  if (choice !== INSTALL) return false;

  // The installer (npm, its progress) is a chunk of its own, loaded when a person installs an agent.
  const { installAgent, nodeProblem } = await import('../../agents/catalogue/agentInstall');
  const problem = nodeProblem(agent, await nodeVersion());
  if (problem) {
    log.warn(`install ${agent.pkg.package}: ${problem}`);
    void vscode.window.showErrorMessage(`Ultraplan: ${problem}`);
    return false;
  }
  log.info(`install: ${agent.installCommand}`);
  const result = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Installing ${agent.label} (${agent.pkg.package}@${agent.pkg.version}, Node.js ${agent.pkg.node})`,
      cancellable: true,
    },
    (progress, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      progress.report({ message: `running ${agent.installCommand}` });
      return installAgent(agent, {
        signal: abort.signal,
        onProgress: (message) => {
          log.info(`install ${agent.pkg.package}: ${message}`);
          progress.report({ message });
        },
      });
    },
  );
  if (result.ok) {
    log.info(`installed ${agent.pkg.package}@${agent.pkg.version}`);
    return true;
  }
  log.warn(`install ${agent.pkg.package} failed: ${result.message}`);
  const next = await vscode.window.showErrorMessage(`Ultraplan: could not install ${agent.label}. ${result.message}`, COPY);
  if (next === COPY) await copyCommand(agent);
  return false;
}

/** The npx packages this window has fetched (or found in npx's cache) already. */
const fetchedForNpx = new Set<string>();

/**
 * Before an agent first runs through npx: its pinned package is fetched into npx's cache with the
 * progress shown (what is fetched, how many packages so far), so the session itself starts at
 * once. Throws with the cause and the fix when the fetch fails; the session does not start.
 */
export async function fetchForNpx(agent: KnownAgent, log: vscode.LogOutputChannel): Promise<void> {
  const spec = `${agent.pkg.package}@${agent.pkg.version}`;
  if (fetchedForNpx.has(spec)) return;
  const { fetchAgentForNpx } = await import('../../agents/catalogue/agentInstall');
  const result = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Ultraplan: fetching ${agent.label} (${spec}) for npx`,
      cancellable: true,
    },
    (progress, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      progress.report({ message: "checking npx's cache" });
      return fetchAgentForNpx(agent, {
        signal: abort.signal,
        onProgress: (message) => {
          log.info(`npx ${spec}: ${message}`);
          progress.report({ message });
        },
      });
    },
  );
  if (!result.ok) {
    log.warn(`npx ${spec}: ${result.message}`);
    throw new Error(`${agent.label} could not be fetched for npx. ${result.message}`);
  }
  fetchedForNpx.add(spec);
  log.info(`npx ${spec}: in npx's cache`);
}

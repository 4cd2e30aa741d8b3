// Ultraplan: Show Session Service Status: whether this user's local session service runs, what it
// holds, and how its agents run (in a sandbox of their own or with the person's permissions, and
// why), asked of a running service and never starting one. A chunk of its own, loaded by its run.
import * as vscode from 'vscode';
import { findRunningService } from '../../client/localService/serviceLauncher';
import { describeServiceSandbox, environmentMismatch } from '../../client/localService/windowEnvironment';
import { servicePaths } from '../../core/node/servicePaths';
import type { ExtensionServices } from '../commands/services';

export async function showServiceStatus(services: Pick<ExtensionServices, 'context' | 'log'>): Promise<void> {
  const version = String((services.context.extension.packageJSON as { version?: unknown }).version ?? '0');
  const running = await findRunningService({ paths: servicePaths(), version });
  if (!running) {
    void vscode.window.showInformationMessage(
      `Ultraplan: the session service ${version} is not running; the first embedded session starts it.`,
    );
    return;
  }
  const { status } = running;
  const differing = (await environmentMismatch(status, process.env))?.differing ?? [];
  const lines = [
    `Session service ${status.version} (pid ${status.pid}), started ${status.started_at}: ${status.sessions} session(s), ${status.live_sessions} live.`,
    describeServiceSandbox(status),
    differing.length > 0
      ? `Its agents run with another environment than this window's (different: ${differing.join(', ')}).`
      : "Its agents run with this window's environment.",
  ];
  for (const line of lines) services.log.info(`service status: ${line}`);
  void vscode.window.showInformationMessage(`Ultraplan: ${lines.join(' ')}`);
}

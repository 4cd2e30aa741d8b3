// Tells a window what the local service it connected to does with its agents: that it runs them
// with another environment (client/localService/windowEnvironment.ts) or another sandbox choice
// than this window's, offering to restart it as this window asks (at once when nothing is live
// on it, else once nothing is); and, once per reason, that this machine cannot sandbox them. A
// chunk of its own, loaded on a connection.
import * as vscode from 'vscode';
import type { LocalService } from '../../client/localService/localService';
import type { ServiceConnection } from '../../client/localService/serviceLauncher';
import {
  describeMismatch,
  describeSandboxMismatch,
  environmentMismatch,
  sandboxMismatch,
  sandboxNotice,
} from '../../client/localService/windowEnvironment';
import type { SandboxMode, ServiceStatus } from '../../core/serviceStatus';
import { errorMessage } from '../../core/errors';

const RESTART = 'Restart Session Service';
const RESTART_LATER = 'Restart When Nothing Is Live';
/** How often a window waiting for the service to have nothing live asks again. */
const RETRY_MS = 15_000;
/** globalState: the reasons for running unsandboxed a person was already told of. */
const UNSANDBOXED_TOLD_KEY = 'ultraplan.localService.unsandboxedTold';

export interface ServiceNoticeOptions {
  /** This window's ultraplan.localService.sandbox. */
  sandbox: SandboxMode;
  /** Where the one-time notice is remembered (the extension's globalState). */
  memento: vscode.Memento;
}

export async function noticeServiceEnvironment(
  service: LocalService,
  connection: ServiceConnection,
  log: vscode.LogOutputChannel,
  closed: () => boolean,
  options: ServiceNoticeOptions,
): Promise<void> {
  noticeSandbox(connection.status, log, options.memento);
  const mismatch = await environmentMismatch(connection.status, process.env);
  const sandbox = sandboxMismatch(connection.status, options.sandbox);
  if (!mismatch && !sandbox) return;
  // The environment's text ends with the advice, so the sandbox's gives its own only alone.
  const message = [sandbox ? describeSandboxMismatch(sandbox, !mismatch) : '', mismatch ? describeMismatch(mismatch) : '']
    .filter(Boolean)
    .join(' ');
  log.warn(`service: ${message}`);
  const action = (mismatch?.liveSessions ?? sandbox?.liveSessions ?? 0) > 0 ? RESTART_LATER : RESTART;
  if ((await vscode.window.showWarningMessage(message, action)) !== action) return;
  try {
    for (;;) {
      const outcome = await service.restart();
      if (outcome.restarted) {
        log.info(`service: restarted as this window asks (pid ${outcome.connection.status.pid})`);
        void vscode.window.showInformationMessage(
          "The Ultraplan session service restarted with this window's environment and sandbox choice.",
        );
        return;
      }
      log.info(`service: ${outcome.liveSessions} session(s) live; restarting once nothing is`);
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      if (closed()) return;
    }
  } catch (err) {
    void vscode.window.showErrorMessage(`The Ultraplan session service did not restart: ${errorMessage(err)}`);
  }
}

/** Says in the log how the service's agents run, and once per reason in a notice when this machine cannot sandbox them. */
function noticeSandbox(status: ServiceStatus, log: vscode.LogOutputChannel, memento: vscode.Memento): void {
  const told = memento.get<unknown>(UNSANDBOXED_TOLD_KEY);
  const said = sandboxNotice(status, Array.isArray(told) ? told.filter((r): r is string => typeof r === 'string') : []);
  if (said.warning) log.warn(`service: ${said.line}`);
  else log.info(`service: ${said.line}`);
  if (!said.notice) return;
  void memento.update(UNSANDBOXED_TOLD_KEY, said.told);
  void vscode.window.showInformationMessage(said.notice);
}

// The embedded backend's client of this user's local session service (docs/service.md), made at
// first use: a chunk of its own, so a window without embedded sessions never loads it. The
// service is started with the window's sandbox choice and the bubblewrap this machine has
// (never put on PATH: docs/security.md), and each connection is checked against the window.
import type * as vscode from 'vscode';
import { LocalService } from '../../client/localService/localService';
import { ServiceBackend } from '../../client/localService/serviceBackend';
import { connectServer } from '../../client/serverConnection';
import { BACKENDS } from '../../core/backendKinds';
import { findBubblewrap } from '../../core/node/bubblewrap';
import { servicePaths } from '../../core/node/servicePaths';
import { errorMessage } from '../../core/errors';
import type { UltraplanSettings } from '../settings/settingsSchema';

export interface LocalServiceBackendOptions {
  settings: UltraplanSettings;
  /** Its program (dist/server.mjs) and the version it runs as. */
  service: { serverScript: string; version: string };
  log: vscode.LogOutputChannel;
  /** Where a notice said once is remembered (the extension's globalState). */
  memento: vscode.Memento;
  /** The window is going away: a wait to restart the service ends. */
  closed: () => boolean;
  /** Logs each request of a fetch (backends.ts). */
  loggingFetch: (log: vscode.LogOutputChannel, inner: typeof fetch) => typeof fetch;
}

export function localServiceBackend(options: LocalServiceBackendOptions): ServiceBackend {
  const { settings, log } = options;
  const sandbox = settings['localService.sandbox'];
  const service = new LocalService(
    {
      paths: servicePaths(),
      version: options.service.version,
      serverScript: options.service.serverScript,
      idleExitSeconds: Math.round(settings['embedded.idleExitMinutes'] * 60),
      sandbox: { mode: sandbox, bwrap: findBubblewrap() },
      log: (line) => log.info(`service: ${line}`),
    },
    // A service started from another window's environment or sandbox choice is told here, not found out from an agent's failure.
    (connection) =>
      void import('./serviceEnvironmentNotice')
        .then(({ noticeServiceEnvironment }) =>
          noticeServiceEnvironment(service, connection, log, options.closed, { sandbox, memento: options.memento }),
        )
        .catch((err: unknown) => log.warn(`service: comparing environments: ${errorMessage(err)}`)),
  );
  return new ServiceBackend({
    service,
    label: BACKENDS.embedded.label,
    lifecycle: BACKENDS.embedded.lifecycle,
    connect: (fetch, getToken) =>
      connectServer(
        { baseUrl: 'http://localhost', getToken, log: (line) => log.debug(`service: ${line}`), fetch: options.loggingFetch(log, fetch) },
        { preferStream: true, kind: 'embedded' },
      ),
  });
}

// What the command registrars share: the pieces activate builds once, and one way to register a
// command whose failures are logged and shown instead of lost.
import * as vscode from 'vscode';
import type { Backends } from '../backends/backends';
import type { FollowedSession } from '../sessions/followedSession';
import type { FollowedSessions } from '../sessions/followedSessions';
import type { SettingsReader } from '../settings/settings';
import type { UltraplanSettings } from '../settings/settingsSchema';
import { errorMessage } from '../../core/errors';

export interface ExtensionServices {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  settings: SettingsReader;
  backends: Backends;
  sessions: FollowedSessions;
  /** Every launch path (palette, selection, chat, refine): the backend's own checks, then the session. */
  launch(prompt: string, settings: UltraplanSettings): Promise<FollowedSession | undefined>;
}

export function registerCommand(
  services: Pick<ExtensionServices, 'context' | 'log'>,
  id: string,
  run: (...args: unknown[]) => unknown,
): void {
  services.context.subscriptions.push(
    // The command's result goes back to whoever executed it (e.g. Attach asks whether a token was set).
    vscode.commands.registerCommand(id, async (...args: unknown[]): Promise<unknown> => {
      try {
        return await run(...args);
      } catch (err) {
        const message = errorMessage(err);
        services.log.error(`${id} failed: ${message}`);
        void vscode.window.showErrorMessage(`Ultraplan: ${message}`);
      }
    }),
  );
}

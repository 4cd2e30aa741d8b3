// Activation: builds the few long-lived pieces (log, settings, backends, followed sessions) and
// registers each area's commands. The logic lives in core/, client/ and the feature folders.
//
// Activation events: our commands, a restored review panel (onWebviewPanel:ultraplan.review), and
// onStartupFinished: in the browser (code-server) the workbench cannot always save its editors on
// shutdown, so after a reload the panel may not come back, and a session in flight would be
// orphaned with nothing on screen. With nothing persisted, activate only registers commands (no
// host, no network).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { acpAgentSource } from './agentSetup/acpAgentSource';
import { Backends, scriptedAgentSource } from './backends/backends';
import { prepareClaudeWebLaunch } from './claudeWeb/claudeWebUi';
import { registerChatParticipant } from './chat/promptPathUi';
import { registerBackendCommands } from './commands/backendCommands';
import { registerReviewCommands } from './commands/reviewCommands';
import { registerCommand, type ExtensionServices } from './commands/services';
import { registerSessionCommands } from './commands/sessionCommands';
import { registerWorkspaceCommands } from './commands/workspaceCommands';
import { FollowedSessions } from './sessions/followedSessions';
import { SessionsFromOtherWindows } from './sessions/sessionsFromOtherWindows';
import { SIGN_IN_COMMAND } from './auth/serverAuthId';
import type { InboxViewHandle } from './inbox/inboxStandIn';
import { registerInbox } from './inbox/inboxView';
import { registerPlansOnDisk } from './review/plansOnDiskEntry';
import type { FollowedSession } from './sessions/followedSession';
import { SettingsReader } from './settings/settings';
import { registerUltrareview } from './ultrareview/ultrareviewEntry';
import type { UltraplanSettings } from './settings/settingsSchema';
import { errorMessage } from '../core/errors';

/** For the startup bootstrap (bootstrap.ts): a chat request it received before this module loaded. */
export { forwardChatRequest } from './chat/promptPathUi';

let active: { sessions: FollowedSessions; backends: Backends } | undefined;

/** What the startup bootstrap made before this module loaded (the inbox view). */
export interface FromBootstrap {
  inbox?: InboxViewHandle;
}

export function activate(context: vscode.ExtensionContext, fromBootstrap: FromBootstrap = {}): void {
  const log = vscode.window.createOutputChannel('Ultraplan', { log: true });
  const settings = new SettingsReader(log);
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '0');
  const backends = new Backends({
    context,
    log,
    embeddedAgent: acpAgentSource({ log, demo: scriptedAgentSource(context.extensionUri) }),
    service: { serverScript: path.join(context.extensionUri.fsPath, 'dist', 'server.mjs'), version },
  });
  const sessions = new FollowedSessions({ context, log, settings, backends });
  active = { sessions, backends };
  context.subscriptions.push(log, settings);
  // Sessions another window on this folder starts are followed here too (docs/service.md).
  context.subscriptions.push(new SessionsFromOtherWindows({ sessions, backends, settings, log }));
  log.info(`Ultraplan ${version} activated`);
  // Sign-in to team servers: a chunk of its own, so the first load stays small (docs/packaging.md).
  // Its command is registered now and waits for the chunk, so a run right after startup finds it.
  const serverAuth = import('./auth/serverAuthProvider').then((chunk) => {
    context.subscriptions.push(chunk.registerServerAuth(context, log));
    return chunk;
  });
  serverAuth.catch((err: unknown) => log.error(`sign-in to servers is unavailable: ${errorMessage(err)}`));

  const launch = async (prompt: string, s: UltraplanSettings): Promise<FollowedSession | undefined> => {
    if (s.backend === 'claude-web') {
      const retry = () => {
        const again = settings.readForBackend();
        return again ? launch(prompt, again) : undefined;
      };
      if (!(await prepareClaudeWebLaunch({ backends, settings: s, log, retry }))) return undefined;
    }
    return sessions.start(prompt, s);
  };
  const services: ExtensionServices = { context, log, settings, backends, sessions, launch };

  registerSessionCommands(services);
  registerCommand(services, SIGN_IN_COMMAND, async () => (await serverAuth).signInToServer());
  // Attach to Session…: its picker and link handling are a chunk loaded by its first run.
  registerCommand(services, 'ultraplan.attachSession', async (input?: unknown) =>
    (await import('./commands/attachCommand')).attachSession(services, input),
  );
  registerReviewCommands(services);
  registerBackendCommands(services);
  registerWorkspaceCommands(services);
  const reviews = registerUltrareview(services);
  const inbox = registerInbox(services, fromBootstrap.inbox, reviews);
  registerPlansOnDisk(services, inbox);
  // The Jules group watches for a Jules key: a chunk, and the group a chunk of its own once a key is set.
  import('./jules/julesInboxEntry').then(
    ({ registerJulesInbox }) => context.subscriptions.push(registerJulesInbox(services, inbox)),
    (err: unknown) => log.error(`the inbox's Jules group is unavailable: ${errorMessage(err)}`),
  );
  registerChatParticipant(context, { settings, log, launch });
}

export async function deactivate(): Promise<void> {
  const a = active;
  active = undefined;
  if (!a) return;
  // Stop pollers first (they use the backends), then close the backends; the session service and
  // its agents keep running for the next window.
  await a.sessions.close();
  await a.backends.dispose();
}

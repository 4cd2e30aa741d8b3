// The extension's entry point (package.json `main`). VS Code loads it at startup, so it stays
// small: it shows the idle status item, creates the plan inbox's view (empty until the rest puts
// its tree in it), and registers stand-ins for the contributed commands, the review panel's
// serializer, and the @ultraplan chat participant. The rest of the extension
// (dist/extension.mjs: backends, sessions, the panel) is imported the first time one of them is
// used, or at once when this workspace has sessions to re-attach or a review to bring back, or
// when the local session service already runs a live session of this folder (another window's).
import { pathToFileURL } from 'node:url';
import * as vscode from 'vscode';
import { OPEN_WALKTHROUGH_COMMAND, WALKTHROUGH_ID } from './agentSetup/agentNotice';
import { createIdleStatusItem } from './status/idleStatus';
import { createInboxView, type InboxViewHandle } from './inbox/inboxStandIn';
import { folderHasLiveSession } from './liveSessionPeek';
import { CHAT_STAND_IN, PERSISTED_SESSIONS_KEY, REVIEW_PANEL_KEY, REVIEW_THREADS_KEY } from '../core/stateKeys';

type FullExtension = typeof import('./extension');

const REVIEW_VIEW_TYPE = 'ultraplan.review';
const CHAT_PARTICIPANT_ID = 'ultraplan.ultraplan';

let full: Promise<FullExtension> | undefined;
let inbox: InboxViewHandle | undefined;

/** Something in this workspace's state that the full extension re-attaches at startup. */
function hasStateToRestore(context: vscode.ExtensionContext): boolean {
  const sessions = context.workspaceState.get<unknown>(PERSISTED_SESSIONS_KEY);
  const panel = context.workspaceState.get<unknown>(REVIEW_PANEL_KEY);
  const reviewThreads = context.workspaceState.get<unknown>(REVIEW_THREADS_KEY);
  return (Array.isArray(sessions) && sessions.length > 0) || (panel !== undefined && panel !== null) || reviewThreads !== undefined;
}

function contributedCommands(context: vscode.ExtensionContext): string[] {
  const manifest = context.extension.packageJSON as { contributes?: { commands?: Array<{ command?: unknown }> } };
  return (manifest.contributes?.commands ?? []).map((c) => c.command).filter((c): c is string => typeof c === 'string');
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  // Needs nothing of the rest, so it is never a stand-in.
  context.subscriptions.push(
    vscode.commands.registerCommand(OPEN_WALKTHROUGH_COMMAND, () =>
      vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH_ID, false),
    ),
  );
  // The inbox view: empty (its welcome) until the rest of the extension puts its tree in it.
  const view = createInboxView();
  inbox = view;
  context.subscriptions.push(view);
  if (hasStateToRestore(context)) {
    await loadFull(context, []);
    return;
  }
  const standIns: vscode.Disposable[] = [];
  const load = () => loadFull(context, standIns);

  standIns.push(createIdleStatusItem());
  for (const id of contributedCommands(context)) {
    if (id === OPEN_WALKTHROUGH_COMMAND) continue;
    standIns.push(
      vscode.commands.registerCommand(id, (...args: unknown[]) => {
        // The full extension registers the real command in place of this one.
        return load().then(() => vscode.commands.executeCommand(id, ...args));
      }),
    );
  }
  standIns.push(
    vscode.window.registerWebviewPanelSerializer(REVIEW_VIEW_TYPE, {
      deserializeWebviewPanel(panel: vscode.WebviewPanel) {
        // The workspace remembers no review (it is forgotten when the person closes the panel),
        // so there is no session to show in it.
        panel.dispose();
        return load().then(() => undefined);
      },
    }),
  );
  // The participant stays for the extension's lifetime and hands every request to the rest (an
  // id is not registered twice: the rest sees CHAT_STAND_IN and only provides the handler).
  const chat = (vscode as { chat?: typeof vscode.chat }).chat;
  if (typeof chat?.createChatParticipant === 'function') {
    try {
      const participant = chat.createChatParticipant(CHAT_PARTICIPANT_ID, (request, chatContext, stream, token) =>
        load().then((loaded) => loaded.forwardChatRequest(request, chatContext, stream, token)),
      );
      participant.iconPath = new vscode.ThemeIcon('checklist');
      context.subscriptions.push(participant);
      (globalThis as Record<symbol, unknown>)[CHAT_STAND_IN] = true;
    } catch {
      // The rest registers the participant itself (and logs why it could not) once loaded.
    }
  }
  context.subscriptions.push({ dispose: () => standIns.forEach((d) => d.dispose()) });
  // Not awaited: activation ends now; the rest loads once the running service says a session of
  // this folder is live (looking never starts one).
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const backend = vscode.workspace.getConfiguration('ultraplan').get<string>('backend', 'embedded');
  if (folder !== undefined && backend === 'embedded' && vscode.workspace.isTrusted) {
    const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '0');
    void folderHasLiveSession(version, folder)
      .then((live) => (live ? load() : undefined))
      .catch(() => undefined);
  }
}

function loadFull(context: vscode.ExtensionContext, standIns: vscode.Disposable[]): Promise<FullExtension> {
  full ??= (async () => {
    // dist/extension.mjs, the entry of the extension's ES module graph (docs/packaging.md). This file
    // is CommonJS, required at startup; the path is computed at run time, so esbuild leaves the
    // import to Node.
    const loaded = (await import(pathToFileURL(context.asAbsolutePath('dist/extension.mjs')).href)) as FullExtension;
    // The stand-ins stay until the rest is there (a second click while it loads waits for the same
    // import), then go in the same turn as the full extension registers the same command ids,
    // serializer and participant, and its own status item takes the idle one's place.
    for (const d of standIns.splice(0)) d.dispose();
    loaded.activate(context, inbox ? { inbox } : {});
    return loaded;
  })();
  return full;
}

export async function deactivate(): Promise<void> {
  await (await full)?.deactivate();
}

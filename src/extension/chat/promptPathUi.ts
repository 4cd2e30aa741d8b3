// The terminal's prompt path in the editor: the @ultraplan chat participant (a request to it is
// an invocation; `ultrareview` only hints) and "Ultraplan: Refine Plan…" (a session seeded with a
// saved plan or the current editor's markdown). Both launch through the same path as "Plan a Task…".
import * as vscode from 'vscode';
import type { FollowedSession } from '../sessions/followedSession';
import type { SettingsReader } from '../settings/settings';
import type { UltraplanSettings } from '../settings/settingsSchema';
import { CHAT_STAND_IN } from '../../core/stateKeys';
import { errorMessage } from '../../core/errors';

export const CHAT_PARTICIPANT_ID = 'ultraplan.ultraplan';

export interface LaunchDeps {
  settings: SettingsReader;
  log: vscode.LogOutputChannel;
  /** The launch every path shares: the backend's checks, then the session (undefined: not started). */
  launch: (prompt: string, settings: UltraplanSettings) => Promise<FollowedSession | undefined>;
}

let registeredHandler: vscode.ChatRequestHandler | undefined;

/** Answers a request that reached the participant the startup bootstrap registered (bootstrap.ts). */
export const forwardChatRequest: vscode.ChatRequestHandler = (request, context, stream, token) => {
  if (registeredHandler) return registeredHandler(request, context, stream, token);
  stream.markdown('Ultraplan could not register its chat participant; see **Ultraplan: Show Log**.');
  return {};
};

/** Registers @ultraplan where the editor has a chat API; elsewhere it says so in the log. */
export function registerChatParticipant(context: vscode.ExtensionContext, deps: LaunchDeps): void {
  // code-server and older hosts may have no chat API at all: the participant is optional.
  const chat = (vscode as { chat?: typeof vscode.chat }).chat;
  if (typeof chat?.createChatParticipant !== 'function') {
    deps.log.info('no chat API in this editor: the @ultraplan chat participant is not available');
    return;
  }
  const handler: vscode.ChatRequestHandler = async (request, _context, stream, token) =>
    (await import('./chatRequests')).answerChatRequest(request.prompt, stream, token, deps);
  registeredHandler = handler;
  // The startup bootstrap registered the participant already and forwards its requests here.
  if ((globalThis as Record<symbol, unknown>)[CHAT_STAND_IN] === true) return;
  try {
    const participant = chat.createChatParticipant(CHAT_PARTICIPANT_ID, handler);
    participant.iconPath = new vscode.ThemeIcon('checklist');
    context.subscriptions.push(participant);
  } catch (err) {
    // A host that refuses the participant must not stop the rest of the extension.
    deps.log.warn(`the @ultraplan chat participant could not be registered: ${errorMessage(err)}`);
  }
}

// The followed session a command about an approved plan works on (Show Changes Since Approval,
// Verify Against Plan): the one named (the panel's), else the only one whose plan was approved,
// else the person picks; says so when there is none.
import * as vscode from 'vscode';
import { chooseApprovedSession } from '../../core/execution/verifySession';
import type { FollowedSession } from '../sessions/followedSession';
import type { FollowedSessions } from '../sessions/followedSessions';

export async function pickApprovedSession(
  sessions: FollowedSessions,
  key: string | undefined,
  placeHolder: string,
): Promise<FollowedSession | undefined> {
  const choice = chooseApprovedSession(sessions.ordered(), key);
  if (choice.kind === 'chosen') return choice.session;
  if (choice.kind === 'none') {
    void vscode.window.showInformationMessage('Ultraplan: no followed session has an approved plan yet.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    choice.sessions.map((session) => ({ label: session.title, description: session.phase, session })),
    { placeHolder },
  );
  return picked?.session;
}

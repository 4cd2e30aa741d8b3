// The SessionNotifier in VS Code: notifications with buttons, the review command, the permission
// prompt. The one place a followed session's words reach the editor's UI.
import * as vscode from 'vscode';
import type { DecisionBinding } from '../../core/panelMessages';
import type { ToolPermissionRequest } from '../../core/permissionRequests';
import { ReviewPanel } from '../review/reviewPanel';
import { promptPermission, type PermissionDetailsView } from './permissionPrompts';
import type { NotifierAction, PermissionAsker, SessionNotifier } from './sessionNotifier';

export function vscodeNotifier(permissionDetails?: PermissionDetailsView): SessionNotifier {
  return {
    say(level, text, ...actions: NotifierAction[]) {
      const show =
        level === 'error'
          ? vscode.window.showErrorMessage
          : level === 'warning'
            ? vscode.window.showWarningMessage
            : vscode.window.showInformationMessage;
      void show(`Ultraplan: ${text}`, ...actions.map((a) => a.label)).then((picked) => actions.find((a) => a.label === picked)?.run());
    },
    showReview(key) {
      void vscode.commands.executeCommand('ultraplan.showReview', key);
    },
    copyReviewLink(key) {
      void vscode.commands.executeCommand('ultraplan.copyReviewLink', key);
    },
    openExternal(url) {
      void vscode.env.openExternal(vscode.Uri.parse(url, true));
    },
    isReviewShowing(key) {
      const panel = ReviewPanel.current;
      return panel !== undefined && panel.visible && panel.sessionKey === key;
    },
    askPermission(asker: PermissionAsker, request: ToolPermissionRequest, binding: DecisionBinding) {
      return promptPermission(asker, request, binding, permissionDetails);
    },
  };
}

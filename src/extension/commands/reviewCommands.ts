// Commands the review panel's keybindings run (through the webview, so each decision carries the
// binding of the plan shown), and approving a plan edited in an editor.
import * as vscode from 'vscode';
import type { InvokableAction } from '../../core/panelMessages';
import { ReviewPanel, adoptReviewPanel, registerReviewPanelSerializer, type ReviewPanelRestore } from '../review/reviewPanel';
import type { BroughtBackReview } from '../review/reviewPage';
import { registerCommand, type ExtensionServices } from './services';

export function registerReviewCommands(services: ExtensionServices, broughtBack: readonly BroughtBackReview[] = []): void {
  const { sessions } = services;
  const register = (id: string, run: (...args: unknown[]) => unknown) => registerCommand(services, id, run);

  // After a reload the workbench revives the panel (or the startup bootstrap brought it back
  // before this module loaded); the followed sessions say what it shows.
  const restore: ReviewPanelRestore = (panel, saved) => sessions.restorePanel(panel, saved);
  for (const brought of broughtBack) adoptReviewPanel(services.context, { log: services.log }, restore, brought);
  registerReviewPanelSerializer(services.context, { log: services.log }, restore);
  const invoke = (action: InvokableAction) => () => {
    const panel = ReviewPanel.current;
    if (!panel) {
      void vscode.window.showWarningMessage('Ultraplan: open the plan review first.');
      return;
    }
    panel.invoke(action);
  };
  register('ultraplan.review.approve', invoke('approve'));
  register('ultraplan.review.reject', invoke('reject'));
  register('ultraplan.review.teleport', invoke('teleport'));
  register('ultraplan.approveEditedPlan', () => sessions.approveEdited());
}

// Commands the review panel's keybindings run (through the webview, so each decision carries the
// binding of the plan shown), and approving a plan edited in an editor.
import * as vscode from 'vscode';
import type { InvokableAction } from '../../core/panelMessages';
import { ReviewPanel, registerReviewPanelSerializer } from '../review/reviewPanel';
import { registerCommand, type ExtensionServices } from './services';

export function registerReviewCommands(services: ExtensionServices): void {
  const { sessions } = services;
  const register = (id: string, run: (...args: unknown[]) => unknown) => registerCommand(services, id, run);

  // After a reload the workbench revives the panel; the followed sessions say what it shows.
  registerReviewPanelSerializer(services.context, { log: services.log }, (panel, saved) => sessions.restorePanel(panel, saved));
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
  // The inbox's menu passes its row, the panel's title nothing (the session it shows), the palette nothing (a pick).
  register('ultraplan.copyReviewLink', async (arg?: unknown) => {
    const key =
      typeof arg === 'string' ? arg : arg && typeof arg === 'object' && 'key' in arg && typeof arg.key === 'string' ? arg.key : undefined;
    await (await import('../review/copyReviewLink')).copyReviewLink(services, key ?? ReviewPanel.current?.sessionKey);
  });
  register('ultraplan.showChangesSinceApproval', async (key?: unknown) =>
    (await import('../review/changesSinceApproval')).showChangesSinceApproval(
      services,
      typeof key === 'string' ? key : ReviewPanel.current?.sessionKey,
    ),
  );
}

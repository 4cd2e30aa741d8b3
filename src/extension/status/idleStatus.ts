// The status bar item while no session is followed: it shows that Ultraplan is installed and
// how to start. Imports only vscode, so the startup bootstrap shows it without loading the rest.
import * as vscode from 'vscode';

export const STATUS_ITEM_ID = 'ultraplan.status';
export const IDLE_STATUS_TEXT = '$(checklist) Ultraplan';

/** Turns the status item into the idle one: a click plans a task. */
export function showIdleStatus(item: vscode.StatusBarItem): void {
  item.name = 'Ultraplan';
  item.text = IDLE_STATUS_TEXT;
  item.tooltip = 'Ultraplan: no planning session. Click to plan a task; "Ultraplan: Get Started" walks through the setup.';
  item.accessibilityInformation = { label: 'Ultraplan: no planning session. Plan a task.', role: 'button' };
  item.command = { title: 'Plan a Task…', command: 'ultraplan.planTask' };
  item.backgroundColor = undefined;
  item.show();
}

export function createIdleStatusItem(): vscode.StatusBarItem {
  const item = vscode.window.createStatusBarItem(STATUS_ITEM_ID, vscode.StatusBarAlignment.Left, 50);
  showIdleStatus(item);
  return item;
}

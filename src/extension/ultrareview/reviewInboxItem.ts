// The review's row at the top of the Plan Inbox: its stage and counts while it runs, its
// headline once done, where a click shows the findings.
import * as vscode from 'vscode';
import type { ReviewSummary } from './reviewController';
import { SHOW_FINDINGS_COMMAND } from './commandIds';

export function reviewInboxItem(summary: ReviewSummary): vscode.TreeItem {
  const item = new vscode.TreeItem(summary.running ? 'Reviewing changes' : 'Review', vscode.TreeItemCollapsibleState.None);
  item.id = 'review';
  item.description = summary.line;
  item.tooltip = [summary.scopeText && `Scope: ${summary.scopeText}`, summary.line, ...summary.details].filter(Boolean).join('\n');
  item.iconPath = new vscode.ThemeIcon(
    summary.running ? 'sync~spin' : summary.outcome === 'failed' ? 'error' : 'comment-discussion',
    summary.outcome === 'failed' ? new vscode.ThemeColor('list.errorForeground') : undefined,
  );
  item.contextValue = summary.running ? 'review running' : 'review';
  // Cancel is the row's inline button while it runs (package.json menus), never a plain click.
  if (!summary.running) item.command = { title: 'Show Findings', command: SHOW_FINDINGS_COMMAND };
  return item;
}

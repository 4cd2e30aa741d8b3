// The review panel's webview page: its options and its HTML (served under the CSP of
// reviewPanelHtml.ts). Shared by ReviewPanel and the startup bootstrap, which sets the page of a
// review it brings back before the rest of the extension has loaded (docs/panel.md, "After a
// reload"), so this module imports nothing but vscode and the page template.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { reviewPanelHtml } from './reviewPanelHtml';

export const REVIEW_VIEW_TYPE = 'ultraplan.review';
export const REVIEW_PANEL_TITLE = 'Ultraplan Review';

export function reviewWebviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    // Plan markdown is untrusted: a command: link must never run a command.
    enableCommandUris: false,
    enableForms: false,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media'), vscode.Uri.joinPath(extensionUri, 'dist')],
  };
}

/** Sets the options and the page (a fresh nonce) of a review panel's webview: its page loads from here. */
export function setReviewPage(webview: vscode.Webview, extensionUri: vscode.Uri): void {
  webview.options = reviewWebviewOptions(extensionUri);
  const dist = vscode.Uri.joinPath(extensionUri, 'dist');
  webview.html = reviewPanelHtml({
    cspSource: webview.cspSource,
    nonce: randomBytes(18).toString('base64'),
    scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
    styleUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css')).toString(),
  });
}

/** A review panel with its page set, not shown yet: the startup bootstrap's, when the workbench kept no tab of it. */
export function createReviewPanel(
  extensionUri: vscode.Uri,
  show: { column?: vscode.ViewColumn; preserveFocus?: boolean } = {},
): vscode.WebviewPanel {
  const panel = vscode.window.createWebviewPanel(
    REVIEW_VIEW_TYPE,
    REVIEW_PANEL_TITLE,
    { viewColumn: show.column ?? vscode.ViewColumn.Beside, preserveFocus: show.preserveFocus ?? false },
    // No retainContextWhenHidden: the webview keeps its drafts in setState and gets the state
    // again on `ready`, so a hidden panel need not hold a 5,000-line DOM in memory.
    reviewWebviewOptions(extensionUri),
  );
  setReviewPage(panel.webview, extensionUri);
  return panel;
}

/**
 * Whether the workbench kept a tab of the review panel. It revives only a panel whose tab it
 * kept; in the browser it often keeps none (it could not save its editors on shutdown).
 */
export function reviewTabKept(): boolean {
  return vscode.window.tabGroups.all.some((group) =>
    group.tabs.some((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.endsWith(REVIEW_VIEW_TYPE)),
  );
}

/** A review panel the startup bootstrap brought back with its page set, for the rest of the extension to adopt. */
export interface BroughtBackReview {
  webviewPanel: vscode.WebviewPanel;
  /** What the webview saved (unvalidated), when the workbench revived it. */
  saved: unknown;
  pageSet: true;
}

// The plan inbox's TreeView, created by the startup bootstrap so that showing the view does not
// load the rest of the extension: until the rest connects its tree, the view is empty and shows its
// welcome (with nothing persisted there is nothing to list; with sessions persisted the bootstrap
// loads the rest at once). Only vscode is imported here: this file is bundled into bootstrap.js.
import * as vscode from 'vscode';

export const INBOX_VIEW_ID = 'ultraplan.inbox';

/** The view the bootstrap created, and how the rest of the extension puts its tree in it. */
export interface InboxViewHandle {
  readonly view: vscode.TreeView<unknown>;
  connect(provider: vscode.TreeDataProvider<unknown>): vscode.Disposable;
}

export function createInboxView(): InboxViewHandle & vscode.Disposable {
  let target: vscode.TreeDataProvider<unknown> | undefined;
  const changed = new vscode.EventEmitter<unknown>();
  const view = vscode.window.createTreeView<unknown>(INBOX_VIEW_ID, {
    treeDataProvider: {
      onDidChangeTreeData: changed.event,
      getChildren: (element) => (target ? target.getChildren(element) : []),
      getTreeItem: (element) => (target ? target.getTreeItem(element) : new vscode.TreeItem('')),
      getParent: (element) => target?.getParent?.(element),
    },
  });
  return {
    view,
    connect(provider) {
      target = provider;
      const listening = provider.onDidChangeTreeData?.((e) => changed.fire(e));
      changed.fire(undefined);
      return new vscode.Disposable(() => {
        listening?.dispose();
        if (target === provider) target = undefined;
        changed.fire(undefined);
      });
    },
    dispose() {
      view.dispose();
      changed.dispose();
    },
  };
}

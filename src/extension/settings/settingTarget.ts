// Where a setting the person picks is written. VS Code applies the most specific value (folder,
// then workspace, then user), so writing the user's value while the workspace sets one changes
// nothing the person can see: the pick goes where the value that applies lives.

/** The values one setting has at each level, as vscode's WorkspaceConfiguration.inspect gives them. */
export interface InspectedSetting {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export type SettingTarget = 'workspaceFolder' | 'workspace' | 'global';

export function settingTarget(inspected: InspectedSetting | undefined): SettingTarget {
  if (inspected?.workspaceFolderValue !== undefined) return 'workspaceFolder';
  if (inspected?.workspaceValue !== undefined) return 'workspace';
  return 'global';
}

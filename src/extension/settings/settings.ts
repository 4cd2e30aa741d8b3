// Reads the extension's settings through the zod schemas of settingsSchema.ts. A bad value is
// reported once per distinct problem with an "Open Settings" button; the default is used meanwhile.
import * as vscode from 'vscode';
import { Disposable } from '../../core/lifecycle';
import { settingTarget } from './settingTarget';
import { backendProblems, parseSettings, type SettingProblem, type UltraplanSettings } from './settingsSchema';

const OPEN_SETTINGS = 'Open Settings';

export class SettingsReader extends Disposable {
  readonly #shown = new Set<string>();
  readonly #log: vscode.LogOutputChannel;

  constructor(log: vscode.LogOutputChannel) {
    super();
    this.#log = log;
    // A fixed setting may break again later; forget what was shown so it is reported again.
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('ultraplan')) this.#shown.clear();
      }),
    );
  }

  /** Current settings (defaults where a value is bad), reporting problems to the person. */
  read(): UltraplanSettings {
    const config = vscode.workspace.getConfiguration('ultraplan');
    const { settings, problems } = parseSettings((key) => config.get<unknown>(key));
    for (const p of problems) this.report(p);
    return settings;
  }

  /** Settings plus the backend's own requirements; undefined (and a message) when unusable. */
  readForBackend(): UltraplanSettings | undefined {
    const settings = this.read();
    const problems = backendProblems(settings);
    if (problems.length === 0) return settings;
    for (const p of problems) this.report(p, true);
    return undefined;
  }

  report(problem: SettingProblem, always = false): void {
    this.#log.warn(`settings: ${problem.message}`);
    if (!always && this.#shown.has(problem.message)) return;
    this.#shown.add(problem.message);
    void vscode.window.showErrorMessage(`Ultraplan: ${problem.message}`, OPEN_SETTINGS).then((choice) => {
      if (choice === OPEN_SETTINGS) void vscode.commands.executeCommand('workbench.action.openSettings', problem.key);
    });
  }
}

const TARGETS = {
  workspaceFolder: vscode.ConfigurationTarget.WorkspaceFolder,
  workspace: vscode.ConfigurationTarget.Workspace,
  global: vscode.ConfigurationTarget.Global,
} as const;

/** Writes `ultraplan.<key>` where the value that applies lives (see settingTarget.ts). */
export async function writeSetting(key: string, value: unknown): Promise<void> {
  const config = vscode.workspace.getConfiguration('ultraplan');
  await config.update(key, value, TARGETS[settingTarget(config.inspect(key))]);
}

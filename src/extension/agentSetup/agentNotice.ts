// The notice that the embedded backend ran the scripted demo because no agent was found: shown
// once per window, never again once the person chose "Don't Show Again", which turns the user
// setting ultraplan.agent.noAgentNotice off (a setting, so it can be turned back on, and written to
// settings.json at once, where the browser workbench might not save globalState before a reload).
// The demo stays labelled as a demo in the status bar and the panel either way.
import * as vscode from 'vscode';

const CHOOSE_BACKEND = 'Choose Backend…';
const GET_STARTED = 'Get Started';
const DONT_SHOW_AGAIN = "Don't Show Again";

export class AgentNotice {
  #shown = false;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  /** Shows `notice` unless it was shown in this window or `enabled` (the setting) is off. */
  show(notice: string, enabled: boolean): void {
    if (this.#shown || !enabled) return;
    this.#shown = true;
    void vscode.window.showWarningMessage(`Ultraplan: ${notice}`, CHOOSE_BACKEND, GET_STARTED, DONT_SHOW_AGAIN).then((choice) => {
      if (choice === CHOOSE_BACKEND) void vscode.commands.executeCommand('ultraplan.chooseBackend');
      if (choice === GET_STARTED) void vscode.commands.executeCommand(OPEN_WALKTHROUGH_COMMAND);
      if (choice === DONT_SHOW_AGAIN) {
        void vscode.workspace
          .getConfiguration('ultraplan')
          .update('agent.noAgentNotice', false, vscode.ConfigurationTarget.Global)
          .then(
            () => this.log.info('the no-agent notice will not be shown again (ultraplan.agent.noAgentNotice is off)'),
            (err: unknown) => this.log.warn(`could not turn ultraplan.agent.noAgentNotice off: ${String(err)}`),
          );
      }
    });
  }
}

/** Opens the walkthrough (package.json contributes.walkthroughs). */
export const OPEN_WALKTHROUGH_COMMAND = 'ultraplan.getStarted';
export const WALKTHROUGH_ID = 'ultraplan.ultraplan#gettingStarted';

// The notice that the embedded backend ran the scripted demo because no agent was found: shown
// once per window, never again once the person chose "Don't show again" (kept in globalState, so
// for every workspace). The demo stays labelled as a demo in the status bar and the panel either way.
import * as vscode from 'vscode';
import { NO_AGENT_NOTICE_DISMISSED_KEY } from './stateKeys';

const CHOOSE_BACKEND = 'Choose Backend…';
const GET_STARTED = 'Get Started';
const DONT_SHOW_AGAIN = "Don't Show Again";

export class AgentNotice {
  #shown = false;

  constructor(
    private readonly state: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** Whether `show` would show the notice now. */
  get due(): boolean {
    return !this.#shown && this.state.get<boolean>(NO_AGENT_NOTICE_DISMISSED_KEY) !== true;
  }

  show(notice: string): void {
    if (!this.due) return;
    this.#shown = true;
    void vscode.window.showWarningMessage(`Ultraplan: ${notice}`, CHOOSE_BACKEND, GET_STARTED, DONT_SHOW_AGAIN).then((choice) => {
      if (choice === CHOOSE_BACKEND) void vscode.commands.executeCommand('ultraplan.chooseBackend');
      if (choice === GET_STARTED) void vscode.commands.executeCommand(OPEN_WALKTHROUGH_COMMAND);
      if (choice === DONT_SHOW_AGAIN) {
        void this.state.update(NO_AGENT_NOTICE_DISMISSED_KEY, true).then(() => this.log.info('the no-agent notice will not be shown again'));
      }
    });
  }
}

/** Opens the walkthrough (package.json contributes.walkthroughs). */
export const OPEN_WALKTHROUGH_COMMAND = 'ultraplan.getStarted';
export const WALKTHROUGH_ID = 'ultraplan.ultraplan#gettingStarted';

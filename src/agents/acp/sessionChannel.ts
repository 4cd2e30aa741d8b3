// One ACP session on an agent's connection: the requests Ultraplan makes of it once session/new
// has answered.
import type { ClientConnection, PromptResponse } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import type { PlanModeTarget } from './planMode';

export class AcpSessionChannel {
  constructor(
    readonly connection: ClientConnection,
    readonly sessionId: string,
  ) {}

  // The requests' own promises, unwrapped by nobody: a turn's end is seen in the same tick as the
  // agent's answer, in order with the messages that follow it.

  /** A prompt; answers when the agent ends the turn. */
  prompt(text: string): Promise<PromptResponse> {
    return this.connection.agent.request('session/prompt', { sessionId: this.sessionId, prompt: [{ type: 'text', text }] });
  }

  setMode(modeId: string): Promise<unknown> {
    return this.connection.agent.request('session/set_mode', { sessionId: this.sessionId, modeId });
  }

  setConfigOption(configId: string, value: string): Promise<unknown> {
    return this.connection.agent.request('session/set_config_option', { sessionId: this.sessionId, configId, value });
  }

  /** Switches to plan mode, as a mode or a config option. */
  enterPlanMode(target: PlanModeTarget): Promise<unknown> {
    return target.via === 'mode' ? this.setMode(target.modeId) : this.setConfigOption(target.configId, target.value);
  }

  cancel(): Promise<void> {
    return this.connection.agent.notify('session/cancel', { sessionId: this.sessionId });
  }
}

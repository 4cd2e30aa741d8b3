// What the parts of the panel may ask of the view that composes them (reviewView.ts): the parts
// change the model directly and then say what follows.
import type { InvokableAction, WebviewToHostMessage } from '../../core/panelMessages';
import type { PanelModel } from '../panelModel';

export interface PanelActions {
  readonly model: PanelModel;
  /** Shows the model again. */
  render(): void;
  /** A draft changed in the model: written out at the bounded rate, no render needed. */
  draftsChanged(): void;
  decide(action: InvokableAction, notes?: string): void;
  reply(): void;
  send(message: WebviewToHostMessage): void;
  /** Shows the panel's own notice. */
  notice(text: string): void;
}

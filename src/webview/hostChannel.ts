// The webview's only way out: VS Code's acquireVsCodeApi, typed to the shared message schemas.
import type { WebviewSavedState, WebviewToHostMessage } from '../core/panelMessages';

interface VsCodeWebviewApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeWebviewApi;

export interface HostChannel {
  send(message: WebviewToHostMessage): void;
  /** Whatever was saved last (unvalidated: the caller parses it). */
  loadSaved(): unknown;
  save(state: WebviewSavedState): void;
}

export function connectToHost(): HostChannel {
  // acquireVsCodeApi may be called only once per page load.
  const api = acquireVsCodeApi();
  return {
    send: (message) => api.postMessage(message),
    loadSaved: () => api.getState(),
    save: (state) => api.setState(state),
  };
}

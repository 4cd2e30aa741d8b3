// The review panel's host side: one class owns the webview panel's whole life (create-or-reveal,
// revive after a reload through a WebviewPanelSerializer, dispose), serves the page under a strict
// CSP, and checks every message in both directions with the shared schemas of
// src/core/panelMessages.ts. It makes no decisions: each decision and reply goes to the request
// handler its owner sets, and the handler's answer (`sent`, or `refused` with the reason) goes back
// to the webview under the request's id, once. Drafts reach the owner as events; `ready` (re-send
// the state), `openLink` (validated again, then opened with vscode.env.openExternal) and
// `openFileDiff` (a file the execution touched, touchedFiles.ts) are handled here. Plan texts go to the webview once (splitPlanTexts): the panel remembers which the
// webview has and forgets it when the webview's page goes away (hidden, reloaded, a post that did
// not arrive) or asks for everything again (`ready`).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../../core/lifecycle';
import {
  PANEL_LIMITS,
  clip,
  isHttpUrl,
  parseStateMessage,
  parseWebviewSavedState,
  parseWebviewToHostMessage,
  splitPlanTexts,
  type InvokableAction,
  type PanelAnswer,
  type PanelRequest,
  type PanelState,
  type SaveDraftMessage,
  type SaveReplyDraftMessage,
} from '../../core/panelMessages';
import { samePanelState, withWebviewDraft } from '../../core/sessionProjection';
import { reviewPanelHtml } from './reviewPanelHtml';
import { errorMessage } from '../../core/errors';
import { openTouchedFile, type ApprovalBaseline } from './touchedFiles';
import type { PanelVerifications } from './panelVerifications';
import type { HostToPanelMessage } from '../../core/execution/verificationMessage';
import { VERIFY_AGAINST_PLAN_COMMAND } from '../ultrareview/commandIds';

/** Where the panel logs; a vscode.LogOutputChannel fits. */
export interface ReviewPanelLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface ReviewPanelOptions {
  extensionUri: vscode.Uri;
  log?: ReviewPanelLog;
  /** Opens a validated http(s) link; defaults to vscode.env.openExternal. */
  openExternal?: (uri: vscode.Uri) => Thenable<boolean>;
  /** A touched file as it was at approval, for its diff (none known: the file opens alone). */
  approvalBaseline?: ApprovalBaseline;
}

export interface ReviewPanelShowOptions {
  column?: vscode.ViewColumn;
  preserveFocus?: boolean;
}

const PANEL_TITLE = 'Ultraplan Review';

function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    // Plan markdown is untrusted: a command: link must never run a command.
    enableCommandUris: false,
    enableForms: false,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media'), vscode.Uri.joinPath(extensionUri, 'dist')],
  };
}

/** Answers one decision or reply from the panel. */
export type PanelRequestHandler = (request: PanelRequest) => Promise<PanelAnswer>;

export class ReviewPanel extends Disposable {
  static readonly viewType = 'ultraplan.review';
  static #current: ReviewPanel | undefined;

  static get current(): ReviewPanel | undefined {
    return ReviewPanel.#current;
  }

  static #verifications: PanelVerifications | undefined;

  /** Where the sessions' verifications are kept (set once at activation); the panel shows the one of its session. */
  static setVerifications(verifications: PanelVerifications): vscode.Disposable {
    ReviewPanel.#verifications = verifications;
    const current = (): ReviewPanel | undefined => ReviewPanel.#current;
    current()?.postVerification();
    return verifications.onDidChange((key) => {
      if (current()?.sessionKey === key) current()?.postVerification();
    });
  }

  /** Reveals the panel (creating it if there is none) and shows `state` in it. */
  static createOrShow(options: ReviewPanelOptions, state: PanelState, show: ReviewPanelShowOptions = {}): ReviewPanel {
    const existing = ReviewPanel.#current;
    if (existing) {
      existing.update(state);
      existing.reveal(show.column, show.preserveFocus);
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(
      ReviewPanel.viewType,
      PANEL_TITLE,
      { viewColumn: show.column ?? vscode.ViewColumn.Beside, preserveFocus: show.preserveFocus ?? false },
      // No retainContextWhenHidden: the webview keeps its drafts in setState and gets the state
      // again on `ready`, so a hidden panel need not hold a 5,000-line DOM in memory.
      webviewOptions(options.extensionUri),
    );
    return new ReviewPanel(panel, options, state);
  }

  /** Adopts a panel VS Code restored after a reload (see registerReviewPanelSerializer). */
  static revive(webviewPanel: vscode.WebviewPanel, options: ReviewPanelOptions, state?: PanelState): ReviewPanel {
    ReviewPanel.#current?.dispose();
    webviewPanel.webview.options = webviewOptions(options.extensionUri);
    return new ReviewPanel(webviewPanel, options, state);
  }

  readonly #panel: vscode.WebviewPanel;
  readonly #options: ReviewPanelOptions;
  readonly #onDidSaveDraft = this._register(new vscode.EventEmitter<SaveDraftMessage | SaveReplyDraftMessage>());
  readonly #onDidDispose = this._register(new vscode.EventEmitter<void>());
  #handler: PanelRequestHandler | undefined;
  #state: PanelState | undefined;
  /** The hashes of the plan texts the webview has: those of the last state posted to it. */
  #sentPlans: ReadonlySet<string> = new Set();
  /** What the webview shows now, as last given (its own saved drafts included): an equal state is not posted. */
  #shown: PanelState | undefined;
  /** The session whose verification the webview has (posted with its first state, and at each change). */
  #verificationOf: string | undefined;

  /** Drafts the webview saved as they were typed (its write rate is bounded): a plan's, or a reply. */
  readonly onDidSaveDraft: vscode.Event<SaveDraftMessage | SaveReplyDraftMessage> = this.#onDidSaveDraft.event;
  readonly onDidDispose: vscode.Event<void> = this.#onDidDispose.event;

  private constructor(panel: vscode.WebviewPanel, options: ReviewPanelOptions, state: PanelState | undefined) {
    super();
    this.#panel = panel;
    this.#options = options;
    ReviewPanel.#current = this;
    panel.iconPath = vscode.Uri.joinPath(options.extensionUri, 'media', 'icon.png');
    this._register(panel.onDidDispose(() => this.dispose()));
    this._register(panel.webview.onDidReceiveMessage((data: unknown) => this.#receive(data)));
    // Without retainContextWhenHidden a hidden webview's page is gone, and its plan texts with it.
    this._register(
      panel.onDidChangeViewState(() => {
        if (!panel.visible) this.#sentPlans = new Set();
      }),
    );
    panel.webview.html = this.#html();
    if (state) this.update(state);
  }

  get state(): PanelState | undefined {
    return this.#state;
  }

  get sessionKey(): string | undefined {
    return this.#state?.sessionKey;
  }

  get visible(): boolean {
    return !this.isDisposed && this.#panel.visible;
  }

  reveal(column?: vscode.ViewColumn, preserveFocus = false): void {
    if (!this.isDisposed) this.#panel.reveal(column, preserveFocus);
  }

  /** Who answers the panel's decisions and replies (one handler; the latest set wins). */
  setRequestHandler(handler: PanelRequestHandler): void {
    this.#handler = handler;
  }

  /**
   * Shows a new state. The message is checked with the same schema the webview uses (a text the
   * webview has was checked when it was sent); an invalid one (for example a plan over the size
   * limit) is logged and not sent, and the error is returned so the caller can tell the user.
   */
  update(state: PanelState): string | undefined {
    if (this.#shown && samePanelState(this.#shown, state)) {
      // Not posted (the webview shows this already), but it is what a new page gets.
      this.#state = state;
      return undefined;
    }
    const error = this.#postState(state);
    if (error !== undefined) return error;
    this.#state = state;
    this.#shown = state;
    this.#panel.title = state.title ? `${PANEL_TITLE}: ${clip(state.title, 40)}` : PANEL_TITLE;
    return undefined;
  }

  #postState(state: PanelState): string | undefined {
    const { message, has } = splitPlanTexts(state, this.#sentPlans);
    const parsed = parseStateMessage(message);
    if (!parsed.ok) {
      this.#options.log?.warn(`review panel: not showing an invalid state: ${parsed.error}`);
      return parsed.error;
    }
    this.#sentPlans = has;
    this.#post(parsed.value);
    if (this.#verificationOf !== state.sessionKey) this.postVerification(state.sessionKey);
    return undefined;
  }

  /** Sends the webview its session's verification (the store's copy, parsed on the way in). */
  postVerification(sessionKey = this.#shown?.sessionKey): void {
    const store = ReviewPanel.#verifications;
    if (!sessionKey || !store) return;
    this.#verificationOf = sessionKey;
    this.#post({ type: 'verification', sessionKey, verification: store.of(sessionKey) });
  }

  /** For the host keybindings: the webview acts as if the button was clicked (and may refuse, e.g. a reject with no feedback). */
  invoke(action: InvokableAction): void {
    this.#post({ type: 'invoke', action });
  }

  override dispose(): void {
    if (this.isDisposed) return;
    if (ReviewPanel.#current === this) ReviewPanel.#current = undefined;
    this.#onDidDispose.fire();
    super.dispose();
    this.#panel.dispose();
  }

  #post(message: HostToPanelMessage): void {
    if (this.isDisposed) return;
    void this.#panel.webview.postMessage(message).then(
      (delivered) => {
        // Not delivered: the webview has none of the texts it carried.
        if (!delivered && message.type === 'state') this.#sentPlans = new Set();
      },
      (error: unknown) => {
        if (message.type === 'state') this.#sentPlans = new Set();
        this.#options.log?.warn(`review panel: could not post a ${message.type} message: ${String(error)}`);
      },
    );
  }

  #receive(data: unknown): void {
    const parsed = parseWebviewToHostMessage(data);
    if (!parsed.ok) {
      this.#options.log?.warn(`review panel: ignored ${parsed.error}`);
      return;
    }
    const message = parsed.value;
    switch (message.type) {
      case 'ready':
        // A new page (or one missing a text): it has no plan text yet, nor the verification.
        this.#sentPlans = new Set();
        this.#verificationOf = undefined;
        // What the webview showed, its own drafts included.
        if (this.#shown) this.#postState(this.#shown);
        return;
      case 'openLink':
        this.#openLink(message.href);
        return;
      case 'openFileDiff':
        void openTouchedFile(message.sessionKey, message.path, this.#options.approvalBaseline, this.#options.log);
        return;
      case 'verify':
        void vscode.commands.executeCommand(VERIFY_AGAINST_PLAN_COMMAND, message.sessionKey);
        return;
      case 'continueStep':
        void vscode.commands.executeCommand(VERIFY_AGAINST_PLAN_COMMAND, message.sessionKey, { continueStep: message.stepId });
        return;
      case 'saveDraft':
      case 'saveReplyDraft':
        if (this.#shown) this.#shown = withWebviewDraft(this.#shown, message);
        this.#onDidSaveDraft.fire(message);
        return;
      default:
        void this.#answer(message);
    }
  }

  /** Exactly one answer per request, whatever happens in the handler. */
  async #answer(request: PanelRequest): Promise<void> {
    let answer: PanelAnswer;
    try {
      answer = this.#handler
        ? await this.#handler(request)
        : { result: 'refused', reason: 'The review is not connected to a session yet; nothing was sent.' };
    } catch (err) {
      this.#options.log?.warn(`review panel: ${request.type} failed: ${String(err)}`);
      answer = { result: 'refused', reason: `Something went wrong, nothing was sent: ${errorMessage(err)}` };
    }
    // Within the schema's bound, so the webview never drops the one answer it waits for.
    if (answer.result === 'refused') answer = { result: 'refused', reason: clip(answer.reason || 'Refused.', PANEL_LIMITS.textChars) };
    this.#post({ type: 'answer', requestId: request.requestId, ...answer });
  }

  #openLink(href: string): void {
    // Checked again here: the schema already demands http(s), but this is the last gate before the OS opens it.
    if (!isHttpUrl(href)) {
      this.#options.log?.warn('review panel: refused to open a link that is not http(s)');
      return;
    }
    const uri = vscode.Uri.parse(href, true);
    if (uri.scheme !== 'http' && uri.scheme !== 'https') return;
    this.#options.log?.info(`review panel: opening ${uri.scheme}://${uri.authority}/…`);
    const open = this.#options.openExternal ?? ((u: vscode.Uri) => vscode.env.openExternal(u));
    void Promise.resolve(open(uri)).catch((error: unknown) =>
      this.#options.log?.warn(`review panel: could not open link: ${String(error)}`),
    );
  }

  #html(): string {
    const webview = this.#panel.webview;
    const dist = vscode.Uri.joinPath(this.#options.extensionUri, 'dist');
    return reviewPanelHtml({
      cspSource: webview.cspSource,
      nonce: randomBytes(18).toString('base64'),
      ...panelAssets(dist.fsPath),
      assetsUri: webview.asWebviewUri(dist).toString(),
    });
  }
}

const assetsByFolder = new Map<string, { script: string; style: string }>();

/** dist/webview.js and dist/webview.css, read once per extension host: every panel's page carries them. */
function panelAssets(dist: string): { script: string; style: string } {
  let assets = assetsByFolder.get(dist);
  if (!assets) {
    try {
      assets = {
        script: readFileSync(path.join(dist, 'webview.js'), 'utf8'),
        style: readFileSync(path.join(dist, 'webview.css'), 'utf8'),
      };
    } catch (err) {
      throw new Error(`the review panel's files cannot be read from ${dist} (reinstalling Ultraplan puts them back): ${String(err)}`);
    }
    assetsByFolder.set(dist, assets);
  }
  return assets;
}

/**
 * Registers the serializer that brings the panel back after a window reload. `restore` gets the
 * revived panel and the key of the session the webview last showed, from what it saved (validated;
 * undefined when there was none or it was invalid), so the extension can re-attach the session
 * and call panel.update.
 */
export function registerReviewPanelSerializer(
  context: vscode.ExtensionContext,
  options: Omit<ReviewPanelOptions, 'extensionUri'>,
  restore: (panel: ReviewPanel, savedSessionKey: string | undefined) => void | Thenable<void>,
): vscode.Disposable {
  const registration = vscode.window.registerWebviewPanelSerializer(ReviewPanel.viewType, {
    async deserializeWebviewPanel(webviewPanel: vscode.WebviewPanel, saved: unknown) {
      let sessionKey: string | undefined;
      if (saved !== undefined && saved !== null) {
        const parsed = parseWebviewSavedState(saved);
        if (parsed.ok) sessionKey = parsed.value.sessionKey;
        else options.log?.warn(`review panel: discarded the saved state: ${parsed.error}`);
      }
      const panel = ReviewPanel.revive(webviewPanel, { ...options, extensionUri: context.extensionUri });
      await restore(panel, sessionKey);
    },
  });
  context.subscriptions.push(registration);
  return registration;
}

// The inbox's Jules group in VS Code: the rows julesInboxView words (client/jules/julesInboxRows.ts)
// as tree items, the listing (client/jules/julesInboxListing.ts) paused while the window is not in
// use and listed again when it is, and on a change of the key or of the API's address. A chunk of
// its own, loaded only when a Jules key is set (julesInboxEntry.ts).
import * as vscode from 'vscode';
import { Disposable, toDisposable } from '../../core/lifecycle';
import { JulesApi } from '../../client/jules/api';
import { JulesInboxListing } from '../../client/jules/julesInboxListing';
import { julesInboxView, type JulesInboxRow } from '../../client/jules/julesInboxRows';
import { readJulesSessions } from '../../client/jules/sessionList';
import type { FollowedSessions } from '../sessions/followedSessions';
import type { InboxExtraGroup } from '../inbox/inboxView';
import { julesKeyReader } from './julesKey';

function commandOf(row: JulesInboxRow): vscode.Command | undefined {
  const action = row.action;
  if (!action) return undefined;
  if (action.kind === 'open') return { title: 'Open Review', command: 'ultraplan.inbox.openReview', arguments: [action.key] };
  if (action.kind === 'attach') return { title: 'Attach to Session', command: 'ultraplan.attachSession', arguments: [action.link] };
  return { title: 'Set Jules API Key', command: 'ultraplan.setJulesApiKey' };
}

export class JulesInboxGroup extends Disposable implements InboxExtraGroup {
  readonly #changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.#changed.event;
  readonly #listing: JulesInboxListing;
  readonly #sessions: FollowedSessions;

  constructor(secrets: vscode.SecretStorage, readBaseUrl: () => string, sessions: FollowedSessions, log: vscode.LogOutputChannel) {
    super();
    this.#sessions = sessions;
    const apiAt = (baseUrl: string) =>
      new JulesApi({ getKey: julesKeyReader(secrets), baseUrl, log: (line) => log.debug(`http: ${line}`) });
    let api = apiAt(readBaseUrl());
    const listing = (this.#listing = new JulesInboxListing({
      read: (signal) => readJulesSessions(api, signal),
      log: (line) => log.warn(line),
    }));
    // Another address lists the sessions there at once, as a new key does.
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('ultraplan.jules.baseUrl')) return;
        const next = apiAt(readBaseUrl());
        if (next.baseUrl === api.baseUrl) return;
        api = next;
        void listing.refresh();
      }),
    );
    this._register(toDisposable(() => listing.dispose()));
    this._register(listing.onDidChange(() => this.#changed.fire()));
    // A Jules session followed, forgotten or moved on here changes its row's words and click; other
    // changes (a draft, another backend's session) leave the group as it is.
    let followed = this.#followedHere();
    this._register(
      sessions.onDidChange(() => {
        const now = this.#followedHere();
        if (now !== followed) this.#changed.fire();
        followed = now;
      }),
    );
    this._register(vscode.window.onDidChangeWindowState((state) => (state.focused ? listing.resume() : listing.pause())));
    if (!vscode.window.state.focused) listing.pause();
    void listing.refresh();
  }

  /** The key changed: list with it now. */
  refresh(): Promise<void> {
    return this.#listing.refresh();
  }

  /** The Jules sessions followed here and their phases, compared as one text. */
  #followedHere(): string {
    return this.#sessions.all
      .filter((c) => c.backend.kind === 'jules')
      .map((c) => `${c.sessionId}:${c.phase}`)
      .join(' ');
  }

  #view() {
    return julesInboxView(
      this.#listing.state,
      (id) => {
        const followed = this.#sessions.followed('jules', id);
        return followed ? { key: followed.key, phase: followed.phase } : undefined;
      },
      Date.now(),
    );
  }

  group(): vscode.TreeItem {
    const view = this.#view();
    const item = new vscode.TreeItem(view.label, vscode.TreeItemCollapsibleState.Expanded);
    item.id = 'group:jules';
    item.description = view.description;
    item.tooltip = view.tooltip;
    item.contextValue = 'group jules';
    return item;
  }

  rows(): vscode.TreeItem[] {
    return this.#view().rows.map((row) => {
      const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
      item.id = row.id;
      item.description = row.description;
      item.tooltip = row.tooltip;
      const color =
        row.tone === 'attention'
          ? new vscode.ThemeColor('list.warningForeground')
          : row.tone === 'error'
            ? new vscode.ThemeColor('list.errorForeground')
            : undefined;
      item.iconPath = new vscode.ThemeIcon(row.icon, color);
      item.accessibilityInformation = { label: `${row.label}, ${row.description}` };
      item.contextValue = 'julesSession';
      const command = commandOf(row);
      if (command) item.command = command;
      return item;
    });
  }
}

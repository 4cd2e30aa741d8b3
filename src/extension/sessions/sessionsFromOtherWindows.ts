// A session started in another window on this folder shows up here too, with no refresh: every
// couple of seconds this window lists its local session service's sessions (only when the service
// runs: looking never starts it) and follows the ones sessionsToPickUp picks, without taking the
// review panel from what the person is looking at. docs/service.md, "Several windows".
import * as vscode from 'vscode';
import { sameSessionId } from '../../core/attachTarget';
import { Disposable } from '../../core/lifecycle';
import { sessionsToPickUp } from '../../client/localService/otherWindows';
import type { Backends } from '../backends/backends';
import type { SettingsReader } from '../settings/settings';
import type { FollowedSessions } from './followedSessions';
import { errorMessage } from '../../core/errors';

/** How often the service's list is read. */
export const OTHER_WINDOWS_INTERVAL_MS = 2_000;

export interface SessionsFromOtherWindowsOptions {
  sessions: Pick<FollowedSessions, 'all' | 'attach' | 'onDidChange'>;
  backends: Pick<Backends, 'serviceSessionsIfRunning' | 'forRestored'>;
  settings: Pick<SettingsReader, 'read'>;
  log: vscode.LogOutputChannel;
  intervalMs?: number;
}

export class SessionsFromOtherWindows extends Disposable {
  readonly #o: SessionsFromOtherWindowsOptions;
  readonly #since = Date.now();
  /**
   * Every embedded session this window has followed, picked up or not: one the person let go
   * (Clear History) is never followed again on its own.
   */
  readonly #known = new Set<string>();
  readonly #stop = new AbortController();
  #running = false;

  constructor(options: SessionsFromOtherWindowsOptions) {
    super();
    this.#o = options;
    const remember = () => {
      for (const session of options.sessions.all) {
        if (session.backend.kind === 'embedded') this.#known.add(session.sessionId);
      }
    };
    remember();
    this._register(options.sessions.onDidChange(remember));
    const timer = setInterval(() => void this.check(), options.intervalMs ?? OTHER_WINDOWS_INTERVAL_MS);
    this._register({ dispose: () => clearInterval(timer) });
    this._register({ dispose: () => this.#stop.abort() });
  }

  /** One look (one at a time): follows what another window on this folder started. */
  async check(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (this.#running || this.isDisposed || folder === undefined || !vscode.workspace.isTrusted) return;
    const settings = this.#o.settings.read();
    if (settings.backend !== 'embedded') return;
    this.#running = true;
    try {
      const listed = await this.#o.backends.serviceSessionsIfRunning(settings, this.#stop.signal);
      if (!listed) return;
      const found = sessionsToPickUp(listed, {
        folder,
        since: this.#since,
        known: (id) => [...this.#known].some((known) => sameSessionId(known, id)),
      });
      for (const session of found) {
        if (this.isDisposed) return;
        this.#known.add(session.id);
        this.#o.log.info(`session ${session.id} was started in another window on this folder; following it here too`);
        const backend = await this.#o.backends.forRestored('embedded', settings, undefined);
        await this.#o.sessions.attach({ backend, sessionId: session.id, settings, show: false });
      }
    } catch (err) {
      this.#o.log.warn(`looking for sessions of other windows failed: ${errorMessage(err)}`);
    } finally {
      this.#running = false;
    }
  }
}

// Which session the review panel shows, and keeping it shown: the panel gets the shown session's
// panel part (from its snapshot) at most once per turn of the event loop, the session shown is
// remembered so a reload brings the same review back, and a panel the workbench could not revive
// is opened again: at once when the workbench kept no tab for it, else after a grace period.
import * as vscode from 'vscode';
import * as z from 'zod';
import type { PanelAnswer, PanelRequest, SaveDraftMessage, SaveReplyDraftMessage } from '../../core/panelMessages';
import { REVIEW_PANEL_KEY } from '../../core/stateKeys';
import { ReviewPanel } from '../review/reviewPanel';
import type { FollowedSession } from './followedSession';

/** How long the workbench gets to revive a review panel whose tab it kept before we open it ourselves. */
const PANEL_REVIVAL_GRACE_MS = 3000;

/**
 * Whether the workbench kept a tab of the review panel. It revives only a panel whose tab it
 * kept; in the browser it often keeps none (it could not save its editors on shutdown), and then
 * waiting for it would only delay the review.
 */
function reviewTabKept(): boolean {
  return vscode.window.tabGroups.all.some((group) =>
    group.tabs.some((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.endsWith(ReviewPanel.viewType)),
  );
}

const ReviewPanelRecordSchema = z.strictObject({ sessionKey: z.string().min(1).max(500) });
type ReviewPanelRecord = z.infer<typeof ReviewPanelRecordSchema>;

export interface ShownReviewPorts {
  context: Pick<vscode.ExtensionContext, 'workspaceState' | 'extensionUri'>;
  log: vscode.LogOutputChannel;
  session(key: string): FollowedSession | undefined;
  /** Sessions by who needs the person first (optionally only some). */
  ordered(filter?: (session: FollowedSession) => boolean): FollowedSession[];
  answer(request: PanelRequest): Promise<PanelAnswer>;
  saveDraft(draft: SaveDraftMessage | SaveReplyDraftMessage): void;
}

export class ShownReview {
  readonly #p: ShownReviewPorts;
  #update: NodeJS.Immediate | undefined;
  #revival: NodeJS.Timeout | undefined;
  /** Set once deactivation starts: a panel closed by the shutdown is not the person closing it. */
  #closing = false;

  constructor(ports: ShownReviewPorts) {
    this.#p = ports;
  }

  /** The key of the session the panel shows, if a panel is open. */
  get key(): string | undefined {
    return ReviewPanel.current?.sessionKey;
  }

  show(session: FollowedSession, preserveFocus = false): ReviewPanel {
    this.#remember(session.key);
    const existed = ReviewPanel.current;
    const { context, log } = this.#p;
    const panel = ReviewPanel.createOrShow({ extensionUri: context.extensionUri, log }, session.snapshot.panel, { preserveFocus });
    if (panel !== existed) this.#attach(panel);
    return panel;
  }

  /**
   * The shown session's panel part reaches the panel at most once per turn of the event loop (a
   * decision changes a session twice within one turn), and only when it differs from what the
   * webview has (ReviewPanel.update compares).
   */
  updateSoon(): void {
    if (this.#update) return;
    this.#update = setImmediate(() => {
      this.#update = undefined;
      const panel = ReviewPanel.current;
      const session = panel?.sessionKey !== undefined ? this.#p.session(panel.sessionKey) : undefined;
      if (!panel || !session) return;
      const error = panel.update(session.snapshot.panel);
      if (error) session.setOutcome(`The review panel cannot show this state: ${error}`, 'error');
    });
  }

  /** Closes the panel when the session it shows is no longer followed. */
  closeIfGone(): void {
    const panel = ReviewPanel.current;
    if (panel?.sessionKey !== undefined && !this.#p.session(panel.sessionKey)) panel.dispose();
  }

  /** A review panel the workbench revived after a reload: show the session it should. */
  restore(panel: ReviewPanel, savedKey: string | undefined): void {
    this.#attach(panel);
    // Which session: the one we last showed (our own record, written when shown), else the one
    // the webview's saved state names. The workbench stores that saved state with its editors,
    // and in the browser a reload can cut that save short, leaving an older session's state.
    // Without either, the panel shows the session that needs the person first.
    const remembered = this.#remembered();
    const session =
      (remembered ? this.#p.session(remembered) : undefined) ??
      (savedKey ? this.#p.session(savedKey) : undefined) ??
      (savedKey ? undefined : this.#p.ordered()[0]);
    this.#p.log.info(
      `review panel restored (${savedKey ? `saved state for ${savedKey}` : 'no saved state'}; last shown ${remembered ?? 'unknown'}; showing ${session?.key ?? 'nothing'})`,
    );
    if (session) {
      this.#remember(session.key);
      panel.update(session.snapshot.panel);
    } else if (savedKey) {
      // A session we no longer follow: there is nothing to show or decide in its review.
      panel.dispose();
    }
  }

  /**
   * After sessions were restored: the workbench normally revives the panel through its serializer,
   * but in the browser it cannot always save its editors on shutdown. If no panel came back, the
   * review comes back anyway: the session it showed when it was open (finished or not), else one
   * still in flight.
   */
  reviveSoon(): void {
    const remembered = this.#remembered();
    const shownBefore = remembered ? this.#p.session(remembered) : undefined;
    if (!shownBefore && this.#p.ordered((c) => !c.finished).length === 0) return;
    this.#revival = setTimeout(
      () => {
        this.#revival = undefined;
        const target = shownBefore ?? this.#p.ordered((c) => !c.finished)[0];
        if (!ReviewPanel.current && target) {
          this.#p.log.info(`review panel was not restored by the workbench; showing ${target.key}`);
          this.show(target, true);
        }
      },
      reviewTabKept() ? PANEL_REVIVAL_GRACE_MS : 0,
    );
  }

  /** Deactivation: timers stop, and the panel closing with the window is not forgotten. */
  close(): void {
    this.#closing = true;
    if (this.#revival) clearTimeout(this.#revival);
    if (this.#update) clearImmediate(this.#update);
  }

  #attach(panel: ReviewPanel): void {
    panel.setRequestHandler((request) => this.#p.answer(request));
    panel.onDidSaveDraft((draft) => this.#p.saveDraft(draft));
    panel.onDidDispose(() => {
      // The person closed the review: after a reload it stays closed.
      if (!this.#closing) void this.#p.context.workspaceState.update(REVIEW_PANEL_KEY, undefined);
    });
  }

  /** The session the review showed when it was last open, if it was not closed since. */
  #remembered(): string | undefined {
    const record = ReviewPanelRecordSchema.safeParse(this.#p.context.workspaceState.get<unknown>(REVIEW_PANEL_KEY));
    return record.success ? record.data.sessionKey : undefined;
  }

  /** The session the review shows, kept so a reload can bring the same review back. */
  #remember(key: string): void {
    const record: ReviewPanelRecord = { sessionKey: key };
    void this.#p.context.workspaceState.update(REVIEW_PANEL_KEY, record);
  }
}

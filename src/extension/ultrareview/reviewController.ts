// One review at a time in the editor: runs it (client/review/review.ts) with the reviewers the
// person chose, shows its stage and counts in the status bar and the Plan Inbox, and paints the
// findings as threads when it ends. A cancel stops every agent of the review.
import * as vscode from 'vscode';
import { Disposable } from '../../core/lifecycle';
import { outcomeDetails, outcomeHeadline, type ReviewOutcome } from '../../core/review/outcome';
import { progressLine, type ReviewProgress } from '../../core/review/progress';
import { describeScope, type ReviewScope } from '../../core/review/scope';
import type { ReviewRequest } from '../../client/review/review';
import type { ReviewThreads } from './reviewThreads';
import { SHOW_FINDINGS_COMMAND } from './commandIds';

export const REVIEW_STATUS_ID = 'ultraplan.reviewStatus';
/** The Comments panel's focus command, registered with the panel (see showFindings). */
const COMMENTS_PANEL_FOCUS = 'workbench.action.focusCommentsPanel';

/** What the inbox and the status bar show of the review. */
export interface ReviewSummary {
  running: boolean;
  scopeText: string;
  /** The stage line while running; the headline when done. */
  line: string;
  details: string[];
  outcome?: ReviewOutcome['kind'];
}

export class ReviewController extends Disposable {
  readonly #status: vscode.StatusBarItem;
  readonly #changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.#changed.event;
  #abort: AbortController | undefined;
  #summary: ReviewSummary | undefined;

  constructor(
    private readonly threads: ReviewThreads,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this.#status = this._register(vscode.window.createStatusBarItem(REVIEW_STATUS_ID, vscode.StatusBarAlignment.Left, 49));
    this.#status.name = 'Ultraplan Review';
    this._register(threads.onDidChange(() => this.#paintStatus()));
    if (threads.headline) this.#summary = { running: false, scopeText: '', line: threads.headline, details: [] };
    this.#paintStatus();
  }

  get summary(): ReviewSummary | undefined {
    return this.#summary;
  }

  get running(): boolean {
    return this.#abort !== undefined;
  }

  cancel(): void {
    this.#abort?.abort();
  }

  /**
   * The findings in the Comments panel, or the first one in its file where the panel is not there
   * yet: VS Code registers the panel, and its focus command, only once a comment thread has been
   * shown in the window (mainThreadComments.ts registerView, 1.100 and 1.139 alike). A review that
   * found nothing, or failed, has the log to show: what ran and why it ended so.
   */
  async showFindings(): Promise<void> {
    const first = this.threads.open[0];
    if (!first) {
      this.log.show(true);
      return;
    }
    if ((await vscode.commands.getCommands(true)).includes(COMMENTS_PANEL_FOCUS)) {
      await vscode.commands.executeCommand(COMMENTS_PANEL_FOCUS);
      return;
    }
    await vscode.window.showTextDocument(this.threads.uriOf(first.file), {
      selection: new vscode.Range(first.startLine - 1, 0, first.startLine - 1, 0),
    });
  }

  async run(request: Omit<ReviewRequest, 'signal' | 'onProgress'>): Promise<ReviewOutcome | undefined> {
    if (this.#abort) {
      void vscode.window.showInformationMessage('Ultraplan: a review is already running; cancel it first to start another.');
      return undefined;
    }
    const abort = new AbortController();
    this.#abort = abort;
    const scopeText = describeScope(request.scope);
    this.#set({ running: true, scopeText, line: 'collecting the change', details: [] });
    try {
      // The review runtime (git, the fleet, the diff parser) is a chunk loaded by the first review.
      const { runReview } = await import('../../client/review/review');
      const { outcome, change } = await runReview({
        ...request,
        signal: abort.signal,
        onProgress: (progress: ReviewProgress) => this.#set({ running: true, scopeText, line: progressLine(progress), details: [] }),
      });
      const headline = outcomeHeadline(outcome);
      const details = outcomeDetails(outcome);
      if (change?.withheld.length) details.push(`Left out as secrets (never sent): ${change.withheld.join(', ')}`);
      this.log.info(`review of ${scopeText}: ${headline}${details.length ? `; ${details.join('; ')}` : ''}`);
      let line = headline;
      if (outcome.kind === 'findings' && change) {
        const shown = await this.threads.show(change.root, headline, outcome.findings);
        if (shown.dismissed) line = `${headline} (${shown.dismissed} dismissed before, not shown)`;
      } else if (outcome.kind === 'clean' && change) {
        await this.threads.show(change.root, headline, []);
      }
      this.#set({ running: false, scopeText, line, details, outcome: outcome.kind });
      void this.#announce(outcome.kind, line, details);
      return outcome;
    } finally {
      this.#abort = undefined;
      this.#paintStatus();
    }
  }

  async #announce(kind: ReviewOutcome['kind'], line: string, details: string[]): Promise<void> {
    const text = `Ultraplan review: ${line}${details.length ? ` — ${details.join(' ')}` : ''}`;
    if (kind === 'failed') void vscode.window.showErrorMessage(text);
    else if (kind === 'findings') {
      const show = 'Show Findings';
      if ((await vscode.window.showInformationMessage(text, show)) === show) await vscode.commands.executeCommand(SHOW_FINDINGS_COMMAND);
    } else void vscode.window.showInformationMessage(text);
  }

  #set(summary: ReviewSummary): void {
    this.#summary = summary;
    this.#paintStatus();
    this.#changed.fire();
  }

  #paintStatus(): void {
    const summary = this.#summary;
    if (!summary) {
      this.#status.hide();
      return;
    }
    const open = this.threads.open.length;
    if (summary.running) {
      this.#status.text = `$(sync~spin) Review: ${summary.line}`;
      this.#status.tooltip = `Ultraplan is reviewing ${summary.scopeText}. Click to cancel.`;
      this.#status.command = { title: 'Cancel Review', command: 'ultraplan.cancelReview' };
    } else {
      this.#status.text = summary.outcome === 'failed' ? '$(error) Review failed' : `$(comment-discussion) Review: ${open} open`;
      this.#status.tooltip = [summary.line, ...summary.details].join('\n');
      this.#status.command = { title: 'Show Findings', command: SHOW_FINDINGS_COMMAND };
    }
    this.#status.accessibilityInformation = { label: String(this.#status.tooltip), role: 'button' };
    this.#status.show();
  }
}

/** The scope the person picks; undefined when they dismiss the pick. */
export async function pickScope(): Promise<ReviewScope | undefined> {
  type Item = vscode.QuickPickItem & { scope?: ReviewScope; ask?: 'range' | 'pr' };
  const items: Item[] = [
    {
      label: 'This branch and uncommitted work',
      description: 'against its merge-base with the default branch',
      scope: { kind: 'branch', includeUntracked: false },
    },
    { label: 'This branch, uncommitted work and untracked files', scope: { kind: 'branch', includeUntracked: true } },
    { label: 'Staged changes only', scope: { kind: 'staged' } },
    { label: 'A commit range…', ask: 'range' },
    { label: 'A GitHub pull request…', description: 'needs the gh command, logged in', ask: 'pr' },
  ];
  const picked = await vscode.window.showQuickPick(items, { title: 'Ultraplan: Review Changes', placeHolder: 'What should be reviewed?' });
  if (!picked) return undefined;
  if (picked.scope) return picked.scope;
  if (picked.ask === 'range') {
    const text = await vscode.window.showInputBox({
      title: 'Review a commit range',
      prompt: 'FROM..TO (TO defaults to HEAD)',
      validateInput: (value) => (/^[^\s.]+\.\.[^\s.]*$/.test(value.trim()) ? undefined : 'Write it as FROM..TO, e.g. main..HEAD'),
    });
    if (!text) return undefined;
    const [from, to] = text.trim().split('..');
    return { kind: 'range', from: from!, to: to || 'HEAD' };
  }
  const number = await vscode.window.showInputBox({
    title: 'Review a GitHub pull request',
    prompt: 'The pull request number',
    validateInput: (value) => (/^\d+$/.test(value.trim()) ? undefined : 'A number, e.g. 42'),
  });
  return number ? { kind: 'pr', number: Number(number.trim()) } : undefined;
}

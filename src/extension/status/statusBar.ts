// The one status bar item (left): the session that needs the person first, plus a count; its
// tooltip gives title, backend, elapsed time and revision count; a click opens the review (or asks
// an open permission request again). It reads
// the sessions' snapshots (core/sessionSnapshot.ts) and derives nothing of its own.
import { withVerificationWords } from './verificationWords';
import * as vscode from 'vscode';
import { Disposable, toDisposable } from '../../core/lifecycle';
import { needsYou } from '../../core/inbox';
import { PHASE_LABELS } from '../../core/phase';
import { formatElapsed, statusTooltipNotes, summarizeStatus } from '../../core/statusSummary';
import type { SessionSnapshot } from '../../core/sessionSnapshot';
import { STATUS_ITEM_ID, showIdleStatus } from './idleStatus';

/** Internal command (not in the palette): asks the open permission requests of a session again. */
export const ANSWER_PERMISSIONS_COMMAND = 'ultraplan.answerPermissions';

export class PhaseStatusBarItem extends Disposable {
  readonly #item = this._register(vscode.window.createStatusBarItem(STATUS_ITEM_ID, vscode.StatusBarAlignment.Left, 50));
  #sessions: readonly SessionSnapshot[] = [];

  constructor() {
    super();
    showIdleStatus(this.#item);
    // The tooltip's elapsed time goes stale; refresh it while something is shown.
    const timer = setInterval(() => {
      if (this.#sessions.length > 0) this.#render();
    }, 15_000);
    this._register(toDisposable(() => clearInterval(timer)));
  }

  update(sessions: readonly SessionSnapshot[]): void {
    this.#sessions = sessions;
    this.#render();
  }

  #render(): void {
    const summary = summarizeStatus(
      this.#sessions.map((s) => ({
        sessionId: s.identity.key,
        phase: s.state.attention,
        changedAt: s.state.attentionChangedAt,
        snapshot: s,
      })),
    );
    if (!summary) {
      showIdleStatus(this.#item);
      return;
    }
    const snapshot = summary.primary.snapshot;
    const s = snapshot.identity;
    const revisionCount = snapshot.inbox.revisionCount;
    this.#item.text = summary.text;
    const md = new vscode.MarkdownString(undefined, true);
    md.isTrusted = false;
    md.supportHtml = false;
    md.appendMarkdown('**Ultraplan** · ');
    md.appendText(s.title);
    md.appendMarkdown('\n\n');
    md.appendText(
      `Backend: ${s.backendLabel}${s.agentLabel ? ` · Agent: ${s.agentLabel}` : ''}${s.demo && !s.agentLabel?.startsWith('Demo') ? ' · Demo (scripted)' : ''}`,
    );
    md.appendMarkdown('\n\n');
    const permissions = snapshot.state.permissions.length;
    md.appendText(
      `Phase: ${PHASE_LABELS.words[summary.primary.phase]} · elapsed ${formatElapsed(Date.now() - s.createdAt)} · revisions: ${revisionCount}`,
    );
    for (const note of statusTooltipNotes(withVerificationWords(snapshot.inbox, snapshot.revisions))) {
      md.appendMarkdown('\n\n');
      md.appendText(note);
    }
    const mode = snapshot.modeText;
    if (mode) {
      md.appendMarkdown('\n\n');
      md.appendText(`Agent mode: ${mode}`);
    }
    const link = s.sessionLink;
    if (link) {
      // The session's page (claude.ai/code/<id>); parentheses escaped so the link cannot end early.
      md.appendMarkdown('\n\n');
      md.appendText('Session: ');
      const escaped = link.replace(/[()[\]]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
      md.appendMarkdown(`[${escaped}](${escaped})`);
    }
    if (permissions > 0) {
      md.appendMarkdown('\n\n');
      md.appendText(`${permissions} permission request${permissions === 1 ? '' : 's'} waiting; click to answer.`);
    }
    if (summary.count > 1) {
      md.appendMarkdown('\n\n');
      md.appendText(`${summary.count} sessions; click to review this one.`);
    }
    this.#item.tooltip = md;
    // Screen readers get plain words, not the tooltip's escaped markdown.
    const backendWords = `${s.backendLabel}${s.agentLabel ? `, agent ${s.agentLabel}` : ''}${s.demo && !s.agentLabel?.startsWith('Demo') ? ', Demo (scripted)' : ''}`;
    this.#item.accessibilityInformation = {
      label: `${summary.text.replace(/\$\([^)]*\)\s*/g, '')}. ${s.title}. Backend ${backendWords}. Elapsed ${formatElapsed(Date.now() - s.createdAt)}, ${revisionCount} revision${revisionCount === 1 ? '' : 's'}.${mode ? ` Agent mode ${mode}.` : ''}`,
      role: 'button',
    };
    // With a permission request open the click asks it again (its notification may have gone).
    const command =
      permissions > 0
        ? { title: 'Answer Permission Requests', command: ANSWER_PERMISSIONS_COMMAND, arguments: [s.key] }
        : { title: 'Show Plan Review', command: 'ultraplan.showReview', arguments: [s.key] };
    // Set only when it changes: setting it unregisters the one the workbench shows until the next
    // frame, so a click in between (the item redrawn for progress while a person reaches for it)
    // found no command.
    const shown = this.#item.command;
    if (typeof shown !== 'object' || shown.command !== command.command || shown.arguments?.[0] !== s.key) this.#item.command = command;
    this.#item.backgroundColor =
      snapshot.state.phase === 'failed'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : needsYou(summary.primary.phase)
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.#item.show();
  }
}

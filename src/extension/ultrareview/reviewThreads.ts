// The review's findings as native comment threads: one thread per finding on its lines of the
// working file, with Fix, Dismiss and Copy on its title bar and a resolved/unresolved state.
// Threads follow edits (re-anchored by the code they were raised on, or marked outdated) and are
// kept in workspace state, with the dismissals, so both survive a reload.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { anchorLines, isDismissed, reanchor, type Dismissal } from '../../core/review/anchor';
import { Disposable, toDisposable } from '../../core/lifecycle';
import type { ReviewFinding } from '../../core/review/merge';
import { readPersistedReviews, type PersistedReviews, type PersistedThread } from '../../core/review/persisted';
import { threadLabel, threadMarkdown } from '../../core/review/threadText';
import { REVIEW_THREADS_KEY } from '../../core/stateKeys';

export const REVIEW_CONTROLLER_ID = 'ultraplan.review';
/** Edits are re-anchored after typing pauses this long. */
const REANCHOR_DELAY_MS = 300;

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|]/g, '\\$&');
}

async function fileLines(uri: vscode.Uri): Promise<string[] | undefined> {
  const open = vscode.workspace.textDocuments.find((doc) => doc.uri.toString() === uri.toString());
  if (open) return open.getText().split(/\r?\n/);
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)).split(/\r?\n/);
  } catch {
    return undefined;
  }
}

interface LiveThread {
  data: PersistedThread;
  thread: vscode.CommentThread;
  /** An edit since the last re-anchoring changed this thread's own lines. */
  touched: boolean;
}

/** Whether any of the edits overlaps the 1-based lines [startLine, endLine]. */
function touches(changes: readonly vscode.TextDocumentContentChangeEvent[], startLine: number, endLine: number): boolean {
  return changes.some((change) => change.range.start.line <= endLine - 1 && change.range.end.line >= startLine - 1);
}

export class ReviewThreads extends Disposable {
  readonly #controller: vscode.CommentController;
  readonly #threads = new Map<string, LiveThread>();
  readonly #pending = new Map<string, NodeJS.Timeout>();
  #root = '';
  #headline = '';
  #dismissals: Dismissal[] = [];
  readonly #changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.#changed.event;

  constructor(
    private readonly state: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this.#controller = this._register(vscode.comments.createCommentController(REVIEW_CONTROLLER_ID, 'Ultraplan Review'));
    this.#controller.options = { prompt: 'Findings are answered with Fix, Dismiss or Copy', placeHolder: '' };
    this._register(
      vscode.workspace.onDidChangeTextDocument((event) => {
        const file = this.#fileOf(event.document);
        for (const live of this.#threads.values())
          if (live.data.file === file && touches(event.contentChanges, live.data.startLine, live.data.endLine)) live.touched = true;
        this.#scheduleReanchor(event.document);
      }),
    );
    this._register(vscode.workspace.onDidOpenTextDocument((doc) => this.#scheduleReanchor(doc)));
    this._register(toDisposable(() => this.#pending.forEach((timer) => clearTimeout(timer))));
    this.#restore();
  }

  get headline(): string {
    return this.#headline;
  }

  get open(): PersistedThread[] {
    return [...this.#threads.values()].map((t) => t.data).filter((d) => d.state === 'unresolved');
  }

  get all(): PersistedThread[] {
    return [...this.#threads.values()].map((t) => t.data);
  }

  #restore(): void {
    const read = readPersistedReviews(this.state.get(REVIEW_THREADS_KEY));
    if (!read.ok) {
      this.log.warn(`the saved review threads do not parse (${read.error}); starting without them`);
      return;
    }
    if (!read.value) return;
    this.#root = read.value.root;
    this.#headline = read.value.headline;
    this.#dismissals = read.value.dismissals;
    for (const data of read.value.threads) this.#add(data);
    for (const doc of vscode.workspace.textDocuments) this.#scheduleReanchor(doc);
  }

  async #save(): Promise<void> {
    const value: PersistedReviews = {
      version: 1,
      root: this.#root,
      headline: this.#headline,
      threads: this.all,
      dismissals: this.#dismissals,
    };
    await this.state.update(REVIEW_THREADS_KEY, value);
    this.#changed.fire();
  }

  /** A finding's file (relative, with /) in the reviewed folder. */
  uriOf(file: string): vscode.Uri {
    return vscode.Uri.file(path.join(this.#root, file));
  }

  #add(data: PersistedThread): void {
    this.#threads.set(data.id, { data, thread: this.#createThread(data), touched: false });
    this.#paint(data.id);
  }

  #createThread(data: PersistedThread): vscode.CommentThread {
    return this.#controller.createCommentThread(this.uriOf(data.file), new vscode.Range(data.startLine - 1, 0, data.endLine - 1, 0), []);
  }

  #paint(id: string): void {
    const live = this.#threads.get(id);
    if (!live) return;
    const { data, thread } = live;
    const body = new vscode.MarkdownString(threadMarkdown(data, escapeMarkdown));
    body.isTrusted = false;
    thread.comments = [{ body, mode: vscode.CommentMode.Preview, author: { name: 'Ultraplan review' }, contextValue: 'ultraplanFinding' }];
    thread.label = threadLabel(data, data.outdated);
    thread.canReply = false;
    thread.state = data.state === 'resolved' ? vscode.CommentThreadState.Resolved : vscode.CommentThreadState.Unresolved;
    thread.contextValue = `finding-${data.state}${data.outdated ? ' outdated' : ''}`;
    thread.collapsibleState =
      data.state === 'resolved' || data.outdated
        ? vscode.CommentThreadCollapsibleState.Collapsed
        : vscode.CommentThreadCollapsibleState.Expanded;
    thread.range = new vscode.Range(data.startLine - 1, 0, data.endLine - 1, 0);
  }

  /**
   * Shows a finished review's findings, replacing the last review's threads. Findings dismissed
   * before on the same code are left out; returns how many were.
   */
  async show(root: string, headline: string, findings: readonly ReviewFinding[]): Promise<{ shown: number; dismissed: number }> {
    this.clear();
    this.#root = root;
    this.#headline = headline;
    let dismissed = 0;
    for (const finding of findings) {
      const lines = (await fileLines(this.uriOf(finding.file))) ?? [];
      const anchor = anchorLines(lines, finding.startLine, finding.endLine);
      if (isDismissed(finding, anchor, this.#dismissals)) {
        dismissed++;
        continue;
      }
      this.#add({ ...finding, anchor, state: 'unresolved', outdated: anchor.length === 0 });
    }
    await this.#save();
    return { shown: this.#threads.size, dismissed };
  }

  clear(): void {
    for (const { thread } of this.#threads.values()) thread.dispose();
    this.#threads.clear();
  }

  /** The finding a thread command was given (the thread, or a comment of it). */
  findingOf(arg: unknown): PersistedThread | undefined {
    for (const live of this.#threads.values()) {
      if (arg === live.thread || (arg && typeof arg === 'object' && 'thread' in arg && (arg as { thread: unknown }).thread === live.thread))
        return live.data;
      if (live.thread.comments.includes(arg as vscode.Comment)) return live.data;
    }
    return undefined;
  }

  async setState(id: string, state: PersistedThread['state']): Promise<void> {
    const live = this.#threads.get(id);
    if (!live) return;
    live.data.state = state;
    this.#paint(id);
    await this.#save();
  }

  async dismiss(id: string, reason: string): Promise<void> {
    const live = this.#threads.get(id);
    if (!live) return;
    const { data } = live;
    this.#dismissals.push({ file: data.file, title: data.title, code: data.anchor, reason, at: new Date().toISOString() });
    live.thread.dispose();
    this.#threads.delete(id);
    await this.#save();
  }

  get dismissals(): readonly Dismissal[] {
    return this.#dismissals;
  }

  /** The document's path in the review's terms (relative, with /), or undefined when no review covers it. */
  #fileOf(doc: vscode.TextDocument): string | undefined {
    if (doc.uri.scheme !== 'file' || !this.#root) return undefined;
    return path.relative(this.#root, doc.uri.fsPath).split(path.sep).join('/');
  }

  #scheduleReanchor(doc: vscode.TextDocument): void {
    const file = this.#fileOf(doc);
    if (file === undefined || ![...this.#threads.values()].some((t) => t.data.file === file)) return;
    clearTimeout(this.#pending.get(file));
    this.#pending.set(
      file,
      setTimeout(() => {
        this.#pending.delete(file);
        void this.#reanchor(file, doc.getText().split(/\r?\n/));
      }, REANCHOR_DELAY_MS),
    );
  }

  async #reanchor(file: string, lines: string[]): Promise<void> {
    let changed = false;
    for (const [id, live] of this.#threads) {
      const { data } = live;
      if (data.file !== file) continue;
      const touched = live.touched;
      live.touched = false;
      const place = reanchor(data.anchor, data.startLine, lines);
      const outdated = place.kind === 'outdated';
      const moved = place.kind === 'at' && (place.startLine !== data.startLine || place.endLine !== data.endLine);
      if (outdated === data.outdated && !moved) continue;
      data.outdated = outdated;
      if (place.kind === 'at') Object.assign(data, { startLine: place.startLine, endLine: place.endLine });
      // The editor carries an open thread's zone along with the edits themselves. An edit that
      // replaced the thread's own lines can leave the zone where the edit put it, and a new range
      // the editor thinks it already has does not move it: such a thread is drawn anew.
      if (touched) {
        live.thread.dispose();
        live.thread = this.#createThread(data);
      }
      this.#paint(id);
      changed = true;
    }
    if (changed) await this.#save();
  }
}

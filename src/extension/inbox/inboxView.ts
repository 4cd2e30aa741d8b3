// The plan inbox in VS Code: a tree of every followed session grouped by what it needs from the
// person (core/inbox.ts decides the groups, order and words), its badge, its actions and Clear
// History. Approving is never an action here: a plan is approved only in its review, on the plan shown.
// Each row reads its session's snapshot (core/sessionSnapshot.ts); nothing is derived here. A change
// redraws only the rows it changed, the whole tree only when the grouping did (changedSurfaces.ts).
import { withVerificationWords } from '../status/verificationWords';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  groupInbox,
  inboxBadgeCount,
  inboxDescription,
  inboxPhaseLabel,
  inboxTooltipLines,
  needsYou,
  revisionDecisionsText,
  type InboxEntry,
  type InboxGroup,
  type InboxGroupId,
} from '../../core/inbox';
import { Disposable, toDisposable, type IDisposable } from '../../core/lifecycle';
import { PHASE_LABELS, type Phase } from '../../core/phase';
import type { FollowedSessions } from '../sessions/followedSessions';
import type { SessionSnapshot } from '../../core/sessionSnapshot';
import type { FollowedSession } from '../sessions/followedSession';
import { registerCommand, type ExtensionServices } from '../commands/services';
import type { InboxViewHandle } from './inboxStandIn';
import type { ReviewRows } from '../ultrareview/ultrareviewEntry';
import { errorMessage } from '../../core/errors';

type GroupNode = { kind: 'group'; id: InboxGroupId };
type SessionNode = { kind: 'session'; key: string };
type ExtraNode = { kind: 'extra'; group: InboxExtraGroup };
type ExtraRowNode = { kind: 'extraRow'; parent: ExtraNode; item: vscode.TreeItem };
type InboxNode = GroupNode | SessionNode | { kind: 'plan'; key: string; file: string } | { kind: 'review' } | ExtraNode | ExtraRowNode;

/**
 * A group the inbox shows after the sessions' ("Jules": jules/julesInboxGroup.ts, "Plans on disk":
 * review/plansOnDisk.ts), rows made by its owner.
 */
export interface InboxExtraGroup {
  readonly onDidChange: vscode.Event<void>;
  /** The group's row; undefined: not shown (nothing in it). */
  group(): vscode.TreeItem | undefined;
  rows(): vscode.TreeItem[];
}

/** Ages are coarse (minutes); refreshed this often, and only while the view is visible. */
const AGE_REFRESH_MS = 30_000;

/** The codicon the status bar shows for a phase ("$(checklist) Ultraplan: plan ready"): one table for both. */
function phaseIcon(phase: Phase): vscode.ThemeIcon {
  const id = /^\$\(([^)]+)\)/.exec(PHASE_LABELS.statusBar[phase])?.[1] ?? 'circle-outline';
  const color = needsYou(phase)
    ? new vscode.ThemeColor('list.warningForeground')
    : phase === 'failed'
      ? new vscode.ThemeColor('list.errorForeground')
      : undefined;
  return new vscode.ThemeIcon(id, color);
}

/** The row's entry with what verification found, once its plan's execution completed and was verified. */
function verifiedEntry(s: SessionSnapshot): SessionSnapshot['inbox'] {
  return withVerificationWords(s.inbox, s.revisions);
}

function tooltipOf(s: SessionSnapshot): vscode.MarkdownString {
  const entry = verifiedEntry(s);
  const md = new vscode.MarkdownString(undefined, true);
  md.isTrusted = false;
  md.supportHtml = false;
  md.appendMarkdown('**');
  md.appendText(entry.title);
  md.appendMarkdown('**\n\n');
  const lines = inboxTooltipLines(entry);
  const decisions = revisionDecisionsText(s.revisions);
  if (decisions) lines.push(`Decisions: ${decisions}`);
  lines.forEach((line, i) => {
    if (i > 0) md.appendMarkdown('  \n');
    md.appendText(line);
  });
  return md;
}

export class InboxTree extends Disposable implements vscode.TreeDataProvider<InboxNode> {
  readonly #sessions: FollowedSessions;
  readonly #changed = this._register(new vscode.EventEmitter<InboxNode | InboxNode[] | undefined>());
  readonly onDidChangeTreeData = this.#changed.event;
  readonly #view: vscode.TreeView<unknown>;
  #timer: NodeJS.Timeout | undefined;
  /** The sessions grouped as of the last change. */
  #groups: Array<InboxGroup<InboxEntry>> = [];
  /**
   * The nodes handed to the view, one object per group and session: the view knows an element by
   * its identity, so a changed row is redrawn by firing the node it was given.
   */
  readonly #groupNodes = new Map<InboxGroupId, GroupNode>();
  readonly #sessionNodes = new Map<string, SessionNode>();

  readonly #reviews: ReviewRows | undefined;
  /** The extra groups, in the order shown. */
  readonly #extras: ExtraNode[] = [];

  constructor(sessions: FollowedSessions, handle: InboxViewHandle | undefined, reviews?: ReviewRows) {
    super();
    this.#sessions = sessions;
    this.#reviews = reviews;
    if (reviews) this._register(reviews.onDidChange(() => this.refresh()));
    if (handle) {
      this.#view = handle.view;
      this._register(handle.connect(this as vscode.TreeDataProvider<unknown>));
    } else {
      this.#view = this._register(
        vscode.window.createTreeView<InboxNode>('ultraplan.inbox', { treeDataProvider: this }),
      ) as vscode.TreeView<unknown>;
    }
    this._register(sessions.onDidChange((change) => (change.all ? this.refresh() : this.#refreshRows(change.keys))));
    this._register(this.#view.onDidChangeVisibility(() => this.#tick()));
    this._register(toDisposable(() => this.#timer && clearInterval(this.#timer)));
    this.refresh();
  }

  /**
   * Shows `group` after the sessions' groups, before the other extra groups (`first`) or after them
   * (loaded after the inbox: its code is a chunk of its own). Disposing the result removes it.
   */
  addGroup(group: InboxExtraGroup, first = false): IDisposable {
    const node: ExtraNode = { kind: 'extra', group };
    if (first) this.#extras.unshift(node);
    else this.#extras.push(node);
    const listening = group.onDidChange(() => this.#changed.fire(undefined));
    this.#changed.fire(undefined);
    return toDisposable(() => {
      listening.dispose();
      const at = this.#extras.indexOf(node);
      if (at >= 0) this.#extras.splice(at, 1);
      this.#changed.fire(undefined);
    });
  }

  refresh(): void {
    const entries = this.#sessions.snapshots().map((s) => s.inbox);
    this.#groups = groupInbox(entries);
    const keys = new Set(entries.map((e) => e.key));
    for (const key of [...this.#sessionNodes.keys()]) if (!keys.has(key)) this.#sessionNodes.delete(key);
    const count = inboxBadgeCount(entries);
    this.#view.badge =
      count > 0 ? { value: count, tooltip: `${count} session${count === 1 ? '' : 's'} need${count === 1 ? 's' : ''} you` } : undefined;
    this.#changed.fire(undefined);
    this.#tick();
  }

  /** Redraws only these sessions' rows (their group and place did not change). */
  #refreshRows(keys: readonly string[]): void {
    this.#groups = groupInbox(this.#sessions.snapshots().map((s) => s.inbox));
    const nodes = keys.map((key) => this.#sessionNodes.get(key));
    if (nodes.some((n) => n === undefined)) this.refresh();
    else this.#changed.fire(nodes as SessionNode[]);
  }

  #groupNode(id: InboxGroupId): GroupNode {
    let node = this.#groupNodes.get(id);
    if (!node) this.#groupNodes.set(id, (node = { kind: 'group', id }));
    return node;
  }

  #sessionNode(key: string): SessionNode {
    let node = this.#sessionNodes.get(key);
    if (!node) this.#sessionNodes.set(key, (node = { kind: 'session', key }));
    return node;
  }

  /** The age refresh runs only while the view is on screen. */
  #tick(): void {
    if (this.#view.visible && !this.#timer) this.#timer = setInterval(() => this.#changed.fire(undefined), AGE_REFRESH_MS);
    else if (!this.#view.visible && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  getChildren(node?: InboxNode): InboxNode[] {
    if (!node) {
      const groups: InboxNode[] = this.#groups.map((g) => this.#groupNode(g.id));
      groups.push(...this.#extras.filter((n) => n.group.group()));
      return this.#reviews?.item() ? [{ kind: 'review' }, ...groups] : groups;
    }
    if (node.kind === 'extra') return node.group.rows().map((item): ExtraRowNode => ({ kind: 'extraRow', parent: node, item }));
    if (node.kind === 'group') {
      const group = this.#groups.find((g) => g.id === node.id);
      return (group?.entries ?? []).map((e) => this.#sessionNode(e.key));
    }
    if (node.kind === 'session') {
      const s = this.#sessions.get(node.key)?.snapshot;
      return [...(s?.state.savedPlans ?? [])].reverse().map((file) => ({ kind: 'plan', key: node.key, file }));
    }
    return [];
  }

  getParent(node: InboxNode): InboxNode | undefined {
    if (node.kind === 'review' || node.kind === 'extra') return undefined;
    if (node.kind === 'extraRow') return node.parent;
    if (node.kind === 'plan') return this.#sessionNode(node.key);
    if (node.kind === 'session') {
      const s = this.#sessions.get(node.key)?.snapshot;
      const group = groupInbox(s ? [s.inbox] : [])[0];
      return group ? this.#groupNode(group.id) : undefined;
    }
    return undefined;
  }

  getTreeItem(node: InboxNode): vscode.TreeItem {
    if (node.kind === 'review') return this.#reviews?.item() ?? new vscode.TreeItem('Review');
    if (node.kind === 'extra') return node.group.group() ?? new vscode.TreeItem('');
    if (node.kind === 'extraRow') return node.item;
    if (node.kind === 'group') {
      const group = this.#groups.find((g) => g.id === node.id);
      const item = new vscode.TreeItem(group?.label ?? node.id, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group:${node.id}`;
      item.description = String(group?.entries.length ?? 0);
      item.contextValue = 'group';
      return item;
    }
    const s = this.#sessions.get(node.key)?.snapshot;
    if (!s) return new vscode.TreeItem('(no longer followed)');
    if (node.kind === 'plan') {
      const item = new vscode.TreeItem(path.basename(node.file), vscode.TreeItemCollapsibleState.None);
      item.id = `plan:${node.key}:${node.file}`;
      item.description = vscode.workspace.asRelativePath(path.dirname(node.file));
      item.resourceUri = vscode.Uri.file(node.file);
      item.iconPath = new vscode.ThemeIcon('file');
      item.tooltip = node.file;
      item.contextValue = 'planFile';
      item.command = { title: 'Open Saved Plan', command: 'ultraplan.inbox.openSavedPlan', arguments: [node] };
      return item;
    }
    const entry = verifiedEntry(s);
    const hasPlans = s.state.savedPlans.length > 0;
    const item = new vscode.TreeItem(
      entry.title,
      hasPlans ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
    item.id = `session:${entry.key}`;
    item.description = inboxDescription(entry, Date.now());
    item.iconPath = phaseIcon(entry.attention);
    item.tooltip = tooltipOf(s);
    item.accessibilityInformation = { label: `${entry.title}, ${inboxPhaseLabel(entry.attention)}, ${item.description}` };
    item.contextValue = [
      'session',
      entry.finished ? 'finished' : 'live',
      // Verify Against Plan is on the row of a session whose plan's execution completed.
      ...(entry.attention === 'completed' ? ['completed'] : []),
      ...(s.identity.sessionLink ? ['link'] : []),
      // On an ultraplan-server: it has a review page (Copy Review Link).
      ...(s.identity.backendKind === 'server' ? ['server'] : []),
      ...(hasPlans ? ['plans'] : []),
    ].join(' ');
    item.command = { title: 'Open Review', command: 'ultraplan.inbox.openReview', arguments: [node] };
    return item;
  }
}

/** The session key a command was given: a tree node (click, menu) or a key. */
function keyOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg && typeof arg === 'object' && typeof (arg as { key?: unknown }).key === 'string') return (arg as { key: string }).key;
  return undefined;
}

export function registerInbox(services: ExtensionServices, handle: InboxViewHandle | undefined, reviews?: ReviewRows): InboxTree {
  const { sessions, context } = services;
  const register = (id: string, run: (...args: unknown[]) => unknown) => registerCommand(services, id, run);
  const tree = new InboxTree(sessions, handle, reviews);
  context.subscriptions.push(tree);

  const sessionOf = (arg: unknown): FollowedSession | undefined => {
    const key = keyOf(arg);
    const c = key === undefined ? undefined : sessions.get(key);
    if (!c) void vscode.window.showWarningMessage('Ultraplan: that session is no longer in the inbox.');
    return c;
  };

  register('ultraplan.inbox.openReview', (arg) => {
    const c = sessionOf(arg);
    if (c) sessions.show(c);
  });
  register('ultraplan.inbox.stop', async (arg) => {
    const c = sessionOf(arg);
    if (!c || c.finished) return;
    const stop = 'Stop Session';
    const picked = await vscode.window.showWarningMessage(
      `Stop "${c.title}"? The agent is stopped and its session archived.`,
      { modal: true },
      stop,
    );
    if (picked === stop) await vscode.commands.executeCommand('ultraplan.stopSession', c.key);
  });
  register('ultraplan.inbox.openInBrowser', (arg) => {
    const c = sessionOf(arg);
    if (c) return vscode.commands.executeCommand('ultraplan.openInBrowser', c.key);
    return undefined;
  });
  register('ultraplan.inbox.openSavedPlan', async (arg) => {
    const c = sessionOf(arg);
    if (!c) return;
    const given = arg && typeof arg === 'object' ? (arg as { file?: unknown }).file : undefined;
    const saved = c.state.savedPlans;
    const file = typeof given === 'string' && saved.includes(given) ? given : saved[saved.length - 1];
    if (!file) {
      void vscode.window.showInformationMessage(`Ultraplan: no plan was saved from "${c.title}".`);
      return;
    }
    try {
      await vscode.window.showTextDocument(vscode.Uri.file(file));
    } catch (err) {
      void vscode.window.showWarningMessage(
        `Ultraplan: the saved plan ${vscode.workspace.asRelativePath(file)} cannot be opened (moved or deleted?): ${errorMessage(err)}`,
      );
    }
  });
  register('ultraplan.inbox.remove', async (arg) => {
    const c = sessionOf(arg);
    if (!c) return;
    if (!c.finished) {
      void vscode.window.showInformationMessage(`Ultraplan: "${c.title}" is still running; stop it first to remove it.`);
      return;
    }
    await sessions.forgetFinished([c.key]);
  });
  register('ultraplan.clearHistory', async () => {
    await sessions.restored;
    const finished = sessions.all.filter((c) => c.finished).length;
    if (finished === 0) {
      void vscode.window.showInformationMessage('Ultraplan: the history is empty; sessions still running are kept.');
      return;
    }
    const clear = 'Clear History';
    const picked = await vscode.window.showWarningMessage(
      `Forget ${finished} finished session${finished === 1 ? '' : 's'} (their revisions and decisions)? Sessions still running are kept; saved plan files stay where they are.`,
      { modal: true },
      clear,
    );
    if (picked === clear) await sessions.forgetFinished();
  });
  return tree;
}

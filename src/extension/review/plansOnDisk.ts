// The plans other tools wrote, found in their known folders (core/planDiscovery.ts) under each
// workspace folder and the person's home: each folder listed (never walked), watched with a
// FileSystemWatcher, the list newest first and bounded. The inbox shows it as "Plans on disk";
// Review Plan File… offers it. A chunk of its own, loaded after activation.
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../../core/lifecycle';
import { errorMessage } from '../../core/errors';
import { MAX_LISTED_PLANS, PLAN_TOOL_LABELS, newestPlans, planFolders, type FoundPlan, type PlanFolder } from '../../core/planDiscovery';
import type { SettingsReader } from '../settings/settings';

/** Changes come in bursts (an agent writing a plan): one listing after the last. */
const REFRESH_DEBOUNCE_MS = 300;
/** Files read from one folder at most (a folder of thousands is listed, not stat'ed whole). */
const MAX_FILES_PER_FOLDER = 500;

/** A folder as listed: where it is, and what it holds. */
interface ListedFolder {
  readonly folder: PlanFolder;
  readonly uri: vscode.Uri;
  /** Shown before a file name: ".cursor/plans/", "~/.claude/plans/". */
  readonly shownAs: string;
}

export class PlansOnDisk extends Disposable {
  readonly #changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.#changed.event;
  readonly #settings: SettingsReader;
  readonly #log: vscode.LogOutputChannel;
  #found: FoundPlan[] = [];
  #watchers: vscode.Disposable[] = [];
  #timer: NodeJS.Timeout | undefined;
  #listing: Promise<void> | undefined;

  constructor(settings: SettingsReader, log: vscode.LogOutputChannel) {
    super();
    this.#settings = settings;
    this.#log = log;
    this._register(vscode.workspace.onDidChangeWorkspaceFolders(() => this.#rewatch()));
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('ultraplan.plansDirectory') || e.affectsConfiguration('ultraplan.plansOnDisk.includeHome'))
          this.#rewatch();
      }),
    );
    this._register({
      dispose: () => {
        for (const w of this.#watchers) w.dispose();
        if (this.#timer) clearTimeout(this.#timer);
      },
    });
    this.#rewatch();
  }

  /** The plans found, newest first (at most MAX_LISTED_PLANS). */
  get found(): readonly FoundPlan[] {
    return this.#found;
  }

  /** Lists again now (Review Plan File… reads a fresh list). */
  refresh(): Promise<void> {
    this.#listing ??= this.#list().finally(() => (this.#listing = undefined));
    return this.#listing;
  }

  #folders(): ListedFolder[] {
    const s = this.#settings.read();
    const folders = planFolders(s.plansDirectory, s['plansOnDisk.includeHome']);
    const listed: ListedFolder[] = [];
    const roots = vscode.workspace.workspaceFolders ?? [];
    for (const folder of folders) {
      const at = folder.segments.join('/');
      if (folder.base === 'home') {
        listed.push({ folder, uri: vscode.Uri.file(path.join(os.homedir(), ...folder.segments)), shownAs: `~/${at}/` });
        continue;
      }
      for (const root of roots) {
        listed.push({
          folder,
          uri: vscode.Uri.joinPath(root.uri, ...folder.segments),
          shownAs: roots.length > 1 ? `${root.name}/${at}/` : `${at}/`,
        });
      }
    }
    return listed;
  }

  #rewatch(): void {
    for (const w of this.#watchers.splice(0)) w.dispose();
    for (const { folder, uri } of this.#folders()) {
      // The folder's own files only: the glob has no "**".
      const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(uri, folder.glob));
      const later = () => this.#later();
      watcher.onDidCreate(later);
      watcher.onDidChange(later);
      watcher.onDidDelete(later);
      this.#watchers.push(watcher);
    }
    void this.refresh();
  }

  #later(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.refresh();
    }, REFRESH_DEBOUNCE_MS);
  }

  async #list(): Promise<void> {
    const found: FoundPlan[] = [];
    await Promise.all(this.#folders().map((listed) => this.#listFolder(listed, found)));
    const next = newestPlans(found, MAX_LISTED_PLANS);
    const same =
      next.length === this.#found.length &&
      next.every((p, i) => p.location === this.#found[i]?.location && p.mtime === this.#found[i]?.mtime);
    this.#found = next;
    if (!same) this.#changed.fire();
  }

  async #listFolder({ folder, uri, shownAs }: ListedFolder, into: FoundPlan[]): Promise<void> {
    let entries: Array<[string, vscode.FileType]>;
    try {
      entries = await vscode.workspace.fs.readDirectory(uri);
    } catch {
      return; // no such folder: that tool wrote no plans here
    }
    const names = entries
      .filter(([name, type]) => type === vscode.FileType.File && folder.matches(name))
      .map(([name]) => name)
      .slice(0, MAX_FILES_PER_FOLDER);
    await Promise.all(
      names.map(async (name) => {
        const file = vscode.Uri.joinPath(uri, name);
        try {
          const stat = await vscode.workspace.fs.stat(file);
          into.push({ location: file.toString(), shownPath: `${shownAs}${name}`, tool: folder.tool, mtime: stat.mtime });
        } catch (err) {
          this.#log.debug(`plans on disk: ${file.fsPath} could not be read: ${errorMessage(err)}`);
        }
      }),
    );
  }
}

/** How a found plan reads in a list: its file name, where and whose it is. */
export function foundPlanLabel(plan: FoundPlan): { label: string; description: string } {
  const name = plan.shownPath.slice(plan.shownPath.lastIndexOf('/') + 1);
  return { label: name, description: `${PLAN_TOOL_LABELS[plan.tool]} · ${plan.shownPath.slice(0, -name.length - 1)}` };
}

/** The inbox's "Plans on disk" group (inbox/inboxView.ts shows what this gives). */
export class PlansOnDiskRows {
  readonly onDidChange: vscode.Event<void>;

  constructor(private readonly plans: PlansOnDisk) {
    this.onDidChange = plans.onDidChange;
  }

  group(): vscode.TreeItem | undefined {
    const count = this.plans.found.length;
    if (count === 0) return undefined;
    const item = new vscode.TreeItem('Plans on disk', vscode.TreeItemCollapsibleState.Collapsed);
    item.id = 'group:plansOnDisk';
    item.description = String(count);
    item.tooltip =
      'Plans other tools wrote (Copilot, Cursor, JetBrains Air, Claude Code) and plans saved here, newest first. Click one to review it.';
    item.contextValue = 'group plansOnDisk';
    return item;
  }

  rows(): vscode.TreeItem[] {
    return this.plans.found.map((plan) => {
      const { label, description } = foundPlanLabel(plan);
      const uri = vscode.Uri.parse(plan.location);
      const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
      item.id = `diskPlan:${plan.location}`;
      item.description = `${description} · ${new Date(plan.mtime).toLocaleString()}`;
      item.resourceUri = uri;
      item.iconPath = new vscode.ThemeIcon('file-text');
      item.tooltip = `${plan.shownPath}\nClick to review this plan in Ultraplan.`;
      item.contextValue = 'diskPlan';
      item.command = { title: 'Review Plan File', command: 'ultraplan.reviewPlanFile', arguments: [uri] };
      return item;
    });
  }
}

// Teleport targets: the plan is saved as Markdown under the plans folder, never
// overwriting, then opened in VS Code's Chat (prefilled, not sent), run as a task (the plan file
// as its own argument, never pasted into a shell line), or just opened. A chunk of its own, loaded
// at the first teleport.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { plansFolder } from './plansFolder';
import { firstFreePlanFileName, planSlug } from '../../core/planFile';
import type { SavedPlanFacts } from '../../core/planFrontMatter';
import { checkPlansFolder, createPlanFile, realPlansFolder } from './planFileWriter';
import { taskArgv, type TeleportTarget } from '../settings/settingsSchema';
import { errorMessage } from '../../core/errors';

export type ConcreteTarget = Exclude<TeleportTarget, 'ask'>;

const OWN_EXTENSION_ID = 'ultraplan.ultraplan';

/** Chat prefill carries the plan itself up to this size; larger plans are referenced by file. */
const CHAT_INLINE_LIMIT = 20_000;

function fileWorkspaceRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((root) => root.uri.scheme === 'file').map((root) => root.uri.fsPath);
}

/** Why plans cannot be saved in the plans folder (no folder open, or it leads out of the workspace), or undefined. */
export async function plansFolderProblem(plansDirectory: string): Promise<string | undefined> {
  const folder = plansFolder(plansDirectory);
  if (!folder) return 'Open a folder first: teleported plans are saved inside the workspace.';
  if (folder.scheme !== 'file') return undefined;
  try {
    await checkPlansFolder(folder.fsPath, fileWorkspaceRoots());
    return undefined;
  } catch (err) {
    return errorMessage(err);
  }
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch (err) {
    if (err instanceof vscode.FileSystemError && err.code === 'FileNotFound') return false;
    // Anything else (permissions, …) must not be mistaken for "free": surface it.
    throw err;
  }
}

/**
 * Saves the plan as `<yyyy-mm-dd>-<slug>.plan.md` (-2, -3, … when the name is taken), with front
 * matter saying where it came from and its steps as todos.
 */
export async function savePlanFile(
  plan: string,
  title: string,
  facts: Omit<SavedPlanFacts, 'decidedAt'>,
  plansDirectory: string,
  now = new Date(),
): Promise<vscode.Uri> {
  const folder = plansFolder(plansDirectory);
  if (!folder) throw new Error('Open a folder first: teleported plans are saved inside the workspace.');
  const slug = planSlug(plan, title);
  // The front matter's writer and the steps' reader (markdown-it): a chunk loaded when a plan is first saved.
  const { savedPlanText } = await import('../../core/planFrontMatter');
  const text = savedPlanText(plan, { ...facts, decidedAt: now.toISOString() });
  if (folder.scheme === 'file') {
    // On disk: the folder's real path, inside the workspace, then an exclusive create, so a
    // symlinked plans folder leads nowhere and simultaneous teleports never overwrite each other.
    const real = await realPlansFolder(folder.fsPath, fileWorkspaceRoots());
    return vscode.Uri.file(await createPlanFile(real, now, slug, text));
  }
  await vscode.workspace.fs.createDirectory(folder);
  // Other file systems have no create-only write through workspace.fs: check, then write.
  const name = await firstFreePlanFileName(now, slug, (n) => exists(vscode.Uri.joinPath(folder, n)));
  const file = vscode.Uri.joinPath(folder, name);
  await vscode.workspace.fs.writeFile(file, new TextEncoder().encode(text));
  return file;
}

export async function pickTeleportTarget(taskCommand: readonly string[]): Promise<ConcreteTarget | undefined> {
  // Task is offered as ready only when it can run; otherwise it says what is missing, comes last,
  // and picking it explains how to set it up (targetProblem) before anything is sent.
  const taskProblem = targetProblem('task', taskCommand);
  const task: vscode.QuickPickItem & { target: ConcreteTarget } = taskProblem
    ? { label: '$(play) Task (not set up)', description: taskProblem, target: 'task' }
    : {
        label: '$(play) Task',
        description: `Run ${taskCommand[0] ?? ''} with the plan file (ultraplan.teleport.taskCommand)`,
        target: 'task',
      };
  const items: Array<vscode.QuickPickItem & { target: ConcreteTarget }> = [
    { label: '$(comment-discussion) Chat', description: 'Open VS Code Chat with the plan prefilled (not sent)', target: 'chat' },
    ...(taskProblem ? [] : [task]),
    { label: '$(file) File', description: 'Just open the saved plan file', target: 'file' },
    ...(taskProblem ? [task] : []),
  ];
  const picked = await vscode.window.showQuickPick(items, { title: 'Teleport the plan to…', placeHolder: 'Where should the plan run?' });
  return picked?.target;
}

/** Why a target cannot be used right now (checked before the plan is teleported), or undefined. */
export function targetProblem(target: ConcreteTarget, taskCommand: readonly string[]): string | undefined {
  if (target !== 'task') return undefined;
  if (!vscode.workspace.isTrusted)
    return 'Teleport to Task is not available in an untrusted workspace (it runs a program). Trust the workspace, or teleport to Chat or File.';
  if (taskCommand.length === 0)
    return 'Set ultraplan.teleport.taskCommand (e.g. ["my-agent", "--plan", "${planFile}"]) to teleport to a task.';
  return undefined;
}

export interface OpenedTarget {
  /** What happened, for the panel and the log. */
  text: string;
  level: 'info' | 'warning';
}

/** Opens the saved plan where the person asked. Never throws for a missing chat: falls back to the file. */
export async function openTeleportTarget(
  target: ConcreteTarget,
  file: vscode.Uri,
  plan: string,
  taskCommand: readonly string[],
  log: vscode.LogOutputChannel,
): Promise<OpenedTarget> {
  const shown = vscode.workspace.asRelativePath(file);
  switch (target) {
    case 'file':
      await vscode.window.showTextDocument(file, { preview: false });
      return { text: `Saved to ${shown} and opened it.`, level: 'info' };
    case 'chat':
      return openInChat(file, plan, shown, log);
    case 'task':
      return runAsTask(file, taskCommand, shown, log);
  }
}

async function openInChat(file: vscode.Uri, plan: string, shown: string, log: vscode.LogOutputChannel): Promise<OpenedTarget> {
  const query =
    plan.length <= CHAT_INLINE_LIMIT ? `Implement this plan (saved in ${shown}):\n\n${plan}` : `Implement the plan in #file:${shown}`;
  const commands = await vscode.commands.getCommands(true);
  let failure: string | undefined;
  if (!commands.includes('workbench.action.chat.open')) {
    failure = 'VS Code Chat is not available here';
  } else if (!hasChatProvider()) {
    // The command exists without any chat provider (code-server): an opened Chat would never
    // answer, so it is not opened at all.
    failure = 'No chat provider is installed here (VS Code Chat would have nothing to answer it)';
  } else {
    try {
      await vscode.commands.executeCommand('workbench.action.chat.open', { query, isPartialQuery: true });
      log.info(`teleport: chat opened with the plan prefilled (${query.length} chars)`);
      return { text: `Saved to ${shown}; Chat opened with the plan prefilled (not sent).`, level: 'info' };
    } catch (err) {
      failure = `opening Chat failed (${errorMessage(err)})`;
    }
  }
  log.warn(`teleport: ${failure}; opening the plan file instead`);
  await vscode.window.showTextDocument(file, { preview: false });
  const text = `Saved to ${shown}. ${failure}, so the plan file is open instead.`;
  void vscode.window.showWarningMessage(`Ultraplan: ${text}`);
  return { text, level: 'warning' };
}

/**
 * True when some other installed extension contributes a chat participant (someone to answer the
 * plan). Ours does not count: it launches Ultraplan sessions, it does not implement plans.
 */
function hasChatProvider(): boolean {
  return vscode.extensions.all.some((ext) => {
    if (ext.id.toLowerCase() === OWN_EXTENSION_ID) return false;
    const contributes = (ext.packageJSON as { contributes?: { chatParticipants?: unknown[] } } | undefined)?.contributes;
    return Array.isArray(contributes?.chatParticipants) && contributes.chatParticipants.length > 0;
  });
}

async function runAsTask(
  file: vscode.Uri,
  taskCommand: readonly string[],
  shown: string,
  log: vscode.LogOutputChannel,
): Promise<OpenedTarget> {
  const { command, args } = taskArgv(taskCommand, file.fsPath);
  const folder = vscode.workspace.getWorkspaceFolder(file) ?? vscode.workspace.workspaceFolders?.[0];
  // No shell at all: the program gets the path as one argv entry. (ShellExecution's Strong
  // quoting wraps an argument in '…' without escaping a ' inside it, so a folder named
  // "it's $(cmd)" would run cmd.)
  const execution = new vscode.ProcessExecution(command, args, folder ? { cwd: folder.uri.fsPath } : {});
  const task = new vscode.Task(
    { type: 'ultraplan', plan: shown },
    folder ?? vscode.TaskScope.Workspace,
    `Run plan ${path.basename(file.fsPath)}`,
    'Ultraplan',
    execution,
  );
  task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, panel: vscode.TaskPanelKind.New };
  log.info(`teleport: running task ${command} with ${args.length} argument(s)`);
  await vscode.tasks.executeTask(task);
  return { text: `Saved to ${shown}; running it as a task (${command}).`, level: 'info' };
}

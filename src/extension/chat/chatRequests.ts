// What @ultraplan answers and Refine Plan does: a chunk loaded at the first chat request or Refine
// Plan, so the first load holds only the participant's registration (promptPathUi.ts).
import * as vscode from 'vscode';
import type { FollowedSession } from '../sessions/followedSession';
import { plansFolder } from '../review/plansFolder';
import { chatRequestAction, keywordHints, refinePlanPrompt } from '../../core/promptPath';
import { planOfFile } from '../../core/planFile';
import { REVIEW_CHANGES_COMMAND } from '../ultrareview/commandIds';
import { errorMessage } from '../../core/errors';
import type { LaunchDeps } from './promptPathUi';

export async function answerChatRequest(
  text: string,
  stream: vscode.ChatResponseStream,
  token: vscode.CancellationToken,
  deps: LaunchDeps,
): Promise<vscode.ChatResult> {
  const action = chatRequestAction(text);
  if (action.kind === 'usage') {
    stream.markdown(action.message);
    return {};
  }
  if (action.kind === 'review') {
    stream.markdown(action.message);
    await vscode.commands.executeCommand(REVIEW_CHANGES_COMMAND);
    return {};
  }
  const settings = deps.settings.readForBackend();
  if (!settings) {
    stream.markdown("Ultraplan's settings need fixing first (see the notification).");
    return { errorDetails: { message: 'invalid settings' } };
  }
  for (const hint of keywordHints(text)) stream.markdown(new vscode.MarkdownString().appendText(`${hint}\n\n`));
  if (token.isCancellationRequested) return {};
  stream.progress('Starting a planning session…');
  deps.log.info(`@ultraplan: launching from a chat request (${action.prompt.length} chars)`);
  const controller = await deps.launch(action.prompt, settings);
  if (!controller) {
    stream.markdown('The planning session did not start; the notification says why.');
    return { errorDetails: { message: 'not started' } };
  }
  stream.markdown(
    new vscode.MarkdownString()
      .appendText(`Planning "${controller.title}" on ${controller.backend.label}. `)
      .appendText('The plan opens in the review panel when it is ready; approve, reject, edit or teleport it there.'),
  );
  stream.button({ command: 'ultraplan.showReview', title: 'Show Plan Review', arguments: [controller.key] });
  const link = controller.identity.sessionLink;
  if (link) {
    stream.markdown(new vscode.MarkdownString().appendText(`\n\nSession: ${link}`));
    stream.button({ command: 'ultraplan.openInBrowser', title: 'Open in Browser', arguments: [controller.key] });
  }
  return {};
}

type PlanSource = vscode.QuickPickItem & ({ from: 'editor'; document: vscode.TextDocument } | { from: 'file'; uri: vscode.Uri });

/** "Ultraplan: Refine Plan…": pick a plan, then launch a session that refines it. */
export async function refinePlan(deps: LaunchDeps): Promise<FollowedSession | undefined> {
  const settings = deps.settings.readForBackend();
  if (!settings) return undefined;
  const items: PlanSource[] = [];
  const editor = vscode.window.activeTextEditor;
  if (editor && editor.document.languageId === 'markdown' && editor.document.getText().trim().length > 0) {
    items.push({
      label: '$(edit) Current editor',
      description: vscode.workspace.asRelativePath(editor.document.uri),
      from: 'editor',
      document: editor.document,
    });
  }
  const folder = plansFolder(settings.plansDirectory);
  if (folder) {
    let entries: [string, vscode.FileType][] = [];
    try {
      entries = await vscode.workspace.fs.readDirectory(folder);
    } catch {
      entries = []; // no plans saved yet
    }
    const names = entries
      .filter(([name, type]) => type === vscode.FileType.File && name.endsWith('.md'))
      .map(([name]) => name)
      .sort()
      .reverse();
    for (const name of names) {
      const uri = vscode.Uri.joinPath(folder, name);
      items.push({ label: `$(file) ${name}`, description: vscode.workspace.asRelativePath(folder), from: 'file', uri });
    }
  }
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      `Ultraplan: no plan to refine. Open a plan (markdown) in the editor, or save one under ${settings.plansDirectory} (a teleported plan is saved there).`,
    );
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Ultraplan: Refine Plan',
    placeHolder: 'The plan to refine in a new planning session',
  });
  if (!picked) return undefined;
  let plan: string;
  let source: string;
  if (picked.from === 'editor') {
    plan = picked.document.getText();
    source = picked.document.isUntitled ? 'an unsaved editor' : vscode.workspace.asRelativePath(picked.document.uri);
  } else {
    try {
      plan = new TextDecoder('utf-8', { fatal: true }).decode(await vscode.workspace.fs.readFile(picked.uri));
    } catch (err) {
      void vscode.window.showErrorMessage(`Ultraplan: could not read ${vscode.workspace.asRelativePath(picked.uri)}: ${errorMessage(err)}`);
      return undefined;
    }
    source = vscode.workspace.asRelativePath(picked.uri);
  }
  // A saved plan's front matter says where it came from; the agent refines the plan itself.
  const input = refinePlanPrompt(planOfFile(plan), source);
  if (!input.ok) {
    void vscode.window.showWarningMessage(`Ultraplan: ${input.message}`);
    return undefined;
  }
  deps.log.info(`refining the plan in ${source} (${plan.length} chars)`);
  return deps.launch(input.prompt, settings);
}

// Commands about sessions: planning a task (palette, selection, refine), showing a review,
// stopping, teleporting, opening a session in the browser.
import * as vscode from 'vscode';
import { BACKENDS } from '../../core/backendKinds';
import { isReviewRequest, keywordHints, promptFromText } from '../../core/promptPath';
import { REVIEW_CHANGES_COMMAND } from '../ultrareview/commandIds';
import { PHASE_LABELS } from '../../core/phase';
import { checkEmbeddedAgent, embeddedAgentDescription } from '../agentSetup/acpAgentSource';
import { openSessionInBrowser } from '../claudeWeb/claudeWebUi';
import type { FollowedSessions } from '../sessions/followedSessions';
import { ANSWER_PERMISSIONS_COMMAND } from '../status/statusBar';
import type { FollowedSession } from '../sessions/followedSession';
import { registerCommand, type ExtensionServices } from './services';

export function registerSessionCommands(services: ExtensionServices): void {
  const { sessions, settings, log, launch } = services;
  const register = (id: string, run: (...args: unknown[]) => unknown) => registerCommand(services, id, run);

  register('ultraplan.planTask', async (initial?: unknown) => {
    await sessions.restored;
    const s = settings.readForBackend();
    if (!s) return;
    if (!checkTrustFor(s.backend) || !checkEmbeddedAgent(s, log)) return;
    const text = await vscode.window.showInputBox({
      title: 'Ultraplan: Plan a Task',
      prompt: `Describe the task; an agent plans it in plan mode on ${BACKENDS[s.backend].where({ agent: s.backend === 'embedded' ? embeddedAgentDescription(s) : undefined, serverUrl: s['server.url'] })}.`,
      placeHolder: 'e.g. Add rate limiting to the public API',
      value: typeof initial === 'string' ? initial : '',
      ignoreFocusOut: true,
      validateInput: promptHint,
    });
    if (text === undefined) return;
    if (isReviewRequest(text)) {
      await vscode.commands.executeCommand(REVIEW_CHANGES_COMMAND);
      return;
    }
    const prompt = promptToSend(text);
    if (!prompt) {
      void vscode.window.showWarningMessage('Ultraplan: the prompt is empty once the keyword is removed; describe the task.');
      return;
    }
    await launch(prompt, s);
  });

  register('ultraplan.planFromSelection', async () => {
    await sessions.restored;
    const editor = vscode.window.activeTextEditor;
    const selection = editor?.selection;
    const text = editor && selection && !selection.isEmpty ? editor.document.getText(selection) : '';
    if (!editor || text.trim().length === 0) {
      void vscode.window.showWarningMessage('Ultraplan: select the text to plan from first.');
      return;
    }
    const s = settings.readForBackend();
    if (!s || !checkTrustFor(s.backend) || !checkEmbeddedAgent(s, log)) return;
    const where = `${vscode.workspace.asRelativePath(editor.document.uri)}:${selection!.start.line + 1}-${selection!.end.line + 1}`;
    const prompt = promptToSend(text);
    if (!prompt) return;
    await launch(`${prompt}\n\n(From ${where}.)`, s);
  });

  // Internal (not in the palette): the status bar's click while a permission request waits.
  register(ANSWER_PERMISSIONS_COMMAND, (key?: unknown) => sessions.askOpenPermissions(key));

  register('ultraplan.showReview', async (key?: unknown) => {
    await sessions.restored;
    const controller = typeof key === 'string' ? sessions.get(key) : await pickSession(sessions, 'Show the review of…');
    if (controller) sessions.show(controller);
    else if (typeof key !== 'string' && sessions.all.length === 0) {
      const plan = 'Plan a Task…';
      void vscode.window
        .showInformationMessage('Ultraplan: no planning sessions yet.', plan)
        .then((c) => c && vscode.commands.executeCommand('ultraplan.planTask'));
    }
  });

  register('ultraplan.stopSession', async (key?: unknown) => {
    await sessions.restored;
    const controller = typeof key === 'string' ? sessions.get(key) : await pickSession(sessions, 'Stop which session?', (c) => !c.finished);
    if (!controller || controller.finished) return;
    await controller.stop();
    void vscode.window.showInformationMessage(`Ultraplan: stopped "${controller.title}".`);
  });

  register('ultraplan.teleport', async () => {
    await sessions.restored;
    const controller = await pickSession(sessions, 'Teleport the plan of…', (c) => c.canDecide);
    if (!controller) {
      void vscode.window.showInformationMessage('Ultraplan: no plan is waiting for a decision.');
      return;
    }
    // Through the panel, so the decision carries the binding of the plan the person sees there.
    sessions.show(controller).invoke('teleport');
  });

  register('ultraplan.refinePlan', async () => {
    await sessions.restored;
    await (await import('../chat/chatRequests')).refinePlan({ settings, log, launch });
  });

  register('ultraplan.openInBrowser', async (key?: unknown) => {
    await sessions.restored;
    const controller =
      typeof key === 'string'
        ? sessions.get(key)
        : await pickSession(sessions, 'Open which session in the browser?', (c) => c.identity.sessionLink !== undefined);
    const link = controller?.identity.sessionLink;
    if (!link) {
      void vscode.window.showInformationMessage('Ultraplan: no session with a browser page (Claude Code on the web sessions have one).');
      return;
    }
    await openSessionInBrowser(link, log);
  });
}

function checkTrustFor(backend: string): boolean {
  if (backend !== 'embedded' || vscode.workspace.isTrusted) return true;
  void vscode.window.showWarningMessage(
    'Ultraplan: the embedded backend runs an agent on this machine, which an untrusted workspace does not allow. Trust the workspace, or choose a server backend.',
  );
  return false;
}

/** The input box's hint: what the keyword does, and that `ultrareview` starts a review. */
export function promptHint(value: string): vscode.InputBoxValidationMessage | undefined {
  const hints = keywordHints(value);
  return hints.length > 0 ? { message: hints.join(' · '), severity: vscode.InputBoxValidationSeverity.Info } : undefined;
}

/** The prompt as sent: the keyword replaced (docs/protocol.md section 7), or the text as typed. */
export const promptToSend = promptFromText;

async function pickSession(
  sessions: FollowedSessions,
  title: string,
  filter: (c: FollowedSession) => boolean = () => true,
): Promise<FollowedSession | undefined> {
  const candidates = sessions.ordered(filter);
  if (candidates.length <= 1) return candidates[0];
  const picked = await vscode.window.showQuickPick(
    candidates.map((c) => ({ label: c.title, description: `${PHASE_LABELS.words[c.phase]} · ${c.backend.label}`, c })),
    { title: `Ultraplan: ${title}` },
  );
  return picked?.c;
}

// Activation: wires settings, backends, followed sessions, the status bar and the review panel to
// the editor's commands. Thin on purpose: the logic lives in core/, sessions/ and the classes here.
//
// Activation: our commands, a restored review panel (onWebviewPanel:ultraplan.review), and
// onStartupFinished. Issue 4 asks for the first two only, and the panel's serializer does re-attach
// sessions; but in the browser (code-server) the workbench cannot always save its editors on
// shutdown, so after a reload the panel may not come back, and a session in flight would be
// orphaned with nothing on screen. onStartupFinished runs after the window is up and costs little
// here: with nothing persisted, activate only registers commands (no host, no network).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { keywordHints, promptFromText } from './promptPath';
import type { InvokableAction } from '../core/panelMessages';
import { acpAgentSource, checkEmbeddedAgent, embeddedAgentDescription } from './acpAgentSource';
import { applyEmbeddedChoice, embeddedPickItems, type EmbeddedPickItem } from './agentChoiceCommand';
import { Backends, scriptedAgentSource, serverTokenKey } from './backends';
import { openSessionInBrowser, pickClaudeWebEnvironment, prepareClaudeWebLaunch } from './claudeWebUi';
import { refinePlan, registerChatParticipant } from './promptPathUi';
import type { UltraplanSettings } from './settingsSchema';
import { FollowedSessions } from './followedSessions';
import { ReviewPanel } from './reviewPanel';
import { SettingsReader } from './settings';
import type { SessionController } from './sessionController';
import { plansFolder } from './teleport';

/** For the startup bootstrap (bootstrap.ts): a chat request it received before this module loaded. */
export { forwardChatRequest } from './promptPathUi';

let active: { sessions: FollowedSessions; backends: Backends } | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Ultraplan', { log: true });
  const settings = new SettingsReader(log);
  const backends = new Backends({ context, log, embeddedAgent: acpAgentSource({ log, demo: scriptedAgentSource(context.extensionUri) }) });
  const sessions = new FollowedSessions({ context, log, settings, backends });
  active = { sessions, backends };
  context.subscriptions.push(log, settings);
  log.info(`Ultraplan ${String((context.extension.packageJSON as { version?: unknown }).version ?? '')} activated`);

  const register = (id: string, run: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          await run(...args);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          log.error(`${id} failed: ${message}`);
          void vscode.window.showErrorMessage(`Ultraplan: ${message}`);
        }
      }),
    );

  /** Every launch path (palette, selection, chat, refine): the backend's own checks, then the session. */
  const launch = async (prompt: string, s: UltraplanSettings): Promise<SessionController | undefined> => {
    if (s.backend === 'claude-web') {
      const retry = () => {
        const again = settings.readForBackend();
        return again ? launch(prompt, again) : undefined;
      };
      if (!(await prepareClaudeWebLaunch({ backends, settings: s, log, retry }))) return undefined;
    }
    return sessions.start(prompt, s);
  };

  register('ultraplan.planTask', async (initial?: unknown) => {
    await sessions.restored;
    const s = settings.readForBackend();
    if (!s) return;
    if (!checkTrustFor(s.backend) || !checkEmbeddedAgent(s, log)) return;
    const text = await vscode.window.showInputBox({
      title: 'Ultraplan: Plan a Task',
      prompt: `Describe the task; an agent plans it in plan mode on ${s.backend === 'embedded' ? `the embedded backend (${embeddedAgentDescription(s)})` : s.backend === 'claude-web' ? 'Claude Code on the web, with your Claude Code login' : s['server.url']}.`,
      placeHolder: 'e.g. Add rate limiting to the public API',
      value: typeof initial === 'string' ? initial : '',
      ignoreFocusOut: true,
      validateInput: promptHint,
    });
    if (text === undefined) return;
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

  register('ultraplan.showReview', async (key?: unknown) => {
    await sessions.restored;
    const controller = typeof key === 'string' ? sessions.get(key) : await pickSession(sessions, 'Show the review of…');
    if (controller) sessions.show(controller);
    else if (typeof key !== 'string' && sessions.all.length === 0) {
      const plan = 'Plan a Task…';
      void vscode.window.showInformationMessage('Ultraplan: no planning sessions yet.', plan).then((c) => c && vscode.commands.executeCommand('ultraplan.planTask'));
    }
  });

  register('ultraplan.stopSession', async () => {
    await sessions.restored;
    const controller = await pickSession(sessions, 'Stop which session?', (c) => !c.finished);
    if (!controller) return;
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

  const invoke = (action: InvokableAction) => () => {
    const panel = ReviewPanel.current;
    if (!panel) {
      void vscode.window.showWarningMessage('Ultraplan: open the plan review first.');
      return;
    }
    panel.invoke(action);
  };
  register('ultraplan.review.approve', invoke('approve'));
  register('ultraplan.review.reject', invoke('reject'));
  register('ultraplan.review.teleport', invoke('teleport'));
  register('ultraplan.approveEditedPlan', () => sessions.approveEdited());

  register('ultraplan.chooseBackend', async () => {
    const current = settings.read();
    type Item = (vscode.QuickPickItem & { backend: 'server' }) | (vscode.QuickPickItem & { backend: 'claude-web' });
    const items: Array<Item | EmbeddedPickItem> = [
      // Embedded: each known agent (installed or not), a custom command, automatic, the demo.
      ...embeddedPickItems(current),
      { label: 'Server', description: current['server.url'] || 'set its URL next', detail: 'A self-hosted ultraplan-server; the token is kept in secret storage.', backend: 'server' },
      {
        label: 'Claude Code on the web',
        description: current['claudeWeb.environmentId'] || 'choose the environment next',
        detail: 'Your Claude Code login plans in a cloud session on this GitHub repository. Depends on a service whose API is not public.',
        backend: 'claude-web',
      },
    ];
    for (const i of items) if (i.backend !== 'embedded' && i.backend === current.backend) i.label = `$(check) ${i.label}`;
    const picked = await vscode.window.showQuickPick(items, { title: 'Ultraplan: Choose Backend' });
    if (!picked) return;
    const config = vscode.workspace.getConfiguration('ultraplan');
    if (picked.backend === 'server') {
      const url = await vscode.window.showInputBox({
        title: 'Ultraplan server URL',
        value: current['server.url'] || 'http://127.0.0.1:8787',
        validateInput: (v) => (/^https?:\/\/[^\s]+$/.test(v.trim()) ? undefined : 'An http:// or https:// URL'),
        ignoreFocusOut: true,
      });
      if (url === undefined) return;
      await config.update('server.url', url.trim(), vscode.ConfigurationTarget.Global);
      await config.update('backend', 'server', vscode.ConfigurationTarget.Global);
      log.info(`backend: server ${url.trim()}`);
      if (!(await backends.hasServerToken(url.trim()))) await vscode.commands.executeCommand('ultraplan.setServerToken');
      return;
    }
    if (picked.backend === 'claude-web') {
      const retry = () => vscode.commands.executeCommand('ultraplan.chooseBackend');
      const environmentId = await pickClaudeWebEnvironment({ settings: current, log, retry });
      if (environmentId === undefined) return;
      await config.update('claudeWeb.environmentId', environmentId, vscode.ConfigurationTarget.Global);
      await config.update('backend', 'claude-web', vscode.ConfigurationTarget.Global);
      log.info(`backend: claude-web, environment ${environmentId || 'automatic'}`);
      return;
    }
    await applyEmbeddedChoice(picked, current, log);
  });

  register('ultraplan.setServerToken', async () => {
    const s = settings.read();
    if (!s['server.url']) {
      const open = 'Open Settings';
      void vscode.window.showWarningMessage('Ultraplan: set ultraplan.server.url first; the token belongs to that server.', open).then((c) => c && vscode.commands.executeCommand('workbench.action.openSettings', 'ultraplan.server.url'));
      return;
    }
    const origin = new URL(s['server.url']).origin;
    const token = await vscode.window.showInputBox({
      title: `Ultraplan: token for ${origin}`,
      prompt: 'Kept in VS Code secret storage; never in settings or logs. Leave empty to remove it.',
      password: true,
      ignoreFocusOut: true,
    });
    if (token === undefined) return;
    const key = serverTokenKey(s['server.url']);
    if (token.trim() === '') {
      await context.secrets.delete(key);
      log.info(`server token removed for ${origin}`);
      void vscode.window.showInformationMessage(`Ultraplan: token for ${origin} removed.`);
      return;
    }
    await context.secrets.store(key, token.trim());
    log.info(`server token stored for ${origin}`);
    void vscode.window.showInformationMessage(`Ultraplan: token for ${origin} saved.`);
  });

  register('ultraplan.refinePlan', async () => {
    await sessions.restored;
    await refinePlan({ settings, log, launch });
  });

  register('ultraplan.openInBrowser', async (key?: unknown) => {
    await sessions.restored;
    const controller = typeof key === 'string' ? sessions.get(key) : await pickSession(sessions, 'Open which session in the browser?', (c) => c.sessionLink !== undefined);
    const link = controller?.sessionLink;
    if (!link) {
      void vscode.window.showInformationMessage('Ultraplan: no session with a browser page (Claude Code on the web sessions have one).');
      return;
    }
    await openSessionInBrowser(link, log);
  });

  registerChatParticipant(context, { settings, log, launch });

  register('ultraplan.showLog', () => log.show());

  register('ultraplan.openSavedPlans', async () => {
    const folder = plansFolder(settings.read().plansDirectory);
    if (!folder) {
      void vscode.window.showWarningMessage('Ultraplan: open a folder first; saved plans live inside the workspace.');
      return;
    }
    let entries: [string, vscode.FileType][] = [];
    try {
      entries = await vscode.workspace.fs.readDirectory(folder);
    } catch {
      entries = [];
    }
    // Newest first by modification time (same-day names differ only by their -2, -3 suffix).
    const files = entries.filter(([name, type]) => type === vscode.FileType.File && name.endsWith('.md')).map(([name]) => name);
    const stamped = await Promise.all(
      files.map(async (name) => ({ name, mtime: (await vscode.workspace.fs.stat(vscode.Uri.joinPath(folder, name)).then((st) => st.mtime, () => 0)) })),
    );
    const plans = stamped.sort((a, b) => b.mtime - a.mtime || b.name.localeCompare(a.name)).map((p) => p.name);
    if (plans.length === 0) {
      void vscode.window.showInformationMessage(`Ultraplan: no saved plans in ${vscode.workspace.asRelativePath(folder)} yet (teleport a plan to save one).`);
      return;
    }
    const picked = await vscode.window.showQuickPick(plans.map((name) => ({ label: name, description: path.basename(folder.fsPath) })), { title: 'Ultraplan: saved plans' });
    if (picked) await vscode.window.showTextDocument(vscode.Uri.joinPath(folder, picked.label), { preview: false });
  });

  // Sessions that were waiting for trust re-attach once it is granted.
  context.subscriptions.push(
    vscode.workspace.onDidGrantWorkspaceTrust(() => log.info('workspace trusted: embedded agents and tasks are allowed now')),
  );
}

function checkTrustFor(backend: string): boolean {
  if (backend !== 'embedded' || vscode.workspace.isTrusted) return true;
  void vscode.window.showWarningMessage(
    'Ultraplan: the embedded backend runs an agent on this machine, which an untrusted workspace does not allow. Trust the workspace, or choose a server backend.',
  );
  return false;
}

/** The input box's hint: what the keyword does, and that `ultrareview` launches nothing. */
export function promptHint(value: string): vscode.InputBoxValidationMessage | undefined {
  const hints = keywordHints(value);
  return hints.length > 0 ? { message: hints.join(' · '), severity: vscode.InputBoxValidationSeverity.Info } : undefined;
}

/** The prompt as sent: the keyword replaced (PROTOCOL.md section 7), or the text as typed. */
export const promptToSend = promptFromText;

async function pickSession(
  sessions: FollowedSessions,
  title: string,
  filter: (c: SessionController) => boolean = () => true,
): Promise<SessionController | undefined> {
  const candidates = sessions.ordered(filter);
  if (candidates.length <= 1) return candidates[0];
  const picked = await vscode.window.showQuickPick(
    candidates.map((c) => ({ label: c.title, description: `${c.phase.replace('_', ' ')} · ${c.backend.label}`, c })),
    { title: `Ultraplan: ${title}` },
  );
  return picked?.c;
}

export async function deactivate(): Promise<void> {
  const a = active;
  active = undefined;
  if (!a) return;
  // Stop pollers first (they use the backends), then close the backends and the host's agents.
  await a.sessions.dispose();
  await a.backends.dispose();
}

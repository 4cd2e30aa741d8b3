// Claude Code on the web in the editor: the checks before a launch (each failure shown with its
// cause, its fix and the buttons that help; warnings about unpushed work as a question), the
// environment picker of "Choose Backend…", and opening a session in the browser.
import * as vscode from 'vscode';
import { ClaudeWebError, claudeWebFailureOf, describeEnvironment, type Environment } from '../../client/claudeWeb';
import type { listEnvironments } from '../../client/claudeWeb/backend';
import type { SessionBackend } from '../../core/sessionBackend';
import type { Backends } from '../backends/backends';
import { describeExecutionReport, findExecutionReport } from './claudeWebOutcome';
import { claudeWebActions, launchWarning, RETRY, type ClaudeWebAction } from './claudeWebFailure';
import type { UltraplanSettings } from '../settings/settingsSchema';
import { errorMessage } from '../../core/errors';

export const LAUNCH_ANYWAY = 'Launch Anyway';

export interface FailureOptions {
  log: vscode.LogOutputChannel;
  /** Runs the failed step again; absent: no Retry button. */
  retry?: () => unknown;
  /** Says what failed before the failure's own message, e.g. "Your decision was not sent:". */
  prefix?: string;
}

/**
 * Shows a ClaudeWebError as written (cause, then fix) with its buttons, and does what the chosen
 * one says. After an action that sends the person elsewhere (a terminal, a web page), Retry is
 * offered again so they can come back to it.
 */
export async function showClaudeWebFailure(failure: ClaudeWebError, options: FailureOptions): Promise<void> {
  const { log } = options;
  log.warn(`claude-web: ${failure.reason}: ${failure.message}`);
  const actions = claudeWebActions(failure, options.retry !== undefined);
  const text = options.prefix ? `${options.prefix} ${failure.message}` : failure.message;
  const picked = await vscode.window.showErrorMessage(`Ultraplan: ${text}`, ...actions.map((a) => a.label));
  const action = actions.find((a) => a.label === picked);
  if (!action) return;
  await runAction(action, failure, options);
}

async function runAction(action: ClaudeWebAction, failure: ClaudeWebError, options: FailureOptions): Promise<void> {
  const { log, retry } = options;
  log.info(`claude-web: ${failure.reason}: the person chose "${action.label}"`);
  switch (action.kind) {
    case 'retry':
      await retry?.();
      return;
    case 'open_terminal': {
      const terminal = vscode.window.createTerminal({ name: 'Claude Code' });
      terminal.show();
      // Typed, not run: the person starts it (it may ask them to log in).
      terminal.sendText('claude', false);
      break;
    }
    case 'open_url':
      if (action.url) await vscode.env.openExternal(vscode.Uri.parse(action.url, true));
      break;
    case 'choose_backend':
      await vscode.commands.executeCommand('ultraplan.chooseBackend');
      return;
    case 'open_folder':
      await vscode.commands.executeCommand('vscode.openFolder');
      return;
    case 'show_log':
      log.show();
      return;
  }
  if (!retry) return;
  const again = await vscode.window.showInformationMessage(
    action.kind === 'open_terminal'
      ? 'Ultraplan: run `claude` in the terminal (log in with your Claude.ai account if it asks), then choose Retry.'
      : 'Ultraplan: when that is done, choose Retry.',
    RETRY,
  );
  if (again === RETRY) await retry();
}

/**
 * Shows any error from a Claude Code on the web backend: a ClaudeWebError (or one in its cause
 * chain) with its buttons, anything else as a plain message. True when it was a ClaudeWebError.
 */
export function showBackendFailure(err: unknown, options: FailureOptions): boolean {
  const failure = claudeWebFailureOf(err);
  if (!failure) return false;
  void showClaudeWebFailure(failure, options);
  return true;
}

/**
 * Before a launch on Claude Code on the web: every eligibility check, then the warnings as a
 * question. True when the session may be created (the checked backend is kept for it).
 */
export async function prepareClaudeWebLaunch(options: {
  backends: Backends;
  settings: UltraplanSettings;
  log: vscode.LogOutputChannel;
  /** Runs the whole launch again (after the person fixed the cause). */
  retry: () => unknown;
}): Promise<boolean> {
  const { backends, settings, log } = options;
  if (!vscode.workspace.isTrusted) {
    // The checks run git in the workspace, and a repository's own config can make git run programs.
    void vscode.window.showWarningMessage(
      'Ultraplan: Claude Code on the web reads this repository with git, which an untrusted workspace does not allow. Trust the workspace first.',
    );
    return false;
  }
  let warnings: string[];
  try {
    const prepared = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Ultraplan: checking Claude Code on the web…', cancellable: true },
      async (_progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return backends.prepareClaudeWeb(settings, abort.signal);
      },
    );
    warnings = prepared.warnings;
  } catch (err) {
    if (!showBackendFailure(err, { log, retry: options.retry })) {
      const message = errorMessage(err);
      log.error(`claude-web: launch check failed: ${message}`);
      void vscode.window.showErrorMessage(`Ultraplan: ${message}`);
    }
    return false;
  }
  const warning = launchWarning(warnings);
  if (!warning) return true;
  log.warn(`claude-web: before launch: ${warnings.join(' | ')}`);
  const choice = await vscode.window.showWarningMessage(
    `Ultraplan: ${warning.message}`,
    { modal: true, detail: warning.detail },
    LAUNCH_ANYWAY,
  );
  if (choice !== LAUNCH_ANYWAY) {
    log.info('claude-web: launch cancelled at the unpushed-work warning');
    return false;
  }
  return true;
}

/**
 * The environment picker of "Choose Backend…": the account's environments that can host a plan,
 * with "Automatic" first (the rules of docs/protocol.md section 9). Resolves the id to store ('' for
 * automatic), or undefined when cancelled or when the list could not be read (already shown).
 */
export async function pickClaudeWebEnvironment(options: {
  settings: UltraplanSettings;
  log: vscode.LogOutputChannel;
  retry: () => unknown;
}): Promise<string | undefined> {
  const { settings, log } = options;
  let listed: Awaited<ReturnType<typeof listEnvironments>>;
  try {
    listed = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Ultraplan: reading your Claude Code environments…' },
      async () =>
        // The backend is a chunk of its own, loaded the first time it is used.
        (await import('../../client/claudeWeb/backend')).listEnvironments({
          baseUrl: settings['claudeWeb.baseUrl'],
          ...(settings['claudeWeb.environmentId'] ? { environmentId: settings['claudeWeb.environmentId'] } : {}),
          log: (line) => log.debug(`http: ${line}`),
        }),
    );
  } catch (err) {
    if (!showBackendFailure(err, { log, retry: options.retry })) {
      void vscode.window.showErrorMessage(`Ultraplan: reading the environments failed: ${errorMessage(err)}`);
    }
    return undefined;
  }
  const usable = listed.environments.filter((e) => e.kind !== 'bridge');
  if (usable.length === 0) {
    const failure = new ClaudeWebError(
      'no_environment',
      'You have no Claude Code cloud environment, so Claude Code on the web cannot host a plan. Set one up at https://claude.ai/code, then choose Retry.',
      { url: 'https://claude.ai/code' },
    );
    void showClaudeWebFailure(failure, { log, retry: options.retry });
    return undefined;
  }
  type Item = vscode.QuickPickItem & { id: string };
  const current = settings['claudeWeb.environmentId'];
  const automatic = listed.chosen ? `now: ${describeEnvironment(listed.chosen)}` : 'none usable';
  const items: Item[] = [
    {
      label: 'Automatic',
      description: automatic,
      detail: 'Your first Anthropic cloud environment, as Claude Code chooses (no other kind is used unless you pick it).',
      id: '',
    },
    ...usable.map((e: Environment) => ({
      label: e.name?.trim() || e.environment_id,
      description: `${e.kind} · ${e.environment_id}`,
      id: e.environment_id,
    })),
  ];
  for (const i of items) if (i.id === current) i.label = `$(check) ${i.label}`;
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Ultraplan: Claude Code on the web environment',
    placeHolder: 'Where the remote session runs',
  });
  return picked?.id;
}

/** Opens a session's page on claude.ai (a link from the backend). */
export async function openSessionInBrowser(link: string, log: vscode.LogOutputChannel): Promise<void> {
  log.info(`opening ${link} in the browser`);
  await vscode.env.openExternal(vscode.Uri.parse(link, true));
}

/**
 * What an approved session reports at its end (pull request, branch), from its own words and the
 * session's outcomes; undefined when it reported neither. Reading the session is best effort: the
 * outcome stands without it.
 */
export async function executionReport(
  backend: SessionBackend,
  sessionId: string,
  texts: ReadonlyArray<string | null | undefined>,
  log: vscode.LogOutputChannel,
): Promise<{ text: string; pullRequest?: string } | undefined> {
  let sessionContext: unknown;
  if (backend.kind === 'claude-web') {
    try {
      sessionContext = (await backend.getSession(sessionId)).session_context;
    } catch (err) {
      log.warn(`reading session ${sessionId} for its outcome failed: ${errorMessage(err)}`);
    }
  }
  const report = findExecutionReport(texts, sessionContext);
  const text = describeExecutionReport(report);
  if (!text) return undefined;
  log.info(`session ${sessionId} reports: ${text}`);
  const pullRequest = report.pullRequests[0];
  return pullRequest ? { text, pullRequest } : { text };
}

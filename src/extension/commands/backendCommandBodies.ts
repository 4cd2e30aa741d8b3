// The bodies of the commands that choose where sessions run: Choose Backend (embedded agents, a server, Claude Code on
// the web, Jules), the server's token and the Jules API key. A pick is written where the value that applies lives, so a
// workspace setting cannot silently win over it.
import * as vscode from 'vscode';
import { applyEmbeddedChoice, embeddedPickItems, type EmbeddedPickItem } from '../agentSetup/agentChoiceCommand';
import { cloudPickLabel } from '../agentSetup/agentChoice';
import { serverTokenKey } from '../backends/backends';
import { BACKENDS } from '../../core/backendKinds';
import { expiredTokenProblem, tokenExpiresAt } from '../../core/serverToken';
import { pickClaudeWebEnvironment } from '../claudeWeb/claudeWebUi';
import { writeSetting } from '../settings/settings';
import type { ExtensionServices } from './services';

/** Choose Backend: embedded agents, a server, Claude Code on the web, Jules. */
export async function chooseBackend(services: ExtensionServices): Promise<void> {
  const { context, settings, log, backends } = services;
  const current = settings.read();
  type Item =
    | (vscode.QuickPickItem & { backend: 'server' })
    | (vscode.QuickPickItem & { backend: 'claude-web' })
    | (vscode.QuickPickItem & { backend: 'jules' });
  const items: Array<Item | EmbeddedPickItem> = [
    // Embedded: each known agent (installed or not), a custom command, automatic, the demo.
    ...embeddedPickItems(current),
    {
      label: BACKENDS.server.label,
      description: current['server.url'] || 'set its URL next',
      detail: BACKENDS.server.pickDetail,
      backend: 'server',
    },
    {
      label: cloudPickLabel(BACKENDS['claude-web'].label),
      description: current['claudeWeb.environmentId'] || 'choose the environment next',
      detail: BACKENDS['claude-web'].pickDetail,
      backend: 'claude-web',
    },
    {
      label: cloudPickLabel(BACKENDS.jules.label),
      detail: BACKENDS.jules.pickDetail,
      backend: 'jules',
    },
  ];
  for (const i of items) if (i.backend !== 'embedded' && i.backend === current.backend) i.label = `$(check) ${i.label}`;
  const picked = await vscode.window.showQuickPick(items, { title: 'Ultraplan: Choose Backend' });
  if (!picked) return;
  if (picked.backend === 'server') {
    const url = await vscode.window.showInputBox({
      title: 'Ultraplan server URL',
      value: current['server.url'] || 'http://127.0.0.1:8787',
      validateInput: (v) => (httpUrl(v) ? undefined : 'An http:// or https:// URL'),
      ignoreFocusOut: true,
    });
    if (url === undefined) return;
    await writeSetting('server.url', url.trim());
    await writeSetting('backend', 'server');
    log.info(`backend: server ${url.trim()}`);
    if (!(await backends.hasServerToken(url.trim()))) await vscode.commands.executeCommand('ultraplan.setServerToken');
    return;
  }
  if (picked.backend === 'claude-web') {
    const retry = () => vscode.commands.executeCommand('ultraplan.chooseBackend');
    const environmentId = await pickClaudeWebEnvironment({ settings: current, log, retry });
    if (environmentId === undefined) return;
    await writeSetting('claudeWeb.environmentId', environmentId);
    await writeSetting('backend', 'claude-web');
    log.info(`backend: claude-web, environment ${environmentId || 'automatic'}`);
    return;
  }
  if (picked.backend === 'jules') {
    await writeSetting('backend', 'jules');
    return (await import('../jules/julesKey')).askForKeyIfNone(context.secrets, log);
  }
  await applyEmbeddedChoice(picked, current, log);
}

// The server is the one named (Attach passes its link's server), else ultraplan.server.url, else
// asked for: a token is kept per origin and setting one never changes the backend in use.
export async function setServerToken(services: ExtensionServices, named?: unknown): Promise<boolean> {
  const { context, settings, log } = services;
  const serverUrl = httpUrl(named) ?? httpUrl(settings.read()['server.url']) ?? (await askServerUrl());
  if (serverUrl === undefined) return false;
  const origin = new URL(serverUrl).origin;
  const token = await vscode.window.showInputBox({
    title: `Ultraplan: token for ${origin}`,
    prompt: 'Kept in VS Code secret storage; never in settings or logs. Leave empty to remove it.',
    password: true,
    ignoreFocusOut: true,
  });
  if (token === undefined) return false;
  const key = serverTokenKey(serverUrl);
  if (token.trim() === '') {
    await context.secrets.delete(key);
    log.info(`server token removed for ${origin}`);
    void vscode.window.showInformationMessage(`Ultraplan: token for ${origin} removed.`);
    return false;
  }
  const problem = expiredTokenProblem(token, origin);
  if (problem !== null) {
    // Kept out of storage: every request would only be refused with it.
    void vscode.window.showErrorMessage(`Ultraplan: that token has already expired; nothing was saved. ${problem}`);
    return false;
  }
  await context.secrets.store(key, token.trim());
  log.info(`server token stored for ${origin}`);
  const expiresAt = tokenExpiresAt(token);
  void vscode.window.showInformationMessage(
    `Ultraplan: token for ${origin} saved${expiresAt ? `; it expires at ${expiresAt.toLocaleString()}, then run this command again` : ''}.`,
  );
  return true;
}

const HTTP_URL = /^https?:\/\/[^\s]+$/;

/** `value` when it is an http(s) URL (a command's argument may be anything: a URI from a menu, nothing). */
function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || !HTTP_URL.test(value.trim())) return undefined;
  try {
    return new URL(value.trim()).href;
  } catch {
    return undefined;
  }
}

async function askServerUrl(): Promise<string | undefined> {
  const url = await vscode.window.showInputBox({
    title: 'Ultraplan: which server is the token for?',
    prompt: 'The server URL, e.g. http://127.0.0.1:8787. Setting its token does not change the backend you use.',
    validateInput: (v) => (httpUrl(v) ? undefined : 'An http:// or https:// URL'),
    ignoreFocusOut: true,
  });
  return url === undefined ? undefined : httpUrl(url);
}

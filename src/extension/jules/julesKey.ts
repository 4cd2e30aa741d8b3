// The Jules API key: kept in VS Code's secret storage under one key, set and removed by
// "Ultraplan: Set Jules API Key…", read afresh for each request. Never in settings or logs.
import * as vscode from 'vscode';

export const JULES_KEY_SECRET = 'ultraplan.jules.apiKey';

/** Google API keys: letters, digits, '-' and '_'; anything with spaces or other characters is a paste gone wrong. */
const KEY_SHAPE = /^[A-Za-z0-9_-]{20,200}$/;

export function julesKeyReader(secrets: vscode.SecretStorage): () => Promise<string | undefined> {
  return async () => (await secrets.get(JULES_KEY_SECRET)) || undefined;
}

/** Asks for the key and stores it (empty removes it); true when a key is now set. */
export async function setJulesApiKey(secrets: vscode.SecretStorage, log: vscode.LogOutputChannel): Promise<boolean> {
  const key = await vscode.window.showInputBox({
    title: 'Ultraplan: Jules API key',
    prompt:
      'Create one at jules.google.com/settings#api. Kept in VS Code secret storage; never in settings or logs. Leave empty to remove it.',
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) =>
      v.trim() === '' || KEY_SHAPE.test(v.trim()) ? undefined : 'A Jules API key is letters, digits, "-" and "_", with no spaces.',
  });
  if (key === undefined) return false;
  if (key.trim() === '') {
    await secrets.delete(JULES_KEY_SECRET);
    log.info('Jules API key removed');
    void vscode.window.showInformationMessage('Ultraplan: Jules API key removed.');
    return false;
  }
  await secrets.store(JULES_KEY_SECRET, key.trim());
  log.info('Jules API key stored');
  void vscode.window.showInformationMessage('Ultraplan: Jules API key saved.');
  return true;
}

/** After Choose Backend picked Jules: the key is asked for when none is set. */
export async function askForKeyIfNone(secrets: vscode.SecretStorage, log: vscode.LogOutputChannel): Promise<void> {
  log.info('backend: jules');
  if (!(await secrets.get(JULES_KEY_SECRET))) await setJulesApiKey(secrets, log);
}

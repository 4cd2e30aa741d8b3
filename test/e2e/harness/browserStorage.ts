// What VS Code in the browser has written to its own storage. code-server keeps an extension's
// workspace state in the page's IndexedDB (one `vscode-web-state-db-<workspace>` database, the
// `ItemTable` store, one JSON string per extension), written behind a short flush delay: a test
// that reloads right after a change waits for the change to be stored, as a person's pause would.
import type { Page } from 'playwright-core';
import { waitFor } from '../../support/wait';

/** The workspace state of `extensionId` as the workbench stored it (every workspace database read). */
export async function storedWorkspaceState(page: Page, extensionId: string): Promise<Record<string, unknown>[]> {
  // No named functions inside: the test runner's transform would name them with a helper the page lacks.
  const values = await page.evaluate(async (key) => {
    const names = (await indexedDB.databases())
      .map((db) => db.name ?? '')
      .filter((name) => name.startsWith('vscode-web-state-db-') && name !== 'vscode-web-state-db-global');
    return Promise.all(
      names.map(
        (name) =>
          new Promise<unknown>((resolve, reject) => {
            const open = indexedDB.open(name);
            open.addEventListener('error', () => reject(open.error ?? new Error(`cannot open ${name}`)));
            open.addEventListener('success', () => {
              const db = open.result;
              if (!db.objectStoreNames.contains('ItemTable')) {
                db.close();
                resolve(undefined);
                return;
              }
              const get = db.transaction('ItemTable', 'readonly').objectStore('ItemTable').get(key);
              get.addEventListener('error', () => reject(get.error ?? new Error(`cannot read ${key} in ${name}`)));
              get.addEventListener('success', () => {
                db.close();
                const value: unknown = get.result;
                resolve(value instanceof Uint8Array ? new TextDecoder().decode(value) : value);
              });
            });
          }),
      ),
    );
  }, extensionId);
  return values.filter((value): value is string => typeof value === 'string').map((text) => JSON.parse(text) as Record<string, unknown>);
}

/** Waits until a workspace database holds a state of `extensionId` whose `key` passes `until`. */
export async function waitForStoredWorkspaceState(
  page: Page,
  extensionId: string,
  key: string,
  until: (value: unknown) => boolean,
  message: string,
): Promise<void> {
  await waitFor(async () => (await storedWorkspaceState(page, extensionId)).map((state) => state[key]), {
    until: (values) => values.some(until),
    timeoutMs: 30_000,
    message,
  });
}

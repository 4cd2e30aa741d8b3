// Every command the extension runs exists on both VS Code versions we support (1.100, the engine
// floor, and 1.139): our own are contributed in package.json (or registered by the extension), and the built-in ones are in the list
// below, each with where VS Code defines it (checked in both code-server builds' workbench and
// extension host bundles). A new built-in id cannot slip in: it fails here until it is listed.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/** Built-in command ids the extension runs, present in VS Code 1.100.3 and 1.139.1. */
const BUILT_IN: Record<string, string> = {
  // src/vs/platform/contextkey/browser/contextKeyService.ts: CommandsRegistry.registerCommand('setContext')
  setContext: 'context keys',
  // src/vs/workbench/api/common/extHostApiCommands.ts and browser/parts/editor/editorCommands.ts (API_OPEN_DIFF_EDITOR_COMMAND_ID)
  'vscode.diff': 'diff editor',
  // src/vs/workbench/api/common/extHostApiCommands.ts: 'vscode.changes' → '_workbench.changes' (the multi-file diff editor)
  'vscode.changes': 'multi-file diff editor',
  // src/vs/workbench/browser/parts/editor/editorCommands.ts (API_OPEN_EDITOR_COMMAND_ID)
  'vscode.open': 'open a resource',
  // src/vs/workbench/browser/actions/workspaceCommands.ts (OpenFolderAPICommand)
  'vscode.openFolder': 'open a folder',
  // src/vs/workbench/contrib/chat/browser/actions/chatActions.ts (CHAT_OPEN_ACTION_ID)
  'workbench.action.chat.open': 'chat view',
  // src/vs/workbench/api/browser/mainThreadComments.ts registerView(): the Comments view's focusCommand.
  // Registered only once a comment thread has been shown in the window, so it is run only after
  // getCommands() lists it (ultrareview/reviewController.ts showFindings).
  'workbench.action.focusCommentsPanel': 'Comments panel (registered lazily)',
  // src/vs/workbench/contrib/preferences/browser/preferences.contribution.ts
  'workbench.action.openSettings': 'Settings editor',
  // src/vs/workbench/contrib/welcomeGettingStarted/browser/gettingStarted.contribution.ts
  'workbench.action.openWalkthrough': 'walkthroughs',
  // src/vs/workbench/browser/parts/editor/editorCommands.ts (REVERT_AND_CLOSE_ACTIVE_EDITOR_COMMAND_ID)
  'workbench.action.revertAndCloseActiveEditor': 'revert and close',
};

/** Variables that forward an id given to them, not name one (the bootstrap's stand-ins). */
const FORWARDED = new Set(['src/extension/bootstrap.ts:id']);

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sources(rel);
    return entry.name.endsWith('.ts') ? [rel] : [];
  });
}

const files = sources('src/extension').map((file) => ({ file, text: readFileSync(path.join(ROOT, file), 'utf8') }));
/** Every `const NAME = '…'` of the extension's modules: the ids named by a constant. */
const constants = new Map<string, string>();
for (const { text } of files) for (const m of text.matchAll(/\bconst ([A-Z][A-Z0-9_]*) = '([^']+)'/g)) constants.set(m[1]!, m[2]!);

/** Each command run or set on an item: `executeCommand('id'|NAME…)` and `command: 'id'|NAME`. */
function usedCommands(): Array<{ where: string; id: string | undefined; name: string }> {
  const used: Array<{ where: string; id: string | undefined; name: string }> = [];
  for (const { file, text } of files) {
    const patterns = [/executeCommand(?:<[^>]*>)?\(\s*('([^']+)'|[A-Za-z_][\w]*)/g, /\bcommand: ('([^']+)'|[A-Z][A-Z0-9_]*)\b/g];
    for (const pattern of patterns)
      for (const m of text.matchAll(pattern)) {
        const name = m[1]!;
        const where = `${file}:${text.slice(0, m.index).split('\n').length}`;
        if (FORWARDED.has(`${file}:${name}`)) continue;
        used.push({ where, name, id: m[2] ?? constants.get(name) });
      }
  }
  return used;
}

const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  contributes: { commands: Array<{ command: string }> };
};
const contributed = new Set(manifest.contributes.commands.map((c) => c.command));
/** Ids the extension registers (vscode's registerCommand, our registerCommand and register wrappers). */
const registered = new Set(
  files.flatMap(({ text }) =>
    [...text.matchAll(/\bregister(?:Command)?\((?:\s*services,)?\s*('([^']+)'|[A-Z][A-Z0-9_]*)/g)].map((m) => m[2] ?? constants.get(m[1]!)),
  ),
);

describe('the commands the extension runs exist on VS Code 1.100 and 1.139', () => {
  const used = usedCommands();

  it('finds the commands it checks (the scan itself works)', () => {
    assert.ok(used.length >= 20, `only ${used.length} found`);
    assert.ok(used.some((u) => u.id === 'setContext'));
    assert.ok(used.some((u) => u.id?.startsWith('ultraplan.')));
  });

  it('names every command by a literal or a constant it can read', () => {
    assert.deepEqual(
      used.filter((u) => u.id === undefined).map((u) => `${u.where}: ${u.name}`),
      [],
    );
  });

  it('runs only ids package.json contributes or it registers, or built-in ids listed with where VS Code defines them', () => {
    const own = (id: string) => id.startsWith('ultraplan.') && (contributed.has(id) || registered.has(id));
    const unknown = used.filter((u) => u.id !== undefined && !own(u.id) && !(u.id in BUILT_IN));
    assert.deepEqual(
      unknown.map((u) => `${u.where}: ${u.id}`),
      [],
      'contribute it in package.json, or list the built-in id (checked on 1.100 and 1.139) in BUILT_IN',
    );
  });

  it('lists no built-in id the extension no longer runs', () => {
    const ids = new Set(used.map((u) => u.id));
    assert.deepEqual(
      Object.keys(BUILT_IN).filter((id) => !ids.has(id)),
      [],
    );
  });
});

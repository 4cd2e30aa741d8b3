// In-host smoke suite: runs inside code-server's extension host (and under @vscode/test-electron).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

const EXTENSION_ID = 'ultraplan.ultraplan';

describe('Ultraplan in the extension host', () => {
  it('is installed under its id', () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not installed; installed: ${vscode.extensions.all.map((e) => e.id).join(', ')}`);
    assert.equal((extension.packageJSON as { name?: unknown }).name, 'ultraplan');
  });

  it('activates and registers Show Log', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    assert.equal(extension.isActive, true);
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('ultraplan.showLog'), 'ultraplan.showLog is not registered after activation');
  });

  it('is the installed package: what the .vsix holds, not the source folder', () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    const root = extension.extensionPath;
    const main = (extension.packageJSON as { main?: unknown }).main;
    assert.equal(main, './dist/bootstrap.js');
    for (const file of ['dist/bootstrap.js', 'dist/extension.mjs', 'dist/webview.js', 'examples/demo.json', 'media/icon.png']) {
      assert.ok(fs.existsSync(path.join(root, file)), `${file} is missing from ${root}`);
    }
    for (const absent of ['src', 'node_modules', 'test', 'tsconfig.json', 'dist/extension.mjs.map']) {
      assert.ok(!fs.existsSync(path.join(root, absent)), `${absent} is in the installed extension (${root})`);
    }
    assert.equal(fs.realpathSync(root), root, 'the extension folder is a link, not an installed copy');
  });

  it('holds every chunk its ES module graph imports, statically or on first use', () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    const dist = path.join(extension.extensionPath, 'dist');
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      assert.ok(fs.existsSync(file), `${path.relative(dist, file)} is imported but not installed`);
      const text = fs.readFileSync(file, 'utf8');
      for (const match of text.matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]+\.mjs)"/g))
        visit(path.resolve(path.dirname(file), match[1] ?? ''));
    };
    // The CommonJS bootstrap imports the graph's entry on first use.
    assert.match(fs.readFileSync(path.join(dist, 'bootstrap.js'), 'utf8'), /"dist\/extension\.mjs"/);
    visit(path.join(dist, 'extension.mjs'));
    const chunks = [...seen].filter((file) => path.dirname(file) === path.join(dist, 'chunks'));
    // The chunks it shares and the ones behind its seams (the ACP runtime, Claude Code on the web).
    assert.ok(chunks.length >= 3, `only ${chunks.length} chunk(s) reached from extension.mjs`);
  });
});

// In-host smoke suite: runs inside code-server's extension host (and under @vscode/test-electron).
import * as assert from 'node:assert/strict';
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
});

// The layer rules of eslint.config.mjs, checked against code that breaks them: a rule that cannot
// fire would let a layer quietly import a higher one.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { ESLint } from 'eslint';

const root = path.resolve(__dirname, '..', '..');

async function restrictedImports(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports').map((m) => m.message);
}

describe('layer rules (eslint.config.mjs)', function () {
  this.timeout(60_000);

  it('core imports neither vscode, node: nor a higher layer', async () => {
    const found = await restrictedImports(
      'src/core/example.ts',
      [
        "import * as vscode from 'vscode';",
        "import { readFileSync } from 'node:fs';",
        "import { SessionHost } from '../sessions/host';",
        'export const x = [vscode, readFileSync, SessionHost];',
      ].join('\n'),
    );
    assert.equal(found.length, 3, found.join('\n'));
  });

  it('sessions does not import vscode or the extension', async () => {
    const found = await restrictedImports(
      'src/sessions/example.ts',
      [
        "import * as vscode from 'vscode';",
        "import { Backends } from '../extension/backends/backends';",
        "import { readFileSync } from 'node:fs';",
        'export const x = [vscode, Backends, readFileSync];',
      ].join('\n'),
    );
    assert.equal(found.length, 2, found.join('\n'));
  });

  it('the webview imports no node: module', async () => {
    const found = await restrictedImports(
      'src/webview/example.ts',
      ["import { createHash } from 'node:crypto';", 'export const x = createHash;'].join('\n'),
    );
    assert.equal(found.length, 1);
  });

  it('the extension may import core and node:', async () => {
    const found = await restrictedImports(
      'src/extension/example.ts',
      ["import * as path from 'node:path';", "import { planHash } from '../core/decision';", 'export const x = [path, planHash];'].join(
        '\n',
      ),
    );
    assert.deepEqual(found, []);
  });
});

// The layer rules of eslint.config.mjs, checked against code that breaks them: a rule that cannot
// fire would let a layer quietly import a higher one.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { ESLint } from 'eslint';

const root = path.resolve(__dirname, '..', '..');

const LAYER_RULES = new Set(['@typescript-eslint/no-restricted-imports', 'no-restricted-syntax']);

/** The layer rules' complaints about `code` as if it were `file`, each with the line it is on. */
async function restrictedImports(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => LAYER_RULES.has(m.ruleId ?? '')).map((m) => `${m.line}: ${m.message}`);
}

/** Lints one import per line and answers which lines (1-based) the layer rules refused. */
async function refusedLines(file: string, imports: readonly string[]): Promise<number[]> {
  const found = await restrictedImports(file, [...imports, 'export {};'].join('\n'));
  return [...new Set(found.map((m) => Number(m.split(':')[0])))].sort((a, b) => a - b);
}

describe('layer rules (eslint.config.mjs)', function () {
  this.timeout(60_000);

  it('core imports neither vscode, node:, core/node nor either program', async () => {
    const refused = await refusedLines('src/core/example.ts', [
      "import 'vscode';",
      "import 'node:fs';",
      "import './node/servicePaths';",
      "import '../client/httpBackend';",
      "import '../service/host/sessionHost';",
      "import '../agents/catalogue';",
      "import '../extension/backends/backends';",
      "import './decision';",
    ]);
    assert.deepEqual(refused, [1, 2, 3, 4, 5, 6, 7]);
  });

  it('core/node may use Node but neither program', async () => {
    const refused = await refusedLines('src/core/node/example.ts', [
      "import 'node:fs';",
      "import '../decision';",
      "import '../../client/httpBackend';",
      "import '../../service/host/sessionHost';",
      "import 'vscode';",
    ]);
    assert.deepEqual(refused, [3, 4, 5]);
  });

  it("the client never reaches the service or the agents' runtime, statically or through import()", async () => {
    const refused = await refusedLines('src/client/example.ts', [
      "import '../core/protocol';",
      "import '../core/node/servicePaths';",
      "import '../agents/catalogue/knownAgents';",
      "import '../service/host/sessionHost';",
      "export const later = () => import('../service/http/server');",
      "import '../agents/acp/acpAgent';",
      "export const agent = () => import('../agents/acp/acpAgent');",
      "import 'vscode';",
      "import '../extension/extension';",
    ]);
    assert.deepEqual(refused, [4, 5, 6, 7, 8, 9]);
  });

  it('the service never reaches the client or the extension, statically or through import()', async () => {
    const refused = await refusedLines('src/service/example.ts', [
      "import '../core/protocol';",
      "import '../agents/acp/acpAgent';",
      "import 'node:http';",
      "import '../client/sessionsClient';",
      "export const later = () => import('../client/httpBackend');",
      "import '../extension/extension';",
      "import 'vscode';",
    ]);
    assert.deepEqual(refused, [4, 5, 6, 7]);
  });

  it('the agents import only core', async () => {
    const refused = await refusedLines('src/agents/acp/example.ts', [
      "import '../../core/protocol';",
      "import '../catalogue/knownAgents';",
      "import '../../service/host/sessionHost';",
      "import '../../client/httpBackend';",
    ]);
    assert.deepEqual(refused, [3, 4]);
  });

  it('the extension reaches sessions through the client and knows agents by their catalogue only', async () => {
    const refused = await refusedLines('src/extension/backends/example.ts', [
      "import 'node:path';",
      "import '../../core/decision';",
      "import '../../client/httpBackend';",
      "import '../../agents/catalogue';",
      "export const scenario = () => import('../../agents/catalogue/scenario');",
      "import '../agentSetup/agentChoice';",
      "import '../../service/http/server';",
      "export const server = () => import('../../service/cli');",
      "import '../../agents/acp/acpAgent';",
      "export const agent = () => import('../../agents/scripted/scriptedAgent');",
      "import '../../webview/main';",
    ]);
    assert.deepEqual(refused, [7, 8, 9, 10, 11]);
  });

  it('the webview imports no node: module and neither program', async () => {
    const refused = await refusedLines('src/webview/example.ts', [
      "import 'node:crypto';",
      "import '../core/panelMessages';",
      "import '../client/httpBackend';",
    ]);
    assert.deepEqual(refused, [1, 3]);
  });
});

// The real Claude Code program (the one Claude's ACP adapter drives) in a session's sandbox, with
// only the model scripted: it reaches its model through the egress proxy (it follows HTTP_PROXY
// for an http:// base URL), and the proxy is the only way it had.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdirSync, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { prepareSandboxedSpawn, sandboxSupport } from '../../../src/agents/sandbox';
import { anthropicApi } from '../../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer } from '../../support/modelApi/scenario';
import { CLAUDE_CODE_PACKAGE } from '../../support/realAgents';

describe('agent sandbox: the real Claude Code program inside, with only the model scripted', function () {
  this.timeout(90_000);

  it('answers from the scripted model, reached only through the proxy', async function () {
    if (process.platform !== 'linux' || process.arch !== 'x64') this.skip();
    const support = sandboxSupport();
    assert.ok(support.supported, support.supported ? '' : support.reason);
    const root = await mkdtemp(path.join(tmpdir(), 'ultraplan-sandbox-claude-'));
    const model = new ScriptedModelServer(anthropicApi, new Scenario([() => ({ text: 'PONG from the scripted model' })]));
    const url = await model.start();
    const workspace = path.join(root, 'workspace');
    mkdirSync(workspace);
    const claudePackage = realpathSync(CLAUDE_CODE_PACKAGE);
    const prepared = await prepareSandboxedSpawn(
      {
        sessionId: 'claude-1',
        workspace,
        mode: 'planning',
        home: path.join(root, 'home'),
        tmp: path.join(root, 'tmp'),
        allowedHosts: [new URL(url).host],
        readOnlyPaths: [claudePackage],
      },
      [path.join(claudePackage, 'claude'), '-p', 'ping'],
      {
        set: {
          ANTHROPIC_BASE_URL: url,
          ANTHROPIC_API_KEY: 'sk-scripted',
          // Claude Code refuses to run as root unless told it is in a sandbox; now it is.
          IS_SANDBOX: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        },
      },
      support.tools,
    );
    try {
      const child = spawn(prepared.command, prepared.args, { env: prepared.env, cwd: prepared.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      clearTimeout(timer);
      assert.equal(code, 0, output);
      assert.match(output, /PONG from the scripted model/);
      assert.equal(model.rounds.length, 1, model.describe());
      const decisions = prepared.proxy?.decisions ?? [];
      assert.ok(decisions.length > 0 && decisions.every((d) => d.allowed && d.address === '127.0.0.1'), JSON.stringify(decisions));
    } finally {
      await prepared.cleanup();
      await model.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});

// What goes into one agent's sandbox, from its command line and environment: the model API it may
// reach, the variables it gets, the folders its program is installed in; and the service's
// --sandbox choice on a machine that can or cannot sandbox.
import { strict as assert } from 'node:assert';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KNOWN_AGENTS } from '../../../src/agents/catalogue/knownAgents';
import {
  modelAccess,
  packageRunnerAccess,
  programFolders,
  sandboxFolders,
  withProgramFound,
  type AgentSandboxSettings,
} from '../../../src/agents/sandbox/agentSandbox';
import type { SandboxSupport } from '../../../src/agents/sandbox';
import { UsageError } from '../../../src/service/commandLine';
import { sandboxDecision, sandboxSettings } from '../../../src/service/sandboxFlag';

const LAYOUT = { readOnly: ['/usr', '/etc/ssl'], symlinks: [], disableUserns: true, socat: '/usr/bin/socat' };
const SUPPORTED: SandboxSupport = { supported: true, tools: { bwrap: '/usr/bin/bwrap', bwrapVersion: '0.8.0', layout: LAYOUT }, notes: [] };
const UNSUPPORTED: SandboxSupport = { supported: false, reason: 'macOS: agents cannot be sandboxed here' };

describe('agent sandbox: what one agent gets', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ultraplan-agent-sandbox-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  it("reaches its own model's API: the default host, or the host:port of a configured base URL", () => {
    assert.deepEqual(modelAccess(['/opt/x/node_modules/.bin/claude-agent-acp'], {}), {
      allowedHosts: ['api.anthropic.com:443'],
      allowPrivateNetwork: false,
      pass: [
        'ANTHROPIC_BASE_URL',
        'ANTHROPIC_API_KEY',
        'ANTHROPIC_AUTH_TOKEN',
        'CLAUDE_CODE_OAUTH_TOKEN',
        'ANTHROPIC_MODEL',
        'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
        // Its todo tool's switches (catalogue/progressSignals.ts), set by the service or by the person.
        'CLAUDE_CODE_ENABLE_TODO_TOOLS',
        'CLAUDE_CODE_ENABLE_TASKS',
      ],
    });
    const gemini = modelAccess(['node', '/cache/agents/gemini-0.1/node_modules/.bin/gemini', '--acp'], {
      GOOGLE_GEMINI_BASE_URL: 'http://10.1.2.3:8080/v1',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    });
    assert.deepEqual(gemini.allowedHosts, ['10.1.2.3:8080']);
    assert.equal(gemini.allowPrivateNetwork, true, 'the operator named that gateway');
    assert.ok(gemini.pass.includes('GEMINI_API_KEY') && !gemini.pass.includes('ANTHROPIC_API_KEY'));
    assert.deepEqual(modelAccess(['codex-acp'], { OPENAI_BASE_URL: 'https://gw.example.com/v1' }).allowedHosts, ['gw.example.com:443']);
    // A command we do not know: every known API, each key passed, nothing else.
    const unknown = modelAccess(['/opt/agent/run'], {});
    assert.deepEqual(unknown.allowedHosts, [...new Set(KNOWN_AGENTS.flatMap((agent) => agent.modelHosts))]);
    assert.ok(unknown.allowedHosts.includes('api.anthropic.com:443') && unknown.allowedHosts.includes('api.openai.com:443'));
    // Qwen Code, a catalogue entry like the others: its model's name travels too.
    assert.ok(modelAccess(['/cache/agents/qwen/node_modules/.bin/qwen', '--acp'], {}).pass.includes('OPENAI_MODEL'));
    assert.ok(!unknown.pass.some((name) => name.startsWith('ULTRAPLAN_')));
  });

  it('reads a base URL an `env NAME=VALUE …` command line sets, as one set in its environment', () => {
    const claude = ['/usr/bin/env', 'HOME=/tmp/h', 'ANTHROPIC_BASE_URL=http://127.0.0.1:4100', '/opt/x/node_modules/.bin/claude-agent-acp'];
    assert.deepEqual(modelAccess(claude, {}).allowedHosts, ['127.0.0.1:4100'], 'the configured address replaces the default');
    assert.equal(modelAccess(claude, {}).allowPrivateNetwork, true);
    // A command we do not know: that address besides every known API.
    const unknown = modelAccess(['/usr/bin/env', 'ANTHROPIC_BASE_URL=http://127.0.0.1:4100', '/opt/agent/run'], {});
    assert.ok(unknown.allowedHosts.includes('127.0.0.1:4100'), unknown.allowedHosts.join(' '));
    // Over the environment's own value; after the program, `NAME=VALUE` is an argument, not a variable.
    const over = modelAccess(['env', 'OPENAI_BASE_URL=https://gw.example.com/v1', 'codex-acp'], {
      OPENAI_BASE_URL: 'https://other.example.com',
    });
    assert.deepEqual(over.allowedHosts, ['gw.example.com:443']);
    const argument = modelAccess(['codex-acp', 'OPENAI_BASE_URL=https://gw.example.com/v1'], {});
    assert.deepEqual(argument.allowedHosts, ['api.openai.com:443']);
  });

  it('finds a program named bare on the agent PATH, after an env prefix too, so its install folder is bound', () => {
    const prefix = path.join(root, 'nvm', 'versions', 'node', 'v22');
    mkdirSync(path.join(prefix, 'bin'), { recursive: true });
    const program = path.join(prefix, 'bin', 'my-acp-agent');
    writeFileSync(program, '#!/bin/sh\n');
    chmodSync(program, 0o755);
    const env = { PATH: `/nowhere:${path.join(prefix, 'bin')}` };
    assert.deepEqual(withProgramFound(['my-acp-agent', '--acp'], env), [program, '--acp']);
    assert.deepEqual(withProgramFound(['/usr/bin/env', 'X=1', 'my-acp-agent'], env), ['/usr/bin/env', 'X=1', program]);
    assert.deepEqual(withProgramFound(['/usr/bin/env', `PATH=${path.join(prefix, 'bin')}`, 'my-acp-agent'], {}), [
      '/usr/bin/env',
      `PATH=${path.join(prefix, 'bin')}`,
      program,
    ]);
    assert.deepEqual(withProgramFound(['not-installed-anywhere'], env), ['not-installed-anywhere']);
    // Its version's folder (the parent of its bin, where node is too) is what the sandbox shows.
    assert.deepEqual(programFolders(withProgramFound(['my-acp-agent'], env), LAYOUT.readOnly), [prefix]);
  });

  it('reaches the npm registry only when run through npx, the one the environment names', () => {
    const npx = ['/usr/bin/npx', '-y', '@agentclientprotocol/claude-agent-acp@0.101.0'];
    assert.deepEqual(packageRunnerAccess(npx, {}), { allowedHosts: ['registry.npmjs.org:443'], allowPrivateNetwork: false, pass: [] });
    assert.deepEqual(packageRunnerAccess(npx, { npm_config_registry: 'http://10.0.0.5:4873/' }), {
      allowedHosts: ['10.0.0.5:4873'],
      allowPrivateNetwork: true,
      pass: ['npm_config_registry'],
    });
    const none = { allowedHosts: [], allowPrivateNetwork: false, pass: [] };
    assert.deepEqual(packageRunnerAccess(['/usr/bin/node', '/opt/x/node_modules/.bin/claude-agent-acp'], {}), none);
    assert.deepEqual(
      packageRunnerAccess(['/usr/bin/env', 'X=1', 'npx', 'pkg'], {}),
      none,
      'npx behind env is a custom command: not widened',
    );
  });

  it("never binds a folder holding the person's HOME (a program in ~/bin)", () => {
    const home = path.join(root, 'person');
    mkdirSync(path.join(home, 'bin'), { recursive: true });
    writeFileSync(path.join(home, 'bin', 'agent'), '');
    const saved = process.env.HOME;
    try {
      process.env.HOME = path.join(root, 'someone-else');
      assert.deepEqual(programFolders([path.join(home, 'bin', 'agent')], []), [home], 'the parent of its bin, for any other HOME');
      process.env.HOME = home;
      assert.deepEqual(programFolders([path.join(home, 'bin', 'agent')], []), []);
    } finally {
      process.env.HOME = saved;
    }
  });

  it('binds the folders its program is installed in, read-only, and never one holding a session folder', () => {
    const project = path.join(root, 'project');
    const modules = path.join(root, 'store', 'node_modules');
    mkdirSync(path.join(modules, '.bin'), { recursive: true });
    mkdirSync(path.join(modules, 'pkg', 'dist'), { recursive: true });
    writeFileSync(path.join(modules, 'pkg', 'dist', 'index.js'), '');
    symlinkSync('../pkg/dist/index.js', path.join(modules, '.bin', 'agent'));
    mkdirSync(path.join(project, 'fixtures'), { recursive: true });
    writeFileSync(path.join(project, 'package.json'), '{}');
    writeFileSync(path.join(project, 'fixtures', 'agent.mjs'), '');
    symlinkSync(modules, path.join(project, 'node_modules'));
    const workspace = path.join(root, 'ws');
    mkdirSync(workspace);
    writeFileSync(path.join(workspace, 'scenario.json'), '{}');

    // An npm install: its node_modules (as written and as resolved are the same folder here).
    assert.deepEqual(programFolders([path.join(modules, '.bin', 'agent')], LAYOUT.readOnly), [modules]);
    // A project's script: the project, and the real folder its linked node_modules leads to.
    assert.deepEqual(
      programFolders(
        ['/usr/bin/node', path.join(project, 'fixtures', 'agent.mjs'), path.join(workspace, 'scenario.json')],
        LAYOUT.readOnly,
        [workspace],
      ),
      [project, modules].sort(),
    );
    // A session's folder is never bound through a program folder that holds it.
    assert.deepEqual(programFolders([path.join(workspace, 'scenario.json')], LAYOUT.readOnly, [path.join(workspace, 'inner')]), []);
  });

  it("keeps each session's HOME and temp folder under the service's folder, and no id leaves it", () => {
    const settings: AgentSandboxSettings = { tools: SUPPORTED.supported ? SUPPORTED.tools : (undefined as never), root: '/data/sandboxes' };
    assert.deepEqual(sandboxFolders(settings, 'session_1'), {
      home: '/data/sandboxes/session_1/home',
      tmp: '/data/sandboxes/session_1/tmp',
    });
    for (const id of ['..', '.', '../x', 'a/b', '']) assert.throws(() => sandboxFolders(settings, id), /No sandbox folder/);
  });
});

describe('--sandbox auto|required|off', () => {
  const choose = (mode: string | undefined, multiUser: boolean, support: SandboxSupport, lines: string[] = []) =>
    sandboxSettings(
      'ultraplan-server',
      { mode, multiUser, root: '/data/sandboxes', shared: ['/cache'] },
      (line) => lines.push(line),
      () => support,
    );

  it('sandboxes where the machine can, in every mode but off', () => {
    for (const mode of [undefined, 'auto', 'required']) {
      assert.deepEqual(choose(mode, false, SUPPORTED), {
        tools: (SUPPORTED as { tools: unknown }).tools,
        root: '/data/sandboxes',
        sharedPaths: ['/cache'],
      });
    }
    const lines: string[] = [];
    assert.equal(choose('off', false, SUPPORTED, lines), undefined);
    assert.match(lines.join('\n'), /--sandbox off: agents run with this service's own permissions/);
  });

  it('auto runs unsandboxed where it cannot and says why; required and multi-user refuse to start; off is refused for several people', () => {
    const lines: string[] = [];
    assert.equal(choose('auto', false, UNSUPPORTED, lines), undefined);
    assert.match(lines.join('\n'), /agents run unsandboxed: macOS/);
    assert.throws(
      () => choose('required', false, UNSUPPORTED),
      (err: unknown) => err instanceof UsageError && /--sandbox required: macOS/.test(err.message),
    );
    assert.throws(() => choose(undefined, true, UNSUPPORTED), /Multi-user mode needs a sandbox per agent/);
    assert.throws(() => choose('auto', true, UNSUPPORTED), /Multi-user mode needs a sandbox per agent/);
    assert.throws(() => choose('off', true, SUPPORTED), /--sandbox off is for a single user/);
    assert.throws(() => choose('sometimes', false, SUPPORTED), /--sandbox must be one of auto, required, off/);
  });

  it('says what was asked and what runs, for the local service status', () => {
    const decide = (mode: string, support: SandboxSupport, bwrap?: string) =>
      sandboxDecision(
        'ultraplan-server',
        { mode, multiUser: false, root: '/data/sandboxes', bwrap },
        () => {},
        () => support,
      ).state;
    assert.deepEqual(decide('auto', SUPPORTED), { mode: 'auto', sandboxed: true });
    assert.deepEqual(decide('off', SUPPORTED), { mode: 'off', sandboxed: false });
    assert.deepEqual(decide('auto', UNSUPPORTED), { mode: 'auto', sandboxed: false, reason: 'macOS: agents cannot be sandboxed here' });
    assert.throws(() => decide('auto', SUPPORTED, 'bin/bwrap'), /--sandbox-bwrap takes an absolute path, got "bin\/bwrap"/);
  });
});

// Which agent the embedded backend runs: settings x what is installed (real PATH lookups in a
// temporary directory), the "Choose Backend…" entries, and the agent settings' validation.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { BACKENDS } from '../../../src/core/backendKinds';
import {
  cloudPickLabel,
  embeddedChoiceItems,
  joinCommandLine,
  noAgentFoundNotice,
  noAgentInstallHints,
  planEmbeddedAgent,
  resolveCustomArgv,
  type AgentDetection,
} from '../../../src/extension/agentSetup/agentChoice';
import { parseSettings, SETTING_DEFAULTS, type SettingKey } from '../../../src/extension/settings/settingsSchema';
import { KNOWN_AGENTS, detectCustomAgent, detectKnownAgents, splitCommandLine } from '../../../src/agents/catalogue';

describe('embedded agent choice', () => {
  let bin: string;
  let workspace: string;

  /** Detection over a PATH holding only the given programs (plus npx when asked). */
  async function machineWith(programs: string[]): Promise<AgentDetection> {
    const dir = await mkdtemp(path.join(bin, 'path-'));
    for (const program of programs) {
      const file = path.join(dir, program);
      await writeFile(file, '#!/bin/sh\nexit 0\n');
      await chmod(file, 0o755);
    }
    const env = { PATH: dir };
    return { known: detectKnownAgents(env), custom: (argv) => detectCustomAgent(argv, env) };
  }

  before(async () => {
    bin = await mkdtemp(path.join(os.tmpdir(), 'ultraplan-agent-choice-'));
    workspace = await mkdtemp(path.join(os.tmpdir(), 'ultraplan-agent-ws-'));
  });
  after(async () => {
    await rm(bin, { recursive: true, force: true });
    await rm(workspace, { recursive: true, force: true });
  });

  it('auto picks the first installed known agent, in the order Claude, Gemini, Codex', async () => {
    const plan = planEmbeddedAgent('auto', [], await machineWith(['gemini', 'codex-acp']), workspace);
    assert.equal(plan.kind, 'acp');
    assert.ok(plan.kind === 'acp');
    assert.equal(plan.id, 'gemini');
    assert.deepEqual(plan.argv, ['gemini', '--acp']);
    assert.equal(plan.label, 'Gemini CLI (ACP)');
    const both = planEmbeddedAgent('auto', [], await machineWith(['codex-acp', 'claude-agent-acp']), workspace);
    assert.ok(both.kind === 'acp');
    assert.equal(both.id, 'claude');
    assert.deepEqual(both.argv, ['claude-agent-acp']);
  });

  it('auto with nothing installed runs the demo with a notice saying how to install or configure an agent', async () => {
    // npx alone does not count as installed: auto never downloads an agent on its own.
    const plan = planEmbeddedAgent('auto', [], await machineWith(['npx']), workspace);
    assert.equal(plan.kind, 'demo');
    assert.ok(plan.kind === 'demo');
    assert.equal(plan.why, 'no_agent');
    assert.equal(plan.notice, noAgentFoundNotice());
    assert.match(plan.notice ?? '', /No ACP agent was found/);
    assert.match(plan.notice ?? '', /npm install -g @agentclientprotocol\/claude-agent-acp/);
    assert.match(plan.notice ?? '', /ultraplan\.agent\.command/);
    assert.match(plan.notice ?? '', /Choose Backend…" lists all \d+ with their install commands/);
    // Read whole in a notification: VS Code cuts a message at 1000 characters.
    assert.ok((plan.notice ?? '').length < 500, `the notice is ${plan.notice?.length} characters`);
    for (const agent of KNOWN_AGENTS)
      assert.ok(noAgentInstallHints().includes(agent.installHint), `${agent.label}'s install hint is logged`);
  });

  it('demo chosen: the demo without a notice', async () => {
    const plan = planEmbeddedAgent('demo', [], await machineWith(['claude-agent-acp']), workspace);
    assert.deepEqual(plan, { kind: 'demo', why: 'chosen' });
  });

  it('a named agent runs as installed, else through npx, else is refused with its install command', async () => {
    const installed = planEmbeddedAgent('codex', [], await machineWith(['codex-acp']), workspace);
    assert.ok(installed.kind === 'acp');
    assert.equal(installed.availability, 'installed');
    assert.deepEqual(installed.argv, ['codex-acp']);

    const npx = planEmbeddedAgent('claude', [], await machineWith(['npx']), workspace);
    assert.ok(npx.kind === 'acp');
    assert.equal(npx.availability, 'npx');
    assert.deepEqual(npx.argv, ['npx', '-y', '@agentclientprotocol/claude-agent-acp@0.101.0']);

    // Without the program and without npx: missing is an error with the exact command, never a silent demo.
    const missing = planEmbeddedAgent('gemini', [], await machineWith([]), workspace);
    assert.ok(missing.kind === 'unavailable');
    assert.match(
      missing.message,
      /Gemini CLI \(ACP\) is not installed here\. Install it with: npm install -g @google\/gemini-cli@0\.61\.0 \(needs Node\.js >=20/,
    );
    assert.equal(missing.settingKey, 'ultraplan.agent.choice');
  });

  it('custom: the argv as given, labelled from the script; relative program paths resolve from the workspace', async () => {
    const detection = await machineWith(['my-agent']);
    const plan = planEmbeddedAgent('custom', ['my-agent', '--acp', 'two words'], detection, workspace);
    assert.ok(plan.kind === 'acp');
    assert.deepEqual(plan.argv, ['my-agent', '--acp', 'two words']);
    assert.equal(plan.id, 'custom');
    assert.equal(plan.label, 'my-agent (ACP)');

    const script = path.join(workspace, 'agent.sh');
    await writeFile(script, '#!/bin/sh\nexit 0\n');
    await chmod(script, 0o755);
    const relative = planEmbeddedAgent('custom', ['./agent.sh', 'x'], detection, workspace);
    assert.ok(relative.kind === 'acp');
    assert.deepEqual(relative.argv, [script, 'x']);
    assert.deepEqual(resolveCustomArgv(['node', './a.mjs'], workspace), ['node', './a.mjs'], 'only the program is resolved');
  });

  it('custom: an empty or missing command is refused with the setting to fix', async () => {
    const detection = await machineWith([]);
    const empty = planEmbeddedAgent('custom', [], detection, workspace);
    assert.ok(empty.kind === 'unavailable');
    assert.match(empty.message, /ultraplan\.agent\.command is empty/);
    assert.equal(empty.settingKey, 'ultraplan.agent.command');
    const missing = planEmbeddedAgent('custom', ['no-such-agent-xyz'], detection, workspace);
    assert.ok(missing.kind === 'unavailable');
    assert.match(missing.message, /no-such-agent-xyz was not found on PATH/);
    assert.match(missing.message, /\["no-such-agent-xyz"\]/);
  });

  it('"Choose Backend…" lists automatic, each known agent with its availability, custom and the demo; the current one is marked', async () => {
    const detection = await machineWith(['gemini', 'npx']);
    const items = embeddedChoiceItems(detection, { backendIsEmbedded: true, choice: 'gemini', customCommand: ['my-agent', 'a b'] });
    assert.deepEqual(
      items.map((i) => i.choice),
      ['auto', 'claude', 'gemini', 'codex', 'qwen', 'copilot', 'opencode', 'custom', 'demo'],
    );
    const byChoice = new Map(items.map((i) => [i.choice, i]));
    assert.equal(byChoice.get('auto')?.description, 'now: Gemini CLI (ACP)');
    assert.match(byChoice.get('gemini')?.description ?? '', /^installed \(.*gemini\)$/);
    assert.match(byChoice.get('claude')?.description ?? '', /runs through npx/);
    assert.match(
      byChoice.get('codex')?.description ?? '',
      /runs through npx \(downloads @agentclientprotocol\/codex-acp@2\.6\.0 on first use\)/,
    );
    assert.equal(byChoice.get('custom')?.description, 'now: my-agent a b');
    assert.deepEqual(
      items.filter((i) => i.current).map((i) => i.choice),
      ['gemini'],
    );

    const none = embeddedChoiceItems(await machineWith([]), { backendIsEmbedded: false, choice: 'auto', customCommand: [] });
    assert.equal(none.find((i) => i.choice === 'auto')?.description, 'now: Demo (scripted), no agent found');
    const gemini = none.find((i) => i.choice === 'gemini');
    assert.equal(gemini?.description, 'not found');
    assert.match(gemini?.detail ?? '', /install: npm install -g @google\/gemini-cli/);
    assert.equal(
      none.some((i) => i.current),
      false,
      'nothing marked while another backend is selected',
    );
  });

  it('typing an agent\'s name in "Choose Backend…" ranks the local agent first, before Claude Code on the web', async () => {
    const items = embeddedChoiceItems(await machineWith(['npx']), { backendIsEmbedded: false, choice: 'auto', customCommand: [] });
    const labels = [
      ...items.map((i) => ({ label: i.label, choice: i.choice })),
      { label: cloudPickLabel(BACKENDS['claude-web'].label), choice: 'claude-web' },
    ];
    // VS Code's quick pick, filtering by label: the match nearest the label's start first, then the shorter label.
    const typed = (query: string) =>
      labels
        .filter((item) => item.label.toLowerCase().includes(query))
        .sort((a, b) => a.label.toLowerCase().indexOf(query) - b.label.toLowerCase().indexOf(query) || a.label.length - b.label.length)
        .map((item) => item.choice);
    assert.deepEqual(typed('claude'), ['claude', 'claude-web']);
    assert.equal(typed('qwen')[0], 'qwen');
    assert.equal(typed('gemini')[0], 'gemini');
    assert.equal(cloudPickLabel(BACKENDS['claude-web'].label), 'Claude Code on the web (cloud)');
    // Automatic names every known agent it looks for.
    assert.match(items[0]?.detail ?? '', /\(Claude, Gemini CLI, Codex, Qwen Code, Copilot CLI, OpenCode\)/);
  });

  it('a stored argv is shown as a command line that splits back to the same argv', () => {
    for (const argv of [
      ['node', '/repo/fake agent.mjs', 'scenario.json'],
      ['agent', "it's", 'a"b', 'back\\slash', ''],
      ['plain', '--flag'],
    ]) {
      assert.deepEqual(splitCommandLine(joinCommandLine(argv)), argv);
    }
    assert.equal(joinCommandLine(['plain', '--flag']), 'plain --flag');
  });
});

describe('agent settings', () => {
  function read(values: Partial<Record<SettingKey, unknown>>) {
    return parseSettings((k) => values[k]);
  }

  it('defaults: auto, no command, manual approval of edits, 120 s first-event bound', () => {
    assert.equal(SETTING_DEFAULTS['agent.choice'], 'auto');
    assert.deepEqual(SETTING_DEFAULTS['agent.command'], []);
    assert.equal(SETTING_DEFAULTS.afterApproval, 'default');
    assert.equal(SETTING_DEFAULTS['agent.firstEventTimeoutSeconds'], 120);
  });

  it('accepts valid values, including an explicit bypass', () => {
    const r = read({
      'agent.choice': 'custom',
      'agent.command': ['node', 'a.mjs'],
      afterApproval: 'bypassPermissions',
      'agent.firstEventTimeoutSeconds': 30,
    });
    assert.deepEqual(r.problems, []);
    assert.equal(r.settings['agent.choice'], 'custom');
    assert.deepEqual(r.settings['agent.command'], ['node', 'a.mjs']);
    assert.equal(r.settings.afterApproval, 'bypassPermissions');
    assert.equal(r.settings['agent.firstEventTimeoutSeconds'], 30);
  });

  it('bad values are reported against their keys with what was given, and fall back to the defaults', () => {
    const r = read({
      'agent.choice': 'aider',
      'agent.command': 'node a.mjs',
      afterApproval: 'yolo',
      'agent.firstEventTimeoutSeconds': 1,
    });
    assert.deepEqual(
      r.problems.map((p) => p.key),
      ['ultraplan.agent.choice', 'ultraplan.agent.command', 'ultraplan.afterApproval', 'ultraplan.agent.firstEventTimeoutSeconds'],
    );
    assert.match(
      r.problems[0]?.message ?? '',
      /must be one of: auto, claude, gemini, codex, qwen, copilot, opencode, custom, demo \(got "aider"\)/,
    );
    assert.match(r.problems[1]?.message ?? '', /must be a list of arguments.*no shell.*\(got "node a\.mjs"\)/);
    assert.match(r.problems[2]?.message ?? '', /must be one of: default, acceptEdits, bypassPermissions \(got "yolo"\)/);
    assert.match(r.problems[3]?.message ?? '', /at least 5 seconds/);
    assert.equal(r.settings['agent.choice'], 'auto');
    assert.equal(r.settings.afterApproval, 'default');
  });

  it('a command whose program is empty is refused', () => {
    const r = read({ 'agent.command': ['  ', 'x'] });
    assert.match(r.problems[0]?.message ?? '', /ultraplan\.agent\.command its first element \(the program\) must not be empty/);
  });
});

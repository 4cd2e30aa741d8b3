// An agent command that starts with `env`: the environment the agent program sees, and so where
// its own plans folder is. The second part runs the fake agent (a real process) as
// `env HOME=<its home> node fake-acp-agent …`, shaped like Claude's adapter when Claude Code's
// exit request comes without the plan it wrote to its plans folder.
import { strict as assert } from 'node:assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { environmentSeenBy } from '../../../src/agents/acp/envCommand';
import { CLAUDE_EXIT_OPTIONS, DEFAULT_AND_PLAN_MODES } from '../../support/acpFixtures';
import { FakeAgentRuns } from '../../support/recordingAgentContext';

const SPAWNED = { HOME: '/home/person', PATH: '/usr/bin', CLAUDE_CONFIG_DIR: '/home/person/.config/claude' };

describe('an agent command that starts with env', () => {
  it('sets, unsets and clears as env does, before the command', () => {
    assert.deepEqual(environmentSeenBy(['/usr/bin/env', 'HOME=/tmp/agent-home', 'A=b=c', 'node', 'agent.js', 'X=y'], SPAWNED), {
      ...SPAWNED,
      HOME: '/tmp/agent-home',
      A: 'b=c',
    });
    assert.deepEqual(environmentSeenBy(['env', '-u', 'CLAUDE_CONFIG_DIR', '--unset=PATH', 'claude-agent-acp'], SPAWNED), {
      HOME: '/home/person',
    });
    assert.deepEqual(environmentSeenBy(['env', '-uHOME', 'claude-agent-acp'], SPAWNED), {
      PATH: '/usr/bin',
      CLAUDE_CONFIG_DIR: '/home/person/.config/claude',
    });
    assert.deepEqual(environmentSeenBy(['env', '-i', 'HOME=/h', 'claude-agent-acp'], SPAWNED), { HOME: '/h' });
    assert.deepEqual(environmentSeenBy(['env', '-', 'claude-agent-acp'], SPAWNED), {});
    // After the first assignment an option-looking word is the command, as for env itself.
    assert.deepEqual(environmentSeenBy(['env', 'HOME=/h', '-i', 'x'], SPAWNED), { ...SPAWNED, HOME: '/h' });
    assert.deepEqual(environmentSeenBy(['env', '--', 'HOME=/h', 'x'], SPAWNED), { ...SPAWNED, HOME: '/h' });
  });

  it('leaves the environment as spawned for another command, or an option it does not follow', () => {
    assert.equal(environmentSeenBy(['claude-agent-acp', 'HOME=/h'], SPAWNED), SPAWNED);
    assert.equal(environmentSeenBy(['/opt/envoy', 'HOME=/h'], SPAWNED), SPAWNED);
    assert.equal(environmentSeenBy(['env', '-S', 'HOME=/h claude-agent-acp'], SPAWNED), SPAWNED);
    assert.equal(environmentSeenBy(['env', '-C', '/elsewhere', 'HOME=/h', 'x'], SPAWNED), SPAWNED);
  });
});

describe('an agent started as `env HOME=… agent`: its plans folder is under that home', function () {
  this.timeout(60_000);
  const runs = new FakeAgentRuns();
  let home = '';

  beforeEach(async () => {
    home = await mkdtemp(path.join(tmpdir(), 'ultraplan-env-home-'));
  });
  afterEach(async () => {
    await runs.stopAll();
    await rm(home, { recursive: true, force: true });
  });

  it('an exit request without the plan shows the plan file the agent wrote in its own plans folder, at once', async () => {
    const plan = '# Flip the flag\n\n1. Set original to false in src/app.ts.\n2. Run the tests.\n';
    const planFile = '{{home}}/.claude/plans/flip-the-flag-cosmic-wren.md';
    const run = await runs.prepare({
      agentInfo: { name: '@agentclientprotocol/claude-agent-acp', version: '0.101.0' },
      modes: DEFAULT_AND_PLAN_MODES,
      turns: [
        [
          { toolCall: { toolCallId: 'toolu_write', title: 'Write', kind: 'edit', status: 'pending', rawInput: {} } },
          { ownWrite: { path: planFile, content: plan } },
          {
            toolCallUpdate: {
              toolCallId: 'toolu_write',
              status: 'completed',
              rawInput: { file_path: planFile, content: plan },
              locations: [{ path: planFile }],
            },
          },
          {
            permission: {
              // As Claude's adapter asks when Claude Code did not fill in the plan: no input, no content.
              toolCall: { toolCallId: 'toolu_exit', title: 'Ready to code?', kind: 'switch_mode', rawInput: {} },
              options: CLAUDE_EXIT_OPTIONS,
            },
            then: { '*': [{ stopReason: 'end_turn' }] },
          },
        ],
      ],
    });
    // The service's own HOME is not the agent's: only the command line says where the agent's is.
    assert.notEqual(process.env.HOME, home);
    const { ctx } = await runs.startOn(run, { argv: ['env', `HOME=${home}`, ...run.argv] });
    const request = await ctx.waitForPlanRequest();
    assert.equal(request.plan, plan);
    assert.ok(
      ctx.logs.some((line) => line.includes(`taking the plan file ${path.join(home, '.claude', 'plans', 'flip-the-flag-cosmic-wren.md')}`)),
      ctx.logs.join('\n'),
    );
  });
});

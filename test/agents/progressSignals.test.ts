import { strict as assert } from 'node:assert';
import { knownAgentOfArgv } from '../../src/agents/catalogue/knownAgents';
import { CLAUDE_PROGRESS_ENV, codexConfigWithPlanTool, progressSignalEnv } from '../../src/agents/catalogue/progressSignals';
import { modelAccess } from '../../src/agents/sandbox/agentSandbox';

describe('agents/catalogue/progressSignals: what each known agent needs to report progress', () => {
  it("turns Claude Code's TodoWrite on unless the person chose either switch", () => {
    assert.deepEqual(progressSignalEnv('claude', {}).set, {
      CLAUDE_CODE_ENABLE_TODO_TOOLS: '1',
      CLAUDE_CODE_ENABLE_TASKS: 'false',
    });
    assert.deepEqual(progressSignalEnv('claude', { CLAUDE_CODE_ENABLE_TASKS: 'true' }).set, {});
    assert.deepEqual(progressSignalEnv('claude', { CLAUDE_CODE_ENABLE_TODO_TOOLS: '0' }).set, {});
  });

  it("adds Codex's update_plan switch to the person's CODEX_CONFIG, keeping the rest and their own choice", () => {
    assert.deepEqual(JSON.parse(progressSignalEnv('codex', {}).set.CODEX_CONFIG ?? ''), { tools: { update_plan: { enabled: true } } });
    const theirs = JSON.stringify({ model: 'o9', tools: { web_search: true, update_plan: { note: 'x' } } });
    assert.deepEqual(JSON.parse(progressSignalEnv('codex', { CODEX_CONFIG: theirs }).set.CODEX_CONFIG ?? ''), {
      model: 'o9',
      tools: { web_search: true, update_plan: { note: 'x', enabled: true } },
    });
    const off = JSON.stringify({ tools: { update_plan: { enabled: false } } });
    assert.deepEqual(progressSignalEnv('codex', { CODEX_CONFIG: off }), { set: {} });
  });

  it('leaves a CODEX_CONFIG it cannot read as it is, and says why the plan updates stay off', () => {
    for (const [config, problem] of [
      ['{not json', /CODEX_CONFIG is not JSON/],
      ['[1, 2]', /not a JSON object/],
      ['{"tools": 3}', /CODEX_CONFIG\.tools is not an object/],
      ['{"tools": {"update_plan": true}}', /tools\.update_plan is not an object/],
    ] as const) {
      const read = progressSignalEnv('codex', { CODEX_CONFIG: config });
      assert.deepEqual(read.set, {}, config);
      assert.match(read.problem ?? '', problem, config);
      assert.match(read.problem ?? '', /update_plan\) stay off/);
    }
    assert.deepEqual(codexConfigWithPlanTool('  '), { value: JSON.stringify({ tools: { update_plan: { enabled: true } } }) });
  });

  it('sets nothing for Gemini CLI (it sends no plan updates), Qwen Code or an agent it does not know', () => {
    for (const agent of ['gemini', 'qwen', undefined] as const) assert.deepEqual(progressSignalEnv(agent, {}), { set: {} });
  });

  it('knows the agent from its program or its npx package, and lets the switches into its sandbox', () => {
    assert.equal(knownAgentOfArgv(['/x/node_modules/.bin/claude-agent-acp'])?.id, 'claude');
    assert.equal(knownAgentOfArgv(['npx', '-y', '@agentclientprotocol/codex-acp@2.6.0'])?.id, 'codex');
    assert.equal(knownAgentOfArgv(['/usr/bin/node', '/x/.bin/gemini', '--acp'])?.id, 'gemini');
    assert.equal(knownAgentOfArgv(['my-agent', '--acp']), undefined);
    const claude = modelAccess(['claude-agent-acp'], {});
    for (const name of Object.keys(CLAUDE_PROGRESS_ENV)) assert.ok(claude.pass.includes(name), name);
    assert.ok(modelAccess(['codex-acp'], {}).pass.includes('CODEX_CONFIG'));
  });
});

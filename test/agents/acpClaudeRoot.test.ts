// Claude's real adapter run as root, as in containers, dev containers and code-server: planning
// needs no bypass-permissions support, so a sandbox flag Claude Code does not accept ("true" rather
// than "1") must not stop it; and a person who chose bypass after approval hears why it cannot work
// here in one message, before any raw stderr.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { anthropicApi } from '../support/modelApi/anthropic';
import { CLAUDE_ADAPTER, claudeEnv } from '../support/realAgents';
import { createRequest, eachRealAgentRun, planUntilApproved, planUntilFailed, type RealAgentSetup } from './realAgentKit';
import { claudeBypassProblem, claudeRefusesBypass, claudeSessionMeta } from '../../src/agents/catalogue/claudeBypass';

const INLINE_PLAN = '# Plan\n\n1. Flip the flag.\n';

function rootClaude(agent: RealAgentSetup['agent'], rounds: RealAgentSetup['rounds']): RealAgentSetup {
  return {
    family: anthropicApi,
    rounds,
    argv: [CLAUDE_ADAPTER],
    label: 'Claude (ACP)',
    // Set, but not to the "1" Claude Code itself accepts.
    env: (home, modelUrl) => ({ ...claudeEnv(home, modelUrl), IS_SANDBOX: 'true' }),
    agent,
  };
}

describe('the real Claude ACP adapter as root', function () {
  this.timeout(120_000);
  const run = eachRealAgentRun();

  before(function () {
    // What is under test only exists for root (CI runs as root).
    if (process.geteuid?.() !== 0) this.skip();
  });

  it('plans without asking Claude Code for bypass permissions, so a sandbox flag it does not accept does not stop planning', async () => {
    await run.open(
      rootClaude({}, [
        () => ({ toolCalls: [{ name: 'Read', input: { file_path: path.join(run.workspace, 'src', 'app.ts') } }] }),
        () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
        () => ({ toolCalls: [{ name: 'ExitPlanMode', input: { plan: INLINE_PLAN } }] }),
      ]),
    );
    const session = await run.backend.createSession(createRequest('Flip the flag'));
    const { plans } = await planUntilApproved(run, session.id, { decisions: [{ behavior: 'allow' }], timeoutMs: 90_000 });
    assert.deepEqual(plans, [INLINE_PLAN]);
  });

  it('with ultraplan.afterApproval = bypassPermissions, the refusal is one message with its cause and fix, not the adapter stderr', async () => {
    await run.open(rootClaude({ afterApproval: 'bypassPermissions' }, [() => ({ text: 'never reached' })]));
    const result = await planUntilFailed(run, 60_000);
    assert.match(
      result.result ?? '',
      /ultraplan\.afterApproval is "bypassPermissions", and Claude Code refuses to bypass permissions when it runs as root/,
    );
    assert.match(result.result ?? '', /IS_SANDBOX=1/);
    assert.doesNotMatch(result.result ?? '', /stderr/);
    assert.equal(run.model.rounds.length, 0, 'the model was never called');
  });
});

describe('Claude and bypass permissions (pure)', () => {
  const root = (env: Record<string, string> = {}) => ({ uid: 0, env });

  it('opts the session out of bypass support unless bypass was chosen for after approval', () => {
    assert.deepEqual(claudeSessionMeta('default'), { claudeCode: { options: { allowDangerouslySkipPermissions: false } } });
    assert.deepEqual(claudeSessionMeta('acceptEdits'), { claudeCode: { options: { allowDangerouslySkipPermissions: false } } });
    assert.equal(claudeSessionMeta('bypassPermissions'), undefined);
  });

  it('knows when Claude Code refuses bypass: root, unless IS_SANDBOX is exactly "1" or bubblewrap is in use', () => {
    assert.equal(claudeRefusesBypass(root()), true);
    assert.equal(claudeRefusesBypass(root({ IS_SANDBOX: 'true' })), true);
    assert.equal(claudeRefusesBypass(root({ IS_SANDBOX: '1' })), false);
    assert.equal(claudeRefusesBypass(root({ CLAUDE_CODE_BUBBLEWRAP: '1' })), false);
    assert.equal(claudeRefusesBypass({ uid: 1000, env: {} }), false);
    assert.equal(claudeRefusesBypass({ uid: undefined, env: {} }), false);
  });

  it('speaks up before a session only when bypass was chosen and would be refused', () => {
    assert.equal(claudeBypassProblem('acceptEdits', root()), undefined);
    assert.equal(claudeBypassProblem('bypassPermissions', root({ IS_SANDBOX: '1' })), undefined);
    assert.match(claudeBypassProblem('bypassPermissions', root()) ?? '', /Choose "acceptEdits" or "default"/);
  });
});

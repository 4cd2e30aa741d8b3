// GitHub Copilot CLI and OpenCode have no request to leave plan mode over ACP: the end of a
// planning turn offers the plan (Copilot's plan.md when the turn changed it; OpenCode's last words
// unless they ask a question). Their quirks, as read from their programs.
import { strict as assert } from 'node:assert';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { TurnEndPlans, endsWithQuestion } from '../../src/agents/acp/turnEndPlan';
import { chooseQuirks } from '../../src/agents/quirks/chooseQuirks';
import { COPILOT_QUIRKS, copilotPlanFile } from '../../src/agents/quirks/copilot';
import { OPENCODE_QUIRKS } from '../../src/agents/quirks/opencode';

const MODE = (name: string) => `https://agentclientprotocol.com/protocol/session-modes#${name}`;
const COPILOT_MODES = [MODE('agent'), MODE('plan'), MODE('autopilot')];

describe('agents whose planning turn ends with the plan (Copilot CLI, OpenCode)', () => {
  it('are chosen by the names their initialize gives', () => {
    assert.equal(chooseQuirks({ name: 'Copilot', title: 'Copilot', version: '1.0.102' }), COPILOT_QUIRKS);
    assert.equal(chooseQuirks({ name: 'OpenCode', version: '1.18.33' }), OPENCODE_QUIRKS);
  });

  it('Copilot: its plan file is in its session folder (COPILOT_HOME when set); carried out in agent mode, autopilot only for bypassPermissions', () => {
    const agent = { home: '/home/u', env: {}, sessionId: 'abc' };
    assert.equal(copilotPlanFile(agent), '/home/u/.copilot/session-state/abc/plan.md');
    assert.equal(copilotPlanFile({ ...agent, env: { COPILOT_HOME: '/state' } }), '/state/session-state/abc/plan.md');
    assert.equal(COPILOT_QUIRKS.carryOutMode('default', COPILOT_MODES), MODE('agent'));
    assert.equal(COPILOT_QUIRKS.carryOutMode('acceptEdits', COPILOT_MODES), MODE('agent'));
    assert.equal(COPILOT_QUIRKS.carryOutMode('bypassPermissions', COPILOT_MODES), MODE('autopilot'));
    assert.equal(COPILOT_QUIRKS.carryOutMode('default', [MODE('plan')]), undefined);
    assert.equal(COPILOT_QUIRKS.loadsSessions, true);
  });

  it('OpenCode: leaves plan mode through its mode config option; no session modes to carry out in', () => {
    assert.deepEqual(OPENCODE_QUIRKS.planAtTurnEnd?.leavePlanMode, { configId: 'mode', value: 'build' });
    assert.equal(OPENCODE_QUIRKS.planAtTurnEnd?.planFile, undefined);
    assert.equal(OPENCODE_QUIRKS.carryOutMode('default', []), undefined);
    assert.equal(OPENCODE_QUIRKS.loadsSessions, true);
  });

  it('a plan file is offered when the turn changed it, never twice unchanged; missing or empty offers none', async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'ultraplan-turn-end-'));
    try {
      const plans = new TurnEndPlans({ planFile: copilotPlanFile });
      const context = { home, env: {}, sessionId: 's1', lastText: 'Plan saved.' };
      assert.match(String((plans.offer(context) as { none: string }).none), /no plan file at .*session-state\/s1\/plan\.md/);
      const file = copilotPlanFile(context);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, '  \n');
      assert.match(String((plans.offer(context) as { none: string }).none), /is empty/);
      await writeFile(file, '# Plan\n');
      assert.deepEqual(plans.offer(context), { plan: '# Plan\n', from: file });
      assert.match(String((plans.offer(context) as { none: string }).none), /did not change/);
      await writeFile(file, '# Plan\n\n2. More.\n');
      assert.deepEqual(plans.offer(context), { plan: '# Plan\n\n2. More.\n', from: file });
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it('without a plan file: the last words are the plan unless they ask a question', () => {
    const plans = new TurnEndPlans({});
    const context = { home: '/nowhere', env: {}, sessionId: 's' };
    assert.deepEqual(plans.offer({ ...context, lastText: '# Plan\n\n1. Flip it.\n' }), {
      plan: '# Plan\n\n1. Flip it.',
      from: 'the turn’s last words',
    });
    assert.ok('none' in plans.offer({ ...context, lastText: 'Which file: src/app.ts or README.md?\n' }));
    assert.ok('none' in plans.offer({ ...context, lastText: '   ' }));
    assert.equal(endsWithQuestion('I read it.\n\n**Which one?**'), true);
    assert.equal(endsWithQuestion('Is it done? Yes.\n1. Flip.'), false);
  });
});

// Agents Ultraplan does not know by name: plan mode as a session mode or a config option, exit
// requests recognised by kind switch_mode or by options that leave the mode, and a request we
// cannot place told to the person instead of refused silently. Pure rules, then the fake agent
// through the real spawn path for what no real agent does on demand.
import { strict as assert } from 'node:assert';
import { choosePlanMode, modeFromUpdate } from '../../src/agents/acp/planMode';
import { isPlanExitRequest, isUnclearRequest } from '../../src/agents/acp/planReview';
import {
  codexAuthentication,
  codexLeavePlanMode,
  codexPresetAfterApproval,
  codexStatusText,
  CODEX_QUIRKS,
} from '../../src/agents/quirks/codex';
import { PLAIN_ACP } from '../../src/agents/quirks/agentQuirks';
import { chooseQuirks } from '../../src/agents/quirks/chooseQuirks';
import { readAgentRecord, permissionOutcomes } from '../support/fakeAcpAgent';
import { FakeAgentRuns } from '../support/recordingAgentContext';
import { REJECT_OPTION } from '../support/acpFixtures';

const CODEX_OPTIONS = [
  {
    id: 'mode',
    name: 'Mode',
    category: 'mode',
    type: 'select',
    currentValue: 'agent',
    options: [
      { value: 'read-only', name: 'Read-only' },
      { value: 'agent', name: 'Auto review' },
    ],
  },
  {
    id: 'collaboration_mode',
    name: 'Collaboration mode',
    category: 'collaboration_mode',
    type: 'select',
    currentValue: 'default',
    options: [
      { value: 'default', name: 'Default' },
      { value: 'plan', name: 'Plan' },
    ],
  },
] as const;

describe('agents Ultraplan does not know, and Codex', () => {
  describe('plan mode as a config option', () => {
    it('finds plan mode in a mode-like config option when the session modes are something else (Codex)', () => {
      const choice = choosePlanMode('Codex (ACP)', {
        modes: {
          currentModeId: 'agent',
          availableModes: [
            { id: 'read-only', name: 'Read-only' },
            { id: 'agent', name: 'Auto review' },
          ],
        },
        configOptions: CODEX_OPTIONS as never,
      });
      assert.deepEqual(choice, { ok: true, target: { via: 'config_option', configId: 'collaboration_mode', value: 'plan', name: 'Plan' } });
    });

    it('reads the mode from that option, not from the presets', () => {
      const target = { via: 'config_option', configId: 'collaboration_mode', value: 'plan', name: 'Plan' } as const;
      const update = {
        sessionUpdate: 'config_option_update',
        configOptions: [
          { ...CODEX_OPTIONS[0], currentValue: 'read-only' },
          { ...CODEX_OPTIONS[1], currentValue: 'plan' },
        ],
      };
      assert.equal(modeFromUpdate(update, target), 'plan');
      assert.equal(modeFromUpdate(update), 'read-only');
      assert.equal(modeFromUpdate({ sessionUpdate: 'current_mode_update', currentModeId: 'agent' }, target), undefined);
    });

    it('no plan anywhere: the message lists modes and option values', () => {
      const choice = choosePlanMode('X', { configOptions: [CODEX_OPTIONS[0]] as never });
      assert.ok(!choice.ok);
      assert.match(choice.message, /X has no plan mode.*read-only \("Read-only"\), agent \("Auto review"\)/);
    });
  });

  describe('exit requests', () => {
    it('kind switch_mode, or an allow option named after another mode, leaves plan mode', () => {
      assert.ok(isPlanExitRequest({ toolCall: { toolCallId: 'a', kind: 'switch_mode', title: 'Anything' }, options: [] }));
      const leaving = {
        toolCall: { toolCallId: 'b', kind: 'other', title: 'Ready?' },
        options: [{ optionId: 'code', name: 'Go', kind: 'allow_once' }, REJECT_OPTION],
      } as const;
      assert.ok(isPlanExitRequest(leaving, { otherModeIds: ['code', 'ask'] }));
      assert.ok(!isPlanExitRequest(leaving, { otherModeIds: ['ask'] }));
      assert.ok(
        !isPlanExitRequest(
          {
            toolCall: { toolCallId: 'c', kind: 'edit', title: 'Edit a.ts' },
            options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }, REJECT_OPTION],
          },
          { otherModeIds: ['code'] },
        ),
      );
    });

    it('a request whose kind says nothing is unclear; one that says what it does is not', () => {
      assert.ok(isUnclearRequest({ kind: 'other' }));
      assert.ok(isUnclearRequest({}));
      assert.ok(!isUnclearRequest({ kind: 'edit' }));
      assert.ok(!isUnclearRequest({}, 'execute'));
    });
  });

  describe('Codex rules', () => {
    it('is recognised by its adapter name, current and earlier', () => {
      assert.equal(chooseQuirks({ name: '@agentclientprotocol/codex-acp', version: '2.6.0' }), CODEX_QUIRKS);
      assert.equal(chooseQuirks({ name: '@zed-industries/codex-acp', version: '0.3.0' }), CODEX_QUIRKS);
      assert.notEqual(chooseQuirks({ name: '@agentclientprotocol/claude-agent-acp', version: '0.101.0' }), CODEX_QUIRKS);
      assert.equal(chooseQuirks(undefined), PLAIN_ACP);
    });

    it('authenticates with api-key only when offered and a key is set', () => {
      const init = {
        authMethods: [
          { id: 'api-key', name: 'API Key' },
          { id: 'chat-gpt', name: 'ChatGPT' },
        ],
      } as never;
      assert.deepEqual(codexAuthentication(init, { OPENAI_API_KEY: 'sk-1' }), { methodId: 'api-key' });
      assert.deepEqual(codexAuthentication(init, { CODEX_API_KEY: 'k' }), { methodId: 'api-key' });
      assert.deepEqual(codexAuthentication(init, { OPENAI_API_KEY: '  ' }), { skip: 'neither CODEX_API_KEY nor OPENAI_API_KEY is set' });
      assert.deepEqual(codexAuthentication({ authMethods: [{ methodId: 'chat-gpt' }] } as never, { OPENAI_API_KEY: 'k' }), {
        skip: 'it offers no api-key login (offered: chat-gpt)',
      });
    });

    it('maps ultraplan.afterApproval to a preset it offers', () => {
      const presets = ['read-only', 'workspace-write', 'agent', 'agent-full-access'];
      assert.equal(codexPresetAfterApproval('default', presets), 'read-only');
      assert.equal(codexPresetAfterApproval('acceptEdits', presets), 'workspace-write');
      assert.equal(codexPresetAfterApproval('bypassPermissions', presets), 'agent-full-access');
      assert.equal(codexPresetAfterApproval('acceptEdits', ['read-only']), undefined);
      assert.deepEqual(codexLeavePlanMode({ via: 'config_option', configId: 'collaboration_mode', value: 'plan', name: 'Plan' }), {
        configId: 'collaboration_mode',
        value: 'default',
      });
      assert.equal(codexLeavePlanMode({ via: 'mode', modeId: 'plan', name: 'Plan' }), undefined);
    });

    it('reads its "Reconnecting…" status and nothing else', () => {
      const update = {
        sessionUpdate: 'session_info_update',
        _meta: {
          codex: {
            error: {
              message: 'Reconnecting... waiting for network',
              additionalDetails: 'Connection failed: error sending request',
              willRetry: true,
            },
          },
        },
      };
      assert.equal(codexStatusText(update), 'Reconnecting... waiting for network (Connection failed: error sending request)');
      assert.equal(
        codexStatusText({ sessionUpdate: 'session_info_update', _meta: { codex: { threadStatus: { type: 'active' } } } }),
        undefined,
      );
      assert.equal(codexStatusText({ sessionUpdate: 'agent_message_chunk' }), undefined);
    });
  });

  describe('through the fake agent', function () {
    this.timeout(20000);
    const runs = new FakeAgentRuns();
    afterEach(() => runs.stopAll());

    it('an unclear request while planning is refused and told to the person; a request leaving the mode is a plan review', async () => {
      const run = await runs.prepare({
        description: 'An unknown agent: a request of kind other, then one whose allow option is its other mode.',
        modes: {
          currentModeId: 'code',
          availableModes: [
            { id: 'code', name: 'Code' },
            { id: 'plan', name: 'Plan' },
          ],
        },
        turns: [
          [
            {
              permission: {
                toolCall: { toolCallId: 'x-1', title: 'Do the thing', kind: 'other' },
                options: [{ optionId: 'ok', name: 'OK', kind: 'allow_once' }, REJECT_OPTION],
              },
            },
            { chunk: 'The plan: do the thing.' },
            {
              permission: {
                toolCall: {
                  toolCallId: 'x-2',
                  title: 'Ready',
                  kind: 'other',
                  content: [{ type: 'content', content: { type: 'text', text: '# Plan\n\nDo the thing.' } }],
                },
                options: [{ optionId: 'code', name: 'Start coding', kind: 'allow_once' }, REJECT_OPTION],
              },
            },
          ],
        ],
      });
      const { ctx } = await runs.startOn(run, { label: 'Unknown (ACP)' });
      const review = await ctx.waitForPlanRequest();
      assert.equal(review.plan, '# Plan\n\nDo the thing.');
      const unclear = ctx.systemEvents('acp_unclear_request');
      assert.equal(unclear.length, 1);
      assert.match(
        String(unclear[0]?.message),
        /Unknown \(ACP\) asked permission for "Do the thing" \(kind other\) while planning, with the options "OK", "Reject"\. Ultraplan cannot tell whether this is its request to leave plan mode or a change, so it refused it/,
      );
      // Said to the person in the conversation, not only in the log.
      assert.ok(
        ctx.events.some((event) =>
          JSON.stringify(event).includes('Ultraplan: Unknown (ACP) asked permission for \\"Do the thing\\" (kind other) while planning'),
        ),
        'the notice is in the conversation',
      );
      const outcomes = permissionOutcomes(readAgentRecord(run.record));
      assert.deepEqual(outcomes, ['reject']);
    });
  });
});

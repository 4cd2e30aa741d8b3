// What Ultraplan reads from Claude's adapter and Gemini CLI, as the real agents send it (the
// shapes below are copied from their messages; the end-to-end runs are acpRealClaude/acpRealGemini).
import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CLAUDE_QUIRKS, claudeApproval, claudeNotice, claudeRejectOption } from '../../src/agents/quirks/claude';
import { GEMINI_QUIRKS, geminiModeAfterApproval, geminiModeUpdate, geminiPlanPath, isGeminiPlanExit } from '../../src/agents/quirks/gemini';
import { AcpAgent } from '../../src/agents/acp/acpAgent';
import { PLAIN_ACP } from '../../src/agents/quirks/agentQuirks';
import { chooseQuirks } from '../../src/agents/quirks/chooseQuirks';
import { CODEX_QUIRKS } from '../../src/agents/quirks/codex';
import { isPlanExitRequest } from '../../src/agents/acp/planReview';
import { fakeRun } from '../support/fakeAcpAgent';
import { RecordingContext } from '../support/recordingAgentContext';
import { ALLOW_OR_REJECT, CLAUDE_EXIT_OPTIONS, DEFAULT_AND_PLAN_MODES, GEMINI_OPTIONS } from '../support/acpFixtures';

const GEMINI_EXIT = {
  toolCallId: 'exit_plan_mode__exit_plan_mode_1796041541078_0',
  kind: 'other' as const,
  status: 'pending' as const,
  title: 'Requesting plan approval for: /home/me/.gemini/tmp/ws1/19355368-df11-496f-b358-18de61270f76/plans/plan.md',
  content: [],
  locations: [],
};

describe('the quirks of each agent, chosen once from initialize', () => {
  const claude = chooseQuirks({ name: '@agentclientprotocol/claude-agent-acp', version: '0.101.0' });
  const zedClaude = chooseQuirks({ name: '@zed-industries/claude-code-acp', version: '0.5.0' });
  const codex = chooseQuirks({ name: '@agentclientprotocol/codex-acp', version: '2.6.0' });
  const gemini = chooseQuirks({ name: 'gemini-cli', version: '0.61.0' });
  const other = chooseQuirks({ name: 'some-agent', version: '1.0.0' });

  it('by agentInfo name: Claude (current and earlier name), Codex, Gemini, else the plain reading', () => {
    assert.deepEqual(
      [claude, zedClaude, codex, gemini, other, chooseQuirks(undefined)].map((quirks) => quirks.name),
      ["Claude's adapter", "Claude's adapter", "Codex's adapter", 'Gemini CLI', 'plain ACP', 'plain ACP'],
    );
    assert.equal(other, PLAIN_ACP);
  });

  it('Approve and Reject: Claude by its own option ids, Gemini approves with its plain Allow and sets the mode after the exit tool, others by name', () => {
    assert.deepEqual(claude.approval('C', CLAUDE_EXIT_OPTIONS, 'acceptEdits'), {
      choice: { ok: true, option: CLAUDE_EXIT_OPTIONS[0] },
      thenMode: 'acceptEdits',
    });
    assert.deepEqual(claude.rejectOption('C', CLAUDE_EXIT_OPTIONS), { ok: true, option: CLAUDE_EXIT_OPTIONS[4] });
    const geminiApproval = gemini.approval('G', GEMINI_OPTIONS, 'acceptEdits');
    assert.deepEqual(geminiApproval, { choice: { ok: true, option: GEMINI_OPTIONS[0] }, modeAfterExitTool: 'autoEdit' });
    assert.deepEqual(other.approval('X', ALLOW_OR_REJECT, 'default').choice, { ok: true, option: ALLOW_OR_REJECT[0] });
    assert.deepEqual(other.rejectOption('X', ALLOW_OR_REJECT), { ok: true, option: ALLOW_OR_REJECT[1] });
  });

  it("only Codex authenticates, holds a read-only preset while planning and hands an approved plan over; only Claude's adapter takes notes into the running turn", () => {
    assert.deepEqual(
      [claude, codex, gemini, other].map((quirks) => [
        quirks.authentication !== undefined,
        quirks.planningPreset?.modeId,
        quirks.presetHandover !== undefined,
        quirks.joinsTurnAfterApproval,
        quirks.readsMissingAsEmptyOnceApproved,
      ]),
      [
        [false, undefined, false, true, false],
        [true, 'read-only', true, false, false],
        [false, undefined, false, false, true],
        [false, undefined, false, false, false],
      ],
    );
    assert.match(CODEX_QUIRKS.planningPreset?.missing('Codex (ACP)', ['agent']) ?? '', /offers no "read-only" preset \(it offers agent\)/);
    assert.equal(CODEX_QUIRKS.presetHandover?.implementPrompt(undefined), 'Implement the approved plan.');
    assert.match(
      CODEX_QUIRKS.presetHandover?.implementPrompt('# Edited') ?? '',
      /edited it before approving; follow this version:\n\n# Edited$/,
    );
  });

  it("reads each agent's own signals, and nothing in another agent's updates", () => {
    const status = { sessionUpdate: 'session_info_update', _meta: { codex: { error: { message: 'Reconnecting...' } } } };
    const emptyStatus = { sessionUpdate: 'session_info_update', _meta: { codex: { error: { message: '' } } } };
    const modeText = { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '[MODE_UPDATE] plan' } };
    const notice = {
      sessionUpdate: 'agent_message_chunk',
      content: { type: 'text', text: 'Auto mode notice' },
      _meta: { claudeCode: { kind: 'informational' } },
    };
    assert.deepEqual(codex.readUpdate(status), { kind: 'status', text: 'Reconnecting...' });
    assert.equal(codex.readUpdate(emptyStatus), undefined);
    assert.deepEqual(gemini.readUpdate(modeText), { kind: 'mode', mode: 'plan' });
    assert.deepEqual(claude.readUpdate(notice), { kind: 'notice', text: 'Auto mode notice' });
    for (const update of [status, modeText, notice]) assert.equal(other.readUpdate(update), undefined);
    assert.equal(claude.readUpdate(modeText), undefined, "Claude's words are never taken for a mode");
    assert.match(gemini.modeSwitchHint('Cannot switch: folder is untrusted') ?? '', /trust this folder in Gemini CLI/);
    assert.equal(other.modeSwitchHint('Cannot switch: folder is untrusted'), undefined);
  });

  it("Gemini's exit request is recognised by its own shape, with the plan file it names; no other agent's is", () => {
    const exit = { toolCallId: 'exit_plan_mode__1', title: 'Requesting plan approval for: /tmp/plans/p.md' };
    assert.deepEqual(gemini.ownPlanExit(exit), { planFile: '/tmp/plans/p.md' });
    assert.equal(gemini.ownPlanExit({ toolCallId: 'edit-1', title: 'Edit src/app.ts' }), undefined);
    assert.equal(claude.ownPlanExit(exit), undefined);
  });
});

describe("Claude's adapter: today's exit-plan options", () => {
  it('recognises the adapter by agentInfo', () => {
    assert.equal(chooseQuirks({ name: '@agentclientprotocol/claude-agent-acp', version: '0.101.0' }), CLAUDE_QUIRKS);
    assert.equal(chooseQuirks({ name: '@zed-industries/claude-code-acp', version: '0.5.0' }), CLAUDE_QUIRKS);
    assert.notEqual(chooseQuirks({ name: 'gemini-cli', version: '0.61.0' }), CLAUDE_QUIRKS);
    assert.notEqual(chooseQuirks(undefined), CLAUDE_QUIRKS);
  });

  it('default: exit-plan-default; acceptEdits: exit-plan-default then the acceptEdits mode; bypass only when chosen; never auto or clear-context', () => {
    assert.deepEqual(claudeApproval(CLAUDE_EXIT_OPTIONS, 'default'), { option: CLAUDE_EXIT_OPTIONS[0] });
    assert.deepEqual(claudeApproval(CLAUDE_EXIT_OPTIONS, 'acceptEdits'), { option: CLAUDE_EXIT_OPTIONS[0], thenMode: 'acceptEdits' });
    assert.deepEqual(claudeApproval(CLAUDE_EXIT_OPTIONS, 'bypassPermissions'), { option: CLAUDE_EXIT_OPTIONS[3] });
    assert.equal(claudeApproval(CLAUDE_EXIT_OPTIONS.slice(1), 'default'), undefined, 'other ids: the generic choice applies');
    assert.equal(claudeRejectOption(CLAUDE_EXIT_OPTIONS)?.optionId, 'reject');
  });

  it("reads Claude Code's own notices apart from the model's text", () => {
    const notice = {
      sessionUpdate: 'agent_message_chunk',
      content: { type: 'text', text: "**Warning:** We're changing auto mode…" },
      _meta: { claudeCode: { kind: 'informational', level: 'warning' } },
    };
    assert.equal(claudeNotice(notice), "**Warning:** We're changing auto mode…");
    assert.equal(
      claudeNotice({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Planning.' }, messageId: 'm1' }),
      undefined,
    );
  });
});

describe('Gemini CLI: exit request, plan file, mode signals', () => {
  it('recognises its exit request (id prefix or title), which the generic reading would refuse as a write', () => {
    assert.equal(chooseQuirks({ name: 'gemini-cli', version: '0.61.0' }), GEMINI_QUIRKS);
    assert.equal(isGeminiPlanExit(GEMINI_EXIT), true);
    assert.equal(isGeminiPlanExit({ ...GEMINI_EXIT, toolCallId: 'x' }), true);
    assert.equal(isGeminiPlanExit({ toolCallId: 'write_file__write_file_1_0', title: 'Writing to src/app.ts' }), false);
    assert.equal(isPlanExitRequest({ toolCall: GEMINI_EXIT, options: GEMINI_OPTIONS }), false);
    assert.equal(geminiPlanPath(GEMINI_EXIT), '/home/me/.gemini/tmp/ws1/19355368-df11-496f-b358-18de61270f76/plans/plan.md');
  });

  it('reads `[MODE_UPDATE] <mode>` as a mode, and nothing else', () => {
    assert.equal(geminiModeUpdate({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '[MODE_UPDATE] plan' } }), 'plan');
    assert.equal(
      geminiModeUpdate({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'I am in [MODE_UPDATE] plan' } }),
      undefined,
    );
    assert.equal(
      geminiModeUpdate({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: '[MODE_UPDATE] yolo' } }),
      undefined,
    );
  });

  it('after approval: nothing to set for default (it switches itself), autoEdit for acceptEdits, yolo only for bypass', () => {
    assert.equal(geminiModeAfterApproval('default'), undefined);
    assert.equal(geminiModeAfterApproval('acceptEdits'), 'autoEdit');
    assert.equal(geminiModeAfterApproval('bypassPermissions'), 'yolo');
  });
});

describe('Gemini-shaped exit requests through the real client (the fake agent program speaking as gemini-cli)', function () {
  this.timeout(20_000);

  async function planShown(home: string, planPath: string, write?: { file: string; text: string }): Promise<string> {
    const run = await fakeRun({
      agentInfo: { name: 'gemini-cli', version: '0.61.0' },
      modes: DEFAULT_AND_PLAN_MODES,
      turns: [
        [
          {
            permission: {
              toolCall: {
                toolCallId: 'exit_plan_mode__exit_plan_mode_1_0',
                kind: 'other',
                status: 'pending',
                title: `Requesting plan approval for: ${planPath}`,
                content: [],
                locations: [],
              },
              options: GEMINI_OPTIONS,
            },
          },
        ],
      ],
    });
    const ctx = new RecordingContext();
    // The agent's home decides where its own plans folder is.
    const agent = new AcpAgent({ argv: run.argv, cwd: run.workspace, env: { HOME: home }, label: 'Gemini CLI (ACP)', stopGraceMs: 500 });
    try {
      if (write) {
        await mkdir(path.dirname(write.file), { recursive: true });
        await writeFile(write.file, write.text);
      }
      await agent.start(ctx, 'Plan it');
      const request = await ctx.waitForPlanRequest();
      return request.plan;
    } finally {
      await agent.stop();
      await run.cleanup();
    }
  }

  it('with no edit seen, reads exactly the plan file the request names (a Gemini plan file outside the workspace)', async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'ultraplan-gemini-home-'));
    const file = path.join(home, '.gemini', 'tmp', 'ws', 'abc', 'plans', 'plan.md');
    try {
      assert.equal(await planShown(home, file, { file, text: '# From the file\n' }), '# From the file\n');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it("does not read a named file outside the workspace that is not in Gemini's plans folder; says so instead", async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'ultraplan-gemini-home-'));
    const file = path.join(home, '.ssh', 'id_rsa.md');
    try {
      const plan = await planShown(home, file, { file, text: 'SECRET' });
      assert.ok(!plan.includes('SECRET'));
      assert.match(plan, /Ultraplan did not read it: it is not a plan file this session wrote or one in the agent's own plans folder/);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

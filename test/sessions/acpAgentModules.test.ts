// What Ultraplan reads from Claude's adapter and Gemini CLI, as the real agents send it (the
// shapes below are copied from their messages; the end-to-end runs are acpRealClaude/acpRealGemini).
import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { claudeApproval, claudeNotice, claudeRejectOption, isClaudeAdapter } from '../../src/sessions/acp/agents/claude';
import {
  geminiModeAfterApproval,
  geminiModeUpdate,
  geminiPlanPath,
  isGemini,
  isGeminiPlanExit,
} from '../../src/sessions/acp/agents/gemini';
import { AcpAgent } from '../../src/sessions/acp/acpAgent';
import { isPlanExitRequest } from '../../src/sessions/acp/planReview';
import { fakeRun } from '../support/fakeAcpAgent';
import { RecordingContext } from '../support/recordingAgentContext';
import { DEFAULT_AND_PLAN_MODES, GEMINI_OPTIONS, CLAUDE_EXIT_OPTIONS } from '../support/acpFixtures';

const GEMINI_EXIT = {
  toolCallId: 'exit_plan_mode__exit_plan_mode_1796041541078_0',
  kind: 'other' as const,
  status: 'pending' as const,
  title: 'Requesting plan approval for: /home/me/.gemini/tmp/ws1/19355368-df11-496f-b358-18de61270f76/plans/plan.md',
  content: [],
  locations: [],
};

describe("Claude's adapter: today's exit-plan options", () => {
  it('recognises the adapter by agentInfo', () => {
    assert.equal(isClaudeAdapter({ name: '@agentclientprotocol/claude-agent-acp', version: '0.101.0' }), true);
    assert.equal(isClaudeAdapter({ name: 'gemini-cli', version: '0.61.0' }), false);
    assert.equal(isClaudeAdapter(undefined), false);
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
    assert.equal(isGemini({ name: 'gemini-cli', version: '0.61.0' }), true);
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

// The plan of an exit request that came without one (Claude's adapter asks its permission from one
// path and streams the tool call's input from another): waited for, in time this process ran, so
// a stalled process on a loaded machine does not turn a plan into "no plan".
import { strict as assert } from 'node:assert';
import type { ToolCallUpdate } from '@agentclientprotocol/sdk';
import { PlanTexts, type PlanTextHost } from '../../../src/agents/acp/planText';
import { PLAIN_ACP } from '../../../src/agents/quirks/agentQuirks';
import type { RememberedToolCall } from '../../../src/agents/acp/eventTranslator';

const PLAN = '# Flip the flag\n\n1. Set original to false.\n2. Run the tests.\n';
const EXIT: ToolCallUpdate = { toolCallId: 'toolu_exit', title: 'Ready to code?', rawInput: {} };

const PLAN_FILE = '/home/person/.claude/plans/flip-the-flag-cosmic-wren.md';

/** PlanTexts over a translator whose remembered tool call the test sets, as the agent's update would. */
function planTexts(options: { waitMs?: number; lastWords?: string } = {}) {
  const calls = new Map<string, RememberedToolCall>();
  const logged: string[] = [];
  const host: PlanTextHost = {
    label: 'Claude (ACP)',
    workspace: '/work/space',
    // The plan file the agent wrote (the policy's own checks are tested with AgentFileAccess).
    files: {
      namedPlan: (file) =>
        Promise.resolve(file === PLAN_FILE ? { ok: true, value: PLAN } : { ok: false, refused: true, message: 'not a plan file' }),
    },
    translator: {
      lastAssistantText: options.lastWords ?? '',
      latestPlanToolCall: () => undefined,
      toolCall: (id) => calls.get(id),
    },
    quirks: PLAIN_ACP,
    live: true,
    ...(options.waitMs !== undefined ? { announcedInputWaitMs: options.waitMs } : {}),
    log: (line) => logged.push(line),
  };
  const announce = (rawInput: unknown) =>
    calls.set(EXIT.toolCallId, { toolCallId: EXIT.toolCallId, title: 'ExitPlanMode', kind: 'switch_mode', rawInput, resultEmitted: false });
  const texts = new PlanTexts(host);
  /** A tool call update as the session sees it: the translator remembers the call's kind from its first report. */
  const seen = (call: ToolCallUpdate) => {
    const known = calls.get(call.toolCallId);
    calls.set(call.toolCallId, {
      toolCallId: call.toolCallId,
      title: call.title ?? known?.title ?? '',
      kind: call.kind ?? known?.kind,
      rawInput: call.rawInput ?? known?.rawInput,
      resultEmitted: false,
    });
    texts.toolCallSeen(call);
  };
  return { texts, announce, seen, logged };
}

/** Keeps this process busy, as a loaded machine that does not schedule it would. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

describe('the plan of an exit request that came without one', () => {
  it('is the update the agent sent while this process stalled past the wait, not "no plan"', async () => {
    const { texts, announce } = planTexts({ waitMs: 1_000, lastWords: 'I will now leave plan mode.' });
    const plan = texts.ofExitRequest(EXIT);
    // The stall (in the loop's check phase) ends with the wait's next pause overdue: its timer runs
    // first in the next turn, and only then is the update read, as input from the agent's pipe is
    // (an immediate queued during the check phase runs in the next turn's).
    setTimeout(() => {
      setImmediate(() => {
        stall(1_500);
        setImmediate(() => announce({ plan: PLAN }));
      });
    }, 30);
    assert.equal(await plan, PLAN);
  });

  it('is the update that comes a while after the request', async () => {
    const { texts, announce } = planTexts({ waitMs: 2_000 });
    const plan = texts.ofExitRequest(EXIT);
    setTimeout(() => announce({ plan: PLAN }), 400);
    assert.equal(await plan, PLAN);
  });

  it('is the plan file the agent wrote while planning, at once (where Claude Code takes the plan from)', async function () {
    // Waiting for an update first would outlast this test: the bound is an hour.
    this.timeout(5_000);
    const { texts, seen, logged } = planTexts({ waitMs: 3_600_000, lastWords: 'I will now leave plan mode.' });
    // As Claude's adapter reports its Write: the tool call (kind edit), then updates without a kind.
    seen({ toolCallId: 'toolu_read', kind: 'read', title: 'Read', rawInput: { file_path: '/home/person/.claude/plans/old.md' } });
    seen({ toolCallId: 'toolu_write', kind: 'edit', title: 'Write', rawInput: {} });
    seen({ toolCallId: 'toolu_write', rawInput: { file_path: PLAN_FILE, content: PLAN }, locations: [{ path: PLAN_FILE }] });
    seen({ toolCallId: 'toolu_write', status: 'completed' });
    assert.equal(await texts.ofExitRequest(EXIT), PLAN);
    assert.ok(
      logged.some((line) => line.includes(`taking the plan file ${PLAN_FILE}`)),
      logged.join('\n'),
    );
  });

  it('a file the agent only read in a plans folder is not its plan', async () => {
    const { texts, seen } = planTexts({ waitMs: 100, lastWords: 'Plan: flip the flag.' });
    seen({ toolCallId: 'toolu_read', kind: 'read', title: 'Read', rawInput: { file_path: PLAN_FILE } });
    assert.equal(await texts.ofExitRequest(EXIT), 'Plan: flip the flag.');
  });

  it("falls back to the agent's last words once the wait is over, and says so in the log", async () => {
    const { texts, logged } = planTexts({ waitMs: 300, lastWords: 'Plan: flip the flag, then run the tests.' });
    const started = Date.now();
    assert.equal(await texts.ofExitRequest(EXIT), 'Plan: flip the flag, then run the tests.');
    assert.ok(Date.now() - started >= 300, 'it waited its bound first');
    assert.ok(
      logged.some((line) => line.includes('the exit-plan request toolu_exit carries no plan')),
      logged.join('\n'),
    );
  });
});

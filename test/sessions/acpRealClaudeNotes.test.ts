// Approve with notes through Claude's real ACP adapter (@agentclientprotocol/claude-agent-acp
// 0.101.0): the followed session (the real SessionController) on the real SessionHost and
// EmbeddedBackend, only the model scripted. The model's request log is the agent's record: it must
// show the ExitPlanMode approval as a tool_result, and then the notes as a user message.
import { strict as assert } from 'node:assert';
import { notesPrompt } from '../../src/core/approvalNotes';
import { bindingFor } from '../../src/core/decision';
import { SessionController } from '../../src/extension/sessions/sessionController';
import type { SessionNotifier } from '../../src/extension/sessions/sessionNotifier';
import { anthropicApi } from '../support/modelApi/anthropic';
import { CLAUDE_ADAPTER, claudeEnv } from '../support/realAgents';
import { RealAgentRun, createRequest, until } from './realAgentKit';

const PLAN = '# Plan: flip the flag\n\n1. Set `original` to false in src/app.ts.\n';
const NOTES = 'Keep `original` exported under the same name.';
const quietLog = { trace() {}, info() {}, warn() {}, error() {}, show() {} };
const notifier: SessionNotifier = {
  say() {},
  showReview() {},
  openExternal() {},
  isReviewShowing: () => true,
  askPermission: async () => {},
};

describe('approve with notes through the real Claude ACP adapter, with only the model scripted', function () {
  this.timeout(120_000);
  let run: RealAgentRun;
  let controller: SessionController | undefined;

  beforeEach(() => {
    run = new RealAgentRun();
  });
  afterEach(async () => {
    controller?.dispose();
    await controller?.settled();
    controller = undefined;
    await run.close();
  });

  it('the model is sent the ExitPlanMode approval, then (after the approved turn ends, nothing cancelled) the notes as the next prompt', async () => {
    await run.open({
      family: anthropicApi,
      argv: [CLAUDE_ADAPTER],
      label: 'Claude (ACP)',
      env: claudeEnv,
      rounds: [
        () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
        () => ({ toolCalls: [{ name: 'ExitPlanMode', input: { plan: PLAN } }] }),
        () => ({ text: 'Executed the approved plan.' }),
        (view) => ({ text: view.lastUser.text.includes(NOTES) ? 'Noted: the name stays.' : 'No notes reached me.' }),
      ],
    });
    const session = await run.backend.createSession(createRequest('Flip the flag in src/app.ts'));
    controller = new SessionController({
      backend: run.backend,
      log: quietLog,
      notifier,
      pollIntervalMs: 50,
      timeoutMs: 90_000,
      onDidChange: () => undefined,
      fresh: { key: `embedded:${session.id}`, sessionId: session.id, title: 'flag', demo: false },
    });
    const c = controller;
    c.start();
    await until(() => (c.canDecide ? true : undefined), 90_000, 'the plan to decide');
    assert.equal(c.pendingPlan?.plan, PLAN);
    assert.deepEqual(await c.approveWithNotes(bindingFor(session.id, c.pendingPlan!.toolUseId, PLAN), NOTES), { sent: true });

    const notesRound = await run.model.waitFor(
      () => run.model.rounds.find((r) => r.view?.lastUser.text.includes(NOTES)),
      60_000,
      'a model request carrying the notes',
    );
    // The approval reached the model as ExitPlanMode's tool_result, not an error, in an earlier request.
    const approvalRound = run.model.rounds.find((r) =>
      r.view?.lastUser.toolResults.some((t) => t.name === 'ExitPlanMode' && !t.isError),
    );
    assert.ok(approvalRound, `no ExitPlanMode approval in the model's log: ${run.model.describe()}`);
    assert.ok((approvalRound.round ?? 0) < (notesRound.round ?? 0), 'the approval first, then the notes');
    // The notes came as their own user message, saying what they are.
    assert.match(notesRound.view?.lastUser.text ?? '', /Notes from the reviewer on the approved plan/);
    assert.deepEqual(notesRound.view?.lastUser.toolResults, []);

    // In the session's record: the approval, then the notes message; both turns ended normally.
    const events = run.events(session.id);
    const decisionAt = events.findIndex((e) => e.type === 'control_response');
    const notesAt = events.findIndex(
      (e) => e.type === 'user' && (e as { message?: { content?: unknown } }).message?.content === notesPrompt(NOTES),
    );
    assert.ok(decisionAt >= 0 && notesAt > decisionAt, 'control_response, then the notes as a user message');
    const results = await run.model.waitFor(
      () => {
        const ended = run.events(session.id).filter((e) => e.type === 'result');
        return ended.length >= 2 ? ended : undefined;
      },
      30_000,
      'the notes turn to end',
    );
    assert.deepEqual(
      results.map((r) => [(r as { stop_reason?: string }).stop_reason, (r as { result?: string }).result]),
      [
        ['end_turn', 'Executed the approved plan.'],
        ['end_turn', 'Noted: the name stays.'],
      ],
    );
    const revision = c.panelState().revisions[0];
    assert.equal(revision?.notes, NOTES);
    assert.equal(revision?.status, 'approved');
    assert.deepEqual(run.model.scenario.overruns, []);
  });
});
